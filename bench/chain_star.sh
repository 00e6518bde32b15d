#!/usr/bin/env bash
# --also's chain over equal links (issue 25: "three replicas on links of
# equal rate take at most 1.2x one copy's wall time, and the source's link
# carries 1.0x the data").  A star of emulated links around a hub c (the
# router, ip_forward on): this host a (the source) and the three targets
# b, d and e each hang off c on a wanem link of the same PROFILE (default
# rate=100m,delay=5ms: at 200m the wanems and three hops at once keep a
# 2-core machine busy, hops3 below shows it): links ca and cb are netns.sh's star, cd and ce are
# started here the same way (wan.sh's wanem options and TCP settings).
# So the source's link a<->c is as fast as each target's, and a hop from
# target k to target k+1 crosses k's link and k+1's (through c), never a's.
# sshd in b, d and e (the test fixture: SetEnv SHLVL=1).
#
# The data is a tree (seeding backups): -f big random files totalling
# -s MiB plus -k small ones (16 KiB each) in 8 directories, made once on
# tmpfs (-t DIR, default /dev/shm), before the timed part.  With -1 it is
# one file of -s MiB instead, copied without -r to each target's
# directory (TB/ and so on): the chain then forwards the file as each
# target writes it (its part file), not file after file.  Each round
# (-n R, default 5) runs every case once, in an order that rotates each
# round; before each case the targets are removed and made again, no agent
# is left, and `sync` runs (untimed):
#   one      lanecp -r TREE b:TB/
#   chain3   lanecp -r TREE b:TB/ --also d:TD/ --also e:TE/
#   direct3  the same with --also-direct (every target from a)
#   rsync3   rsync -a over ssh -c aes128-gcm@openssh.com, to b, d, e
#            one after the other (what the issue compares with)
#   hops3    the chain's three hops as three independent copies at once:
#            lanecp -r TREE b:TB/ in a, TREE d:TD/ in b, TREE e:TE/ in d
#            (every namespace sees the same files): the load of an
#            overlapped chain, so the floor it can reach on this machine
#            (if it is well above one, the machine, not the links, limits)
# After each case every target must hold exactly the tree (diff -r), else
# the script fails.  Reported per case: the median wall time with
# min-max, the median over rounds of the ratio to `one` of the same round,
# the bytes each spoke sent towards the hub during the case (wanem's
# out_bytes of direction b>a of links ca, cb, cd, ce, read before and
# after: IP packets, so TCP/IP and TLS framing included) as a multiple of
# the tree's bytes, and the machine's busy % (/proc/stat, all CPUs; near
# 100 % means CPU-bound, not link-bound; other users' work counts too)
# and steal % (a VM's CPUs given by the hypervisor to others).  The table
# and every run go to stdout and to bench/results/chainstar-STAMP.txt
# (-o FILE).
#
#   sudo bench/chain_star.sh [-1] [-n R] [-s MiB] [-f FILES] [-k SMALL]
#       [-p PROFILE] [-c 'one chain3 direct3 rsync3 hops3'] [-t DIR] [-o FILE]
#
# Needs what tests/integration/netns.sh needs (root, /dev/net/tun, ip,
# sshd, a wanem: LC_WANEM, default build-bench/bench/wanem or
# b/bench/wanem) and rsync.  LANECP: build-bench/cmd/lanecp, else
# b/cmd/lanecp.  The namespaces are netns.sh's (lct<pid>x<n>-{a,b,c,d},
# plus -e here), so they collide with no test nor wan.sh; all of it is
# removed on exit.  Rounds run under /tmp/lanecp-bench.lock.
set -euo pipefail
LC_SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
export LC_SRC_DIR
RUNS=5 MIB=512 FILES=64 SMALL=300 PROFILE=rate=100m,delay=5ms
CASES="one chain3 direct3 rsync3 hops3" TMP=/dev/shm OUT= ONE=0
usage() {
	echo "usage: $0 [-n runs] [-s MiB] [-f files] [-k small files]" \
	    "[-p rate=R,delay=D[,loss=L][,queue=Q][,mtu=M]] [-c cases]" \
	    "[-t tmpdir] [-o results file]" >&2
	exit 2
}
while getopts 1n:s:f:k:p:c:t:o: o; do
	case $o in
	1) ONE=1 ;;
	n) RUNS=$OPTARG ;;
	s) MIB=$OPTARG ;;
	f) FILES=$OPTARG ;;
	k) SMALL=$OPTARG ;;
	p) PROFILE=$OPTARG ;;
	c) CASES=$OPTARG ;;
	t) TMP=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
for v in "$RUNS" "$MIB" "$FILES" "$SMALL"; do
	[[ $v =~ ^[0-9]+$ ]] || usage
done
((RUNS > 0 && FILES > 0)) || usage
read -r -a tools <<<"$CASES"
for t in "${tools[@]}"; do
	case $t in one | chain3 | direct3 | rsync3 | hops3) ;; *) usage ;; esac
done
[[ " $CASES " == *" one "* ]] || { echo "$0: -c must include one" >&2; exit 2; }

# The profile, parsed as bench/wan.sh does (wanem checks the values), for
# the links started here; netns.sh starts ca and cb from the same string.
RATE='' DELAY=0ms LOSS=0 QUEUE='' MTU=1500
IFS=, read -r -a kvs <<<"$PROFILE"
for kv in "${kvs[@]}"; do
	k=${kv%%=*} v=${kv#*=}
	case $k in
	rate) RATE=$v ;; delay) DELAY=$v ;; loss) LOSS=$v ;;
	queue) QUEUE=$v ;; mtu) MTU=$v ;;
	*) echo "$0: profile: '$kv' (rate=R,delay=D[,loss=L][,queue=Q][,mtu=M])" >&2
	   exit 2 ;;
	esac
done
[[ -n $RATE ]] || { echo "$0: profile without rate=" >&2; exit 2; }

. "$LC_SRC_DIR/bench/lib.sh"
lc_bench_lanecp
lc_bench_find LC_WANEM bench/wanem
export LC_WANEM
command -v rsync >/dev/null || { echo "$0: no rsync (scripts/deps.sh bench)" >&2; exit 1; }
TMPDIR=$TMP
export TMPDIR
. "$LC_SRC_DIR/tests/integration/lib.sh"
. "$LC_SRC_DIR/tests/integration/netns.sh"
lc_netns_need
stamp=$(date -u +%Y%m%d-%H%M%S)
[[ -n $OUT ]] || OUT=$LC_SRC_DIR/bench/results/chainstar-$stamp.txt
mkdir -p "$(dirname "$OUT")"
: >"$OUT"
say() { printf '%s\n' "$*" | tee -a "$OUT"; }

lc_netns_up star "$PROFILE"
nsc=$(lc_netns_name c)
nse=$LC_NS_PFX-e

# spoke X N: namespace for X (d or e), its wanem link cX to the hub
# (c: 10.77.N.1 on lccX, X: 10.77.N.2 on lcwX), wan.sh's TCP settings.
spoke() {
	local x=$1 n=$2 ns pidf log i kv
	ns=$LC_NS_PFX-$x
	ip netns add "$ns" || lc_fail "ip netns add $ns"
	lc_on_exit "ip netns del '$ns'"
	ip -n "$ns" link set lo up
	for kv in net.ipv6.conf.default.router_solicitations=0 \
	    net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.default.accept_ra=0; do
		ip netns exec "$ns" sysctl -qw "$kv" >/dev/null
	done
	pidf=$LC_NS_DIR/wan/wanem-c$x.pid log=$LC_NS_DIR/wan/wanem-c$x.log
	: >"$log"
	setsid "$LC_WANEM" --dev-a "lcc$x" --dev-b "lcw$x" --netns-a "$nsc" \
	    --netns-b "$ns" --rate "$RATE" --delay "$DELAY" --loss "$LOSS" \
	    ${QUEUE:+--queue "$QUEUE"} --mtu "$MTU" --pidfile "$pidf" \
	    </dev/null >>"$log" 2>&1 &
	# before the namespaces go (exit commands run last first)
	lc_on_exit "kill -TERM \$(cat '$pidf'); sleep 0.3"
	for ((i = 0; i < 100; i++)); do
		[[ -s $pidf ]] && break
		sleep 0.05
	done
	[[ -s $pidf ]] || { cat "$log" >&2; lc_fail "wanem c$x did not start"; }
	ip -n "$nsc" link set "lcc$x" mtu "$MTU" up
	ip -n "$nsc" addr replace "10.77.$n.1/24" dev "lcc$x"
	ip -n "$ns" link set "lcw$x" mtu "$MTU" up
	ip -n "$ns" addr replace "10.77.$n.2/24" dev "lcw$x"
	# bench/wan.sh's tune_ns
	for kv in "net.ipv4.tcp_rmem=4096 131072 67108864" \
	    "net.ipv4.tcp_wmem=4096 16384 67108864" \
	    net.core.rmem_max=67108864 net.core.wmem_max=67108864 \
	    net.ipv4.tcp_congestion_control=cubic \
	    net.ipv4.tcp_no_metrics_save=1; do
		# as wan.sh's nsctl: net.core.*mem_max may not be settable
		# per namespace (then a, b and c lack it too)
		ip netns exec "$ns" sysctl -qw "$kv" >/dev/null 2>&1 || true
	done
}
spoke d 3
spoke e 4
LC_NS_ADDR_d=10.77.3.2 LC_NS_ADDR6_d='' LC_NS_ADDR_e=10.77.4.2
export LC_NS_ADDR_d LC_NS_ADDR6_d
# c routes between its links; every spoke reaches the others through c
ip netns exec "$nsc" sysctl -qw net.ipv4.ip_forward=1 >/dev/null
for x in a:1 b:2 d:3 e:4; do
	ip -n "$LC_NS_PFX-${x%:*}" route replace 10.77.0.0/16 via "10.77.${x#*:}.1" ||
		lc_fail "route from ${x%:*} through c"
done

# sshd in b and d (netns.sh), in e the same way by hand (netns.sh knows
# only a-d by name)
lc_netns_sshd b
lc_netns_sshd d
LC_SSHD_ADDR=$LC_NS_ADDR_e LC_SSHD_ALSO='' LC_SSHD_NETNS=$nse \
    LC_SSHD_LISTEN_PORT=22 lc_sshd_start
LC_SSH_HOST=e LC_SSHD_ADDR=$LC_NS_ADDR_e lc_ssh_config "$LC_NS_DIR/ssh_config.e"
cat "$LC_NS_DIR/ssh_config.e" >>"$LC_NS_SSH_CONFIG"
cfg=$LC_NS_SSH_CONFIG
for x in "a $LC_NS_ADDR_b" "a $LC_NS_ADDR_d" "a $LC_NS_ADDR_e" \
    "b $LC_NS_ADDR_d" "d $LC_NS_ADDR_e"; do
	ip netns exec "$LC_NS_PFX-${x%% *}" bash -c 'exec 3<>"/dev/tcp/$0/22"' \
	    "${x#* }" 2>/dev/null || lc_fail "${x%% *} cannot reach ${x#* }:22"
done

# The tree: FILES random files of MIB/FILES MiB each (the remainder to
# the last), SMALL files of 16 KiB in 8 directories.
d=$LC_NS_DIR
src=$d/tree
R=(-r)
if ((ONE)); then
	# one file, no -r (the chain follows each target's part file)
	R=()
	head -c $((MIB << 20)) /dev/urandom >"$src"
else
	mkdir -p "$src/big"
	per=$(((MIB << 20) / FILES))
	for ((i = 0; i < FILES; i++)); do
		n=$per
		((i < FILES - 1)) || n=$(((MIB << 20) - per * (FILES - 1)))
		head -c "$n" /dev/urandom >"$src/big/f$i"
	done
	for ((i = 0; i < SMALL; i++)); do
		mkdir -p "$src/s$((i % 8))"
		head -c 16384 /dev/urandom >"$src/s$((i % 8))/f$i"
	done
fi
data=$(find "$src" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
nfiles=$(find "$src" -type f | wc -l)

# wanem counter: bytes sent by spoke X towards the hub (link cX, b>a)
out_bytes() { lc_netns_stat "c$1" 'b>a' out_bytes; }
# jiffies over all CPUs: busy (user, nice, system, irq, softirq), steal
# (the hypervisor ran someone else) and all (user..steal)
cpu() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9,
	$2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
run_lanecp() {
	local x=$1 err
	shift
	err=$d/lanecp-$x.err
	if ! ip netns exec "$LC_NS_PFX-$x" "$LANECP" -F "$cfg" -q "$@" 2>"$err"; then
		cat "$err" >&2
		lc_fail "lanecp $* (in $x) failed"
	fi
}
t_one() { run_lanecp a "${R[@]}" "$src" "b:$d/tb/"; }
t_chain3() {
	run_lanecp a "${R[@]}" "$src" "b:$d/tb/" --also "d:$d/td/" \
	    --also "e:$d/te/"
}
t_direct3() {
	run_lanecp a "${R[@]}" --also-direct "$src" "b:$d/tb/" \
	    --also "d:$d/td/" --also "e:$d/te/"
}
t_rsync3() {
	local x
	for x in b d e; do
		ip netns exec "$LC_NS_PFX-a" rsync -a \
		    -e "ssh -F $cfg -c aes128-gcm@openssh.com" "$src" "$x:$d/t$x/" ||
			lc_fail "rsync to $x failed"
	done
}
t_hops3() {
	local p1 p2 p3 rc=0
	run_lanecp a "${R[@]}" "$src" "b:$d/tb/" & p1=$!
	run_lanecp b "${R[@]}" "$src" "d:$d/td/" & p2=$!
	run_lanecp d "${R[@]}" "$src" "e:$d/te/" & p3=$!
	wait "$p1" || rc=1
	wait "$p2" || rc=1
	wait "$p3" || rc=1
	((rc == 0)) || lc_fail "hops3: a copy failed"
}
clean() {
	rm -rf "$d/tb" "$d/td" "$d/te"
	mkdir -p "$d/tb" "$d/td" "$d/te"
}
# timed CASE ROUND: one line "CASE ROUND seconds a b d e busy% steal%"
timed() {
	local c=$1 x t0 t1 c0 c1 targets=(tb td te)
	local -A b0 b1
	clean
	lc_netns_wait_no_agents 60
	sync
	for x in a b d e; do b0[$x]=$(out_bytes "$x"); done
	c0=$(cpu)
	t0=$(date +%s.%N)
	"t_$c"
	t1=$(date +%s.%N)
	c1=$(cpu)
	for x in a b d e; do b1[$x]=$(out_bytes "$x"); done
	# untimed: each target holds exactly the tree
	[[ $c == one ]] && targets=(tb)
	for x in "${targets[@]}"; do
		diff -r "$src" "$d/$x/tree" >"$d/diff" 2>&1 ||
			{ head -n 20 "$d/diff" >&2; lc_fail "$c, round $2: $d/$x/tree differs from the tree"; }
	done
	for x in tb td te; do
		[[ " ${targets[*]} " == *" $x "* ]] && continue
		[[ -z $(ls -A "$d/$x") ]] || lc_fail "$c: $x is not empty"
	done
	echo "$c $2 $(echo "$t1 - $t0" | bc -l) $((b1[a] - b0[a])) \
$((b1[b] - b0[b])) $((b1[d] - b0[d])) $((b1[e] - b0[e])) \
$(awk -v c0="$c0" -v c1="$c1" 'BEGIN { split(c0, x, " "); split(c1, y, " ");
	printf "%.0f %.0f", 100 * (y[1] - x[1]) / (y[3] - x[3]),
	    100 * (y[2] - x[2]) / (y[3] - x[3]) }')"
}

rows=$d/rows
: >"$rows"
rev=$(git -C "$LC_SRC_DIR" describe --always --dirty 2>/dev/null || echo '?')
say "# $0$( ((ONE)) && echo ' -1') -n $RUNS -s $MIB -f $FILES -k $SMALL -p $PROFILE -c '$CASES'"
say "# LANECP=$LANECP ($("$LANECP" --version 2>&1 | head -n 1)), tree at $rev," \
    "LC_WANEM=$LC_WANEM, $(nproc) CPUs, $(uname -r), $(date -u +%F)"
say "# star: a (source), b, d, e, each on its own wanem link to hub c," \
    "$PROFILE each; $( ((ONE)) && echo 'one file, no -r' || echo tree): $nfiles files, $data bytes, in $src"
exec 9>/tmp/lanecp-bench.lock
flock 9
say "lock taken $(date -u +%T)"
for ((r = 0; r < RUNS; r++)); do
	for ((i = 0; i < ${#tools[@]}; i++)); do
		timed "${tools[(i + r) % ${#tools[@]}]}" "$r" >>"$rows"
		tail -n 1 "$rows" >&2
	done
done
flock -u 9
say "lock released $(date -u +%T)"
say ""
say "| case | median s | min-max s | ÷ one (median of rounds) | a→hub ÷ data | ÷ one's a→hub | b→hub ÷ data | d→hub ÷ data | e→hub ÷ data | busy % | steal % |"
say "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk -v data="$data" -v order="${tools[*]}" '
function med(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ c = $1; n[c]++; k = n[c]; s[c, k] = $3; r[c, k] = $2
  ba[c, k] = $4; bb[c, k] = $5; bd[c, k] = $6; be[c, k] = $7; u[c, k] = $8; st[c, k] = $9
  if (c == "one") { one[$2] = $3; oa[++no] = $4 } }
END {
	onea = med(oa, no)
	nc = split(order, cs, " ")
	for (i = 1; i <= nc; i++) {
		c = cs[i]; m = n[c]
		for (k = 1; k <= m; k++) {
			t[k] = s[c, k]; q[k] = s[c, k] / one[r[c, k]]
			xa[k] = ba[c, k]; xb[k] = bb[c, k]; xd[k] = bd[c, k]
			xe[k] = be[c, k]; xu[k] = u[c, k]; xs[k] = st[c, k]
		}
		ms = med(t, m); mq = med(q, m); ma = med(xa, m)
		printf "| %s | %.2f | %.2f-%.2f | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f | %.0f |\n",
		    c, ms, t[1], t[m], mq, ma / data, ma / onea, med(xb, m) / data,
		    med(xd, m) / data, med(xe, m) / data, med(xu, m), med(xs, m)
	}
}' "$rows" | tee -a "$OUT"
say ""
say "every run (case, round, seconds, bytes a b d e sent towards the hub, busy %, steal %):"
tee -a "$OUT" <"$rows"
say ""
say "issue 25's goal: chain3 ≤ 1.20x one, a→hub ≈ one's (1.0x the data)"
echo "results: $OUT"
