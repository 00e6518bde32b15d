#!/usr/bin/env bash
# Fan-out (issue 25): one file to three targets over the
# throwaway sshd on 127.0.0.1 and a second sshd (two servers, as the
# integration test), targets on a tmpfs.  Each round (-n R, default 5)
# runs, in an order that rotates by one each round:
#   one     lanecp -f SRC host1:T1/                  (one target)
#   also3   lanecp -f SRC host1:T1/ --also host2:T2/ --also host1:T3/
#           (the chain: host1 -> T1, then T1 -> T2, T2 -> T3)
#   direct3 the same with --also-direct (stage 1: every target from here)
#   runs3   three lanecp runs, one per target, one after the other
#   rsync3  three rsync --whole-file runs (ssh -c aes128-gcm@openssh.com)
# with the targets removed before each (untimed).  Reported: the median
# wall time, min-max, and the ratio to "one" of the same rounds.  Stage
# 1 copies the targets one after the other, so also3 is expected near
# 3x one, and so is the chain over loopback (its hops run one after the
# other too); what the chain changes is the bytes this host sends, which
# an untimed pass after the rounds counts for also3 and direct3 (strace
# -f: write, writev, send, sendto, sendmsg of lanecp and its children).
#
#   bench/fanout.sh [-n R] [-s MiB]
#
# The source is made outside the lock (untimed, then read once so it is
# in the page cache); only the timed rounds take /tmp/lanecp-bench.lock.
# LANECP: the lanecp to measure (default build-bench/cmd/lanecp, then
# b/cmd/lanecp); LC_BENCH_TMP: where the source goes (default /var/tmp);
# the targets go to /dev/shm.
set -euo pipefail
LC_SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
export LC_SRC_DIR
RUNS=5 MIB=512
while getopts n:s: o; do
	case $o in
	n) RUNS=$OPTARG ;;
	s) MIB=$OPTARG ;;
	*) echo "usage: $0 [-n runs] [-s MiB]" >&2; exit 2 ;;
	esac
done
. "$LC_SRC_DIR/bench/lib.sh"
lc_bench_lanecp
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start
lc_sshd_extra two
echo "$LC_X_KNOWN" >"$LC_SSHD_DIR/two.known"
CFG=$LC_SSHD_DIR/ssh_config_two
{
	cat "$LC_SSH_CONFIG"
	lc_ssh_host_block two "$LC_X_PORT" "$LC_SSHD_DIR/two.known"
} >"$CFG"
H=$LC_SSH_HOST
S=$(mktemp -d "${LC_BENCH_TMP:-/var/tmp}/lc-fanout.XXXXXX")
D=$(mktemp -d /dev/shm/lc-fanout.XXXXXX)
lc_on_exit rm -rf "$S" "$D"

nice head -c $((MIB << 20)) /dev/urandom >"$S/src"
cat "$S/src" >/dev/null

clean() { rm -rf "$D/t1" "$D/t2" "$D/t3"; mkdir -p "$D/t1" "$D/t2" "$D/t3"; }
t_one() { "$LANECP" -F "$CFG" -q "$S/src" "$H:$D/t1/"; }
t_also3() {
	"$LANECP" -F "$CFG" -q "$S/src" "$H:$D/t1/" --also "two:$D/t2/" \
	    --also "$H:$D/t3/"
}
t_direct3() {
	"$LANECP" -F "$CFG" -q --also-direct "$S/src" "$H:$D/t1/" \
	    --also "two:$D/t2/" --also "$H:$D/t3/"
}
t_runs3() {
	"$LANECP" -F "$CFG" -q "$S/src" "$H:$D/t1/" &&
	    "$LANECP" -F "$CFG" -q "$S/src" "two:$D/t2/" &&
	    "$LANECP" -F "$CFG" -q "$S/src" "$H:$D/t3/"
}
t_rsync3() {
	local e="ssh -F $CFG -c aes128-gcm@openssh.com"
	rsync --whole-file -e "$e" "$S/src" "$H:$D/t1/" &&
	    rsync --whole-file -e "$e" "$S/src" "two:$D/t2/" &&
	    rsync --whole-file -e "$e" "$S/src" "$H:$D/t3/"
}
timed() {
	local t0 t1
	clean
	sync
	t0=$(date +%s.%N)
	"t_$1"
	t1=$(date +%s.%N)
	echo "$1 $(echo "$t1 - $t0" | bc -l)"
}

tools=(one also3 direct3 runs3 rsync3)
: >"$S/rows"
exec 9>/tmp/lanecp-bench.lock
flock 9
echo "lock taken $(date -u +%T)"
for ((r = 0; r < RUNS; r++)); do
	for ((i = 0; i < ${#tools[@]}; i++)); do
		timed "${tools[(i + r) % ${#tools[@]}]}" >>"$S/rows"
	done
done
flock -u 9
echo "lock released $(date -u +%T)"
for t in t1 t2 t3; do
	cmp -s "$S/src" "$D/$t/src" || lc_fail "$t differs from the source"
done
echo
echo "| case | median s | min-max s | ratio to one | runs |"
echo "|---|---:|---:|---:|---:|"
one=$(awk '$1 == "one" { print $2 }' "$S/rows" | sort -n |
    awk '{ s[NR] = $1 } END { print s[int((NR + 1) / 2)] }')
for t in "${tools[@]}"; do
	awk -v t="$t" '$1 == t { print $2 }' "$S/rows" | sort -n |
	    awk -v t="$t" -v one="$one" '{ s[NR] = $1 } END {
		m = int((NR + 1) / 2)
		printf "| %s | %.2f | %.2f-%.2f | %.2f | %d |\n", t, s[m], s[1],
		    s[NR], s[m] / one, NR }'
done
echo
echo "every run (case, seconds):"
cat "$S/rows"
# bytes this host wrote (untimed, under strace -f; the targets removed
# before each)
if command -v strace >/dev/null; then
	echo
	echo "bytes this host wrote (lanecp and its children), source $((MIB << 20)):"
	for t in one also3 direct3; do
		clean
		strace -f -qq -e signal=none -o "$S/strace" \
		    -e trace=write,writev,send,sendto,sendmsg \
		    bash -c "$(declare -f "t_$t"); $(declare -p LANECP CFG S H D); t_$t"
		b=$(grep -Eo '(write|writev|send|sendto|sendmsg)[( ].*\) += [0-9]+$' \
		    "$S/strace" | awk '{ n += $NF } END { print n }')
		printf '%s %s bytes, %.3fx the source\n' "$t" "$b" \
		    "$(echo "$b / ($MIB * 1048576)" | bc -l)"
	done
fi
