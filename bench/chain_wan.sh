#!/usr/bin/env bash
# --also over an emulated source link (issue 25): this host (namespace a)
# reaches the targets' host (namespace b) over one wanem link "ab"
# (PROFILE, default rate=100m,delay=10ms); the three targets are three
# directories on b (one sshd), so a chain hop (b to b) never crosses the
# emulated link, as targets on a fast LAN behind one slow uplink.  Each
# round (-n R, default 3) runs, in an order that rotates each round:
#   one      lanecp f b:T1/
#   chain3   lanecp f b:T1/ --also b:T2/ --also b:T3/
#   direct3  the same with --also-direct
# the targets removed before each (untimed).  Reported per case: the
# median wall time, min-max, and the bytes wanem moved a>b during the
# run (its out_bytes counter, read before and after).
#
#   sudo bench/chain_wan.sh [-n R] [-s MiB] [-p PROFILE]
#
# Needs what tests/integration/netns.sh needs (root, /dev/net/tun, ip,
# sshd, a wanem: LC_WANEM, default build-bench/bench/wanem or
# b/bench/wanem).  Rounds run under /tmp/lanecp-bench.lock.
set -euo pipefail
LC_SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
export LC_SRC_DIR
RUNS=3 MIB=64 PROFILE=rate=100m,delay=10ms
while getopts n:s:p: o; do
	case $o in
	n) RUNS=$OPTARG ;;
	s) MIB=$OPTARG ;;
	p) PROFILE=$OPTARG ;;
	*) echo "usage: $0 [-n runs] [-s MiB] [-p profile]" >&2; exit 2 ;;
	esac
done
. "$LC_SRC_DIR/bench/lib.sh"
lc_bench_lanecp
lc_bench_find LC_WANEM bench/wanem
export LC_WANEM
. "$LC_SRC_DIR/tests/integration/lib.sh"
. "$LC_SRC_DIR/tests/integration/netns.sh"
lc_netns_need
lc_netns_up pair "$PROFILE"
lc_netns_sshd b
d=$LC_NS_DIR
mkdir -p "$d/src"
nice head -c $((MIB << 20)) /dev/urandom >"$d/src/f"

clean() { rm -rf "$d/t1" "$d/t2" "$d/t3"; mkdir -p "$d/t1" "$d/t2" "$d/t3"; }
t_one() { lc_netns_lanecp a -q "$d/src/f" "b:$d/t1/"; }
t_chain3() {
	lc_netns_lanecp a -q "$d/src/f" "b:$d/t1/" --also "b:$d/t2/" \
	    --also "b:$d/t3/"
}
t_direct3() {
	lc_netns_lanecp a -q --also-direct "$d/src/f" "b:$d/t1/" \
	    --also "b:$d/t2/" --also "b:$d/t3/"
}
timed() {
	local t0 t1 b0 b1
	clean
	sync
	b0=$(lc_netns_stat ab 'a>b' out_bytes)
	t0=$(date +%s.%N)
	"t_$1"
	t1=$(date +%s.%N)
	b1=$(lc_netns_stat ab 'a>b' out_bytes)
	echo "$1 $(echo "$t1 - $t0" | bc -l) $((b1 - b0))"
	# untimed: what the case made equals the source
	for t in t1 t2 t3; do
		[[ $1 == one && $t != t1 ]] && continue
		cmp -s "$d/src/f" "$d/$t/f" || lc_fail "$1: $t differs from the source"
	done
}

tools=(one chain3 direct3)
rows=$d/rows
: >"$rows"
exec 9>/tmp/lanecp-bench.lock
flock 9
echo "lock taken $(date -u +%T), profile $PROFILE, $MIB MiB"
for ((r = 0; r < RUNS; r++)); do
	for ((i = 0; i < ${#tools[@]}; i++)); do
		timed "${tools[(i + r) % ${#tools[@]}]}" >>"$rows"
	done
done
flock -u 9
echo "lock released $(date -u +%T)"
echo
echo "| case | median s | min-max s | ratio to one | a>b bytes (median) | ÷ file |"
echo "|---|---:|---:|---:|---:|---:|"
one=$(awk '$1 == "one" { print $2 }' "$rows" | sort -n |
    awk '{ s[NR] = $1 } END { print s[int((NR + 1) / 2)] }')
for t in "${tools[@]}"; do
	by=$(awk -v t="$t" '$1 == t { print $3 }' "$rows" | sort -n |
	    awk '{ s[NR] = $1 } END { print s[int((NR + 1) / 2)] }')
	awk -v t="$t" '$1 == t { print $2 }' "$rows" | sort -n |
	    awk -v t="$t" -v one="$one" -v by="$by" -v f=$((MIB << 20)) '
		{ s[NR] = $1 } END {
		m = int((NR + 1) / 2)
		printf "| %s | %.2f | %.2f-%.2f | %.2f | %d | %.3f |\n", t,
		    s[m], s[1], s[NR], s[m] / one, by, by / f }'
done
echo
echo "every run (case, seconds, a>b bytes):"
cat "$rows"
