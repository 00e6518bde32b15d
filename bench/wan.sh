#!/bin/bash
# Emulated WAN between network namespaces, for lanecp benchmarks and tests.
#
#   bench/wan.sh up PROFILE      pair topology: create/refresh namespaces
#                                a and b, (re)start wanem between them
#   bench/wan.sh star PROFILE    star topology: namespaces a, b and c; c
#                                reaches a and b, a and b cannot reach
#                                each other
#   bench/wan.sh down            stop every wanem, delete the namespaces
#   bench/wan.sh cut [LINK]      cut a link (every packet lost, both ways)
#   bench/wan.sh restore [LINK]  restore it
#   bench/wan.sh status          profile, pids, addresses, live counters
#   bench/wan.sh profiles        list the profiles
#
# Pair (as bench/run.sh uses it), link "ab":
#   PREFIX-a 10.77.0.1/24 fd77::1/64 (TUN lcwa) <-> wanem <->
#   PREFIX-b 10.77.0.2/24 fd77::2/64 (TUN lcwb)
# Star, links "ca" and "cb", one wanem each, the same profile on both:
#   PREFIX-c 10.77.1.1/24 fd77:1::1/64 (TUN lcca) <-> PREFIX-a 10.77.1.2/24
#            fd77:1::2/64 (TUN lcwa)
#   PREFIX-c 10.77.2.1/24 fd77:2::1/64 (TUN lccb) <-> PREFIX-b 10.77.2.2/24
#            fd77:2::2/64 (TUN lcwb)
#   c does not forward (ip_forward 0) and a and b have only the route of
#   their own link, so a packet from a to b has nowhere to go (ENETUNREACH).
# wanem creates each TUN device directly inside its namespace (setns while
# opening /dev/net/tun); the devices vanish when wanem exits.  cut and
# restore signal the wanem of LINK (all links when none is named) and
# print wanem's line with the monotonic time of the change.
#
# PROFILE is a name from "wan.sh profiles" or a spec
# "rate=R,delay=D[,loss=L][,queue=Q][,mtu=M]" with wanem's units
# (rate=100m,delay=10ms; defaults: delay 0ms, loss 0, queue 1 BDP (at
# least 64 KiB), mtu 1500).
#
# Environment: WANEM=path to the wanem binary (default build/bench/wanem
# under the repository), WANEM_ARGS=extra wanem options (e.g. "--seed 7
# --tick 0"), WAN_FILTER_AB / WAN_FILTER_BA = wanem --filter-ab/--filter-ba
# SPEC for the pair link (a->b, b->a; see wanem --help), WAN_NS=namespace
# prefix (default lc-wan: lc-wan-a, lc-wan-b, lc-wan-c), WAN_STATE=state
# directory (default /run/lanecp-wan, or /run/lanecp-wan-$WAN_NS with
# WAN_NS set: pidfiles, wanem logs, profile), WAN_PROFILE_CA = another
# profile for the star's link ca (c <-> a; default: PROFILE, as cb), or
# "veth": a plain veth pair with PROFILE's MTU, no emulator on that link
# (so a relay in c pays no user-space hop on it; cut/restore/status then
# know only cb).  Needs root.
set -euo pipefail

PFX=${WAN_NS:-lc-wan}
NS_A=$PFX-a
NS_B=$PFX-b
NS_C=$PFX-c
DEV_A=lcwa
DEV_B=lcwb
ADDR_A=10.77.0.1
ADDR_B=10.77.0.2
PREFIX=24

here=$(cd "$(dirname "$0")" && pwd)
WANEM=${WANEM:-$here/../build/bench/wanem}
if [ -n "${WAN_NS:-}" ]; then
	STATE=${WAN_STATE:-/run/lanecp-wan-$WAN_NS}
else
	STATE=${WAN_STATE:-/run/lanecp-wan}
fi
PIDFILE=$STATE/wanem.pid
LOG=$STATE/wanem.log

die() { echo "wan.sh: $*" >&2; exit 1; }

# profile NAME: sets RATE DELAY LOSS QUEUE MTU CC or fails.
# Queues are about half a bandwidth-delay product: enough for one CUBIC
# flow (beta 0.7) to keep the link busy after a backoff, which needs
# (1 - 0.7) / 0.7 = 0.43 BDP, while queueing adds at most half an RTT.
profile() {
	case $1 in
	lfn1g)   RATE=1g;   DELAY=25ms; LOSS=0.001;  QUEUE=3m;    MTU=9000 ;;
	clean1g) RATE=1g;   DELAY=25ms; LOSS=0;      QUEUE=3m;    MTU=9000 ;;
	wan200m) RATE=200m; DELAY=50ms; LOSS=0.0005; QUEUE=1280k; MTU=1500 ;;
	*=*) profile_spec "$1" || return 1 ;;
	*) return 1 ;;
	esac
	CC=cubic
}

# "rate=R,delay=D[,loss=L][,queue=Q][,mtu=M]"; wanem checks the values.
profile_spec() {
	local kv k v
	RATE='' DELAY=0ms LOSS=0 QUEUE='' MTU=1500
	local IFS=,
	for kv in $1; do
		k=${kv%%=*} v=${kv#*=}
		[ -n "$v" ] && [ "$k" != "$kv" ] || return 1
		case $v in *[!0-9A-Za-z.%]*) return 1 ;; esac
		case $k in
		rate) RATE=$v ;; delay) DELAY=$v ;; loss) LOSS=$v ;;
		queue) QUEUE=$v ;; mtu) MTU=$v ;;
		*) return 1 ;;
		esac
	done
	[ -n "$RATE" ]
}

profiles() {
	echo "lfn1g    1 Gbit/s, 50 ms RTT, 0.1% loss, MTU 9000, queue 3 MiB"
	echo "clean1g  1 Gbit/s, 50 ms RTT, no loss,   MTU 9000, queue 3 MiB"
	echo "wan200m  200 Mbit/s, 100 ms RTT, 0.05% loss, MTU 1500, queue 1.25 MiB"
	echo "rate=R,delay=D[,loss=L][,queue=Q][,mtu=M]   any other (wanem units)"
}

# pidfile and log of link LINK: the pair link "ab" keeps the historical
# names wanem.pid / wanem.log.
link_pidfile() { if [ "$1" = ab ]; then echo "$PIDFILE"; else echo "$STATE/wanem-$1.pid"; fi; }
link_log() { if [ "$1" = ab ]; then echo "$LOG"; else echo "$STATE/wanem-$1.log"; fi; }

# The links of the running topology.
links() {
	case $(cat "$STATE/topology" 2>/dev/null || echo pair) in
	star) echo ca cb ;;
	star-veth) echo cb ;;
	*) echo ab ;;
	esac
}

wanem_pid() {
	local pid state pidfile
	pidfile=$(link_pidfile "${1:-ab}")
	[ -r "$pidfile" ] || return 1
	read -r pid <"$pidfile" || return 1
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	# Guard against pid reuse: it must still be a wanem, and alive (a
	# killed one can linger as a zombie until init reaps it).
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = wanem ] || return 1
	state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
	case $state in '' | Z | X) return 1 ;; esac
	echo "$pid"
}

# CPU seconds used by all wanem threads so far.  From schedstat (ns):
# the tick-based utime/stime of threads are unreliable on some VMs.
wanem_cpu() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
	    awk '{ ns += $1 } END { printf "%.2f", ns / 1e9 }'
}

# stop_wanem [LINK]
stop_wanem() {
	local link=${1:-ab} pid pidfile
	pidfile=$(link_pidfile "$link")
	pid=$(wanem_pid "$link") || { rm -f "$pidfile"; return 0; }
	kill -TERM "$pid"
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "wan.sh: wanem $pid ignored SIGTERM, killing" >&2
		kill -KILL "$pid"
	fi
	rm -f "$pidfile"
	# Final per-direction counters.
	grep ' a>b \| b>a ' "$(link_log "$link")" 2>/dev/null | tail -n 2 || true
}

stop_all() {
	local l
	for l in ab ca cb; do
		stop_wanem "$l"
	done
}

ns_exists() {
	ip netns list | grep -qx "$1\( (id: [0-9]*)\)\?"
}

ns_up() {
	local ns=$1
	ns_exists "$ns" || ip netns add "$ns"
	ip -n "$ns" link set lo up
	# IPv6 on the emulated links without router solicitations or DAD
	# (set before wanem creates the devices: they take the defaults).
	nsctl "$ns" net.ipv6.conf.default.router_solicitations 0
	nsctl "$ns" net.ipv6.conf.default.accept_dad 0
	nsctl "$ns" net.ipv6.conf.default.accept_ra 0
}

# sysctl in namespace ns, verified by reading it back (procps sysctl exits
# 0 on some write errors); keys not writable per namespace are reported.
nsctl() {
	local ns=$1 key=$2 val=$3 got
	ip netns exec "$ns" sysctl -qw "$key=$val" >/dev/null 2>&1 || true
	got=$(ip netns exec "$ns" sysctl -n "$key" 2>/dev/null | tr -s ' \t' '  ')
	if [ "$got" != "$val" ]; then
		echo "wan.sh: $ns: $key stays '$got' (not settable per namespace here)" >&2
	fi
}

# A namespace may only default to an algorithm in the global
# tcp_allowed_congestion_control list.  Add ours (this only widens what
# unprivileged sockets may pick); the original list is restored on down.
allow_cc() {
	local key=net.ipv4.tcp_allowed_congestion_control cur
	cur=$(sysctl -n "$key")
	case " $cur " in *" $CC "*) return 0 ;; esac
	[ -e "$STATE/allowed_cc" ] || echo "$cur" >"$STATE/allowed_cc"
	sysctl -qw "$key=$cur $CC" >/dev/null
}

restore_cc() {
	[ -r "$STATE/allowed_cc" ] || return 0
	sysctl -qw "net.ipv4.tcp_allowed_congestion_control=$(cat "$STATE/allowed_cc")" >/dev/null
}

# Buffers: 64 MiB max covers 1 Gbit/s x (50 ms RTT + 25 ms queue) = 9.4 MB
# in flight with room for skb overhead and SACK recovery.
tune_ns() {
	local ns=$1
	nsctl "$ns" net.ipv4.tcp_rmem "4096 131072 67108864"
	nsctl "$ns" net.ipv4.tcp_wmem "4096 16384 67108864"
	nsctl "$ns" net.core.rmem_max 67108864
	nsctl "$ns" net.core.wmem_max 67108864
	nsctl "$ns" net.ipv4.tcp_congestion_control "$CC"
	# Each benchmark run starts cold, not from a cached ssthresh.
	nsctl "$ns" net.ipv4.tcp_no_metrics_save 1
	# No routing between the links of the star.
	nsctl "$ns" net.ipv4.ip_forward 0
	nsctl "$ns" net.ipv6.conf.all.forwarding 0
}

# start_wanem LINK NS_A DEV_A NS_B DEV_B [wanem options...]
start_wanem() {
	local link=$1 nsa=$2 deva=$3 nsb=$4 devb=$5 pid extra pidfile log
	shift 5
	pidfile=$(link_pidfile "$link")
	log=$(link_log "$link")
	# WANEM_ARGS is split on whitespace on purpose (no globbing).
	read -r -a extra <<<"${WANEM_ARGS:-}"
	[ -x "$WANEM" ] || die "wanem binary not found at $WANEM (build it or set WANEM=)"
	: >"$log"
	setsid "$WANEM" --dev-a "$deva" --dev-b "$devb" \
	    --netns-a "$nsa" --netns-b "$nsb" --rate "$RATE" \
	    --delay "$DELAY" --loss "$LOSS" ${QUEUE:+--queue "$QUEUE"} \
	    --mtu "$MTU" --pidfile "$pidfile" "$@" "${extra[@]}" \
	    </dev/null >>"$log" 2>&1 &
	pid=$!
	# wanem writes the pidfile once both devices exist.
	for _ in $(seq 100); do
		[ -s "$pidfile" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$log" >&2
	kill -TERM "$pid" 2>/dev/null || true
	die "wanem did not start"
}

# addr_up NS DEV ADDR4 ADDR6
addr_up() {
	local ns=$1 dev=$2 addr=$3 addr6=$4
	ip -n "$ns" link set "$dev" mtu "$MTU" up
	ip -n "$ns" addr replace "$addr/$PREFIX" dev "$dev"
	ip -n "$ns" -6 addr replace "$addr6/64" dev "$dev" nodad
}

# What the running wanems were started with; a change restarts them.
wanted() {
	echo "$1 $2${WANEM_ARGS:+ $WANEM_ARGS}${WAN_FILTER_AB:+ ab:$WAN_FILTER_AB}${WAN_FILTER_BA:+ ba:$WAN_FILTER_BA}${WAN_PROFILE_CA:+ ca:$WAN_PROFILE_CA}"
}

running_ok() {
	local l
	[ "$(cat "$STATE/profile" 2>/dev/null)" = "$1" ] || return 1
	for l in $(links); do
		wanem_pid "$l" >/dev/null || return 1
	done
}

prepare() {
	local name=$1
	[ -n "$name" ] || die "usage: wan.sh up|star PROFILE (see: wan.sh profiles)"
	profile "$name" || die "unknown profile '$name' (see: wan.sh profiles)"
	[ "$(id -u)" = 0 ] || die "must run as root"
	mkdir -p "$STATE"
}

cmd_up() {
	local name=${1:-} want
	local -a filt=()
	prepare "$name"
	want=$(wanted pair "$name")
	[ -n "${WAN_FILTER_AB:-}" ] && filt+=(--filter-ab "$WAN_FILTER_AB")
	[ -n "${WAN_FILTER_BA:-}" ] && filt+=(--filter-ba "$WAN_FILTER_BA")
	ns_up "$NS_A"
	ns_up "$NS_B"
	# wanem's parameters are fixed at start: keep a running wanem of the
	# same profile (open connections survive), restart it otherwise.
	if ! running_ok "$want" ||
	    ! ip -n "$NS_A" link show "$DEV_A" >/dev/null 2>&1 ||
	    ! ip -n "$NS_B" link show "$DEV_B" >/dev/null 2>&1; then
		stop_all >/dev/null
		rm -f "$STATE/profile"
		! ns_exists "$NS_C" || ip netns del "$NS_C"
		echo pair >"$STATE/topology"
		start_wanem ab "$NS_A" "$DEV_A" "$NS_B" "$DEV_B" "${filt[@]}"
	fi
	addr_up "$NS_A" "$DEV_A" "$ADDR_A" fd77::1
	addr_up "$NS_B" "$DEV_B" "$ADDR_B" fd77::2
	allow_cc
	tune_ns "$NS_A"
	tune_ns "$NS_B"
	echo "$want" >"$STATE/profile"
	echo "wan.sh: $name up: $NS_A $ADDR_A <-> $NS_B $ADDR_B" \
	    "(rate $RATE, one-way delay $DELAY, loss $LOSS, queue ${QUEUE:-1 BDP}," \
	    "mtu $MTU, $CC), wanem pid $(cat "$PIDFILE")"
}

cmd_star() {
	local name=${1:-} want ns
	prepare "$name"
	want=$(wanted star "$name")
	for ns in "$NS_A" "$NS_B" "$NS_C"; do
		ns_up "$ns"
	done
	if ! running_ok "$want" ||
	    ! ip -n "$NS_C" link show lcca >/dev/null 2>&1 ||
	    ! ip -n "$NS_C" link show lccb >/dev/null 2>&1; then
		stop_all >/dev/null
		rm -f "$STATE/profile"
		ip -n "$NS_C" link del lcca 2>/dev/null || true
		if [ "${WAN_PROFILE_CA:-}" = veth ]; then
			echo star-veth >"$STATE/topology"
			ip link add lcca netns "$NS_C" type veth peer name "$DEV_A" netns "$NS_A"
		else
			echo star >"$STATE/topology"
			if [ -n "${WAN_PROFILE_CA:-}" ]; then
				profile "$WAN_PROFILE_CA" || die "unknown profile '$WAN_PROFILE_CA' (WAN_PROFILE_CA)"
			fi
			start_wanem ca "$NS_C" lcca "$NS_A" "$DEV_A"
		fi
		profile "$name"
		start_wanem cb "$NS_C" lccb "$NS_B" "$DEV_B"
	fi
	if [ -n "${WAN_PROFILE_CA:-}" ] && [ "$WAN_PROFILE_CA" != veth ]; then
		profile "$WAN_PROFILE_CA" || die "unknown profile '$WAN_PROFILE_CA' (WAN_PROFILE_CA)"
	fi
	addr_up "$NS_C" lcca 10.77.1.1 fd77:1::1
	addr_up "$NS_A" "$DEV_A" 10.77.1.2 fd77:1::2
	profile "$name"
	addr_up "$NS_C" lccb 10.77.2.1 fd77:2::1
	addr_up "$NS_B" "$DEV_B" 10.77.2.2 fd77:2::2
	allow_cc
	for ns in "$NS_A" "$NS_B" "$NS_C"; do
		tune_ns "$ns"
	done
	echo "$want" >"$STATE/profile"
	echo "wan.sh: $name star up: $NS_C 10.77.1.1 <-> $NS_A 10.77.1.2," \
	    "$NS_C 10.77.2.1 <-> $NS_B 10.77.2.2 (rate $RATE, one-way delay" \
	    "$DELAY, loss $LOSS, queue ${QUEUE:-1 BDP}, mtu $MTU, $CC)"${WAN_PROFILE_CA:+", link ca: $WAN_PROFILE_CA"}
}

cmd_down() {
	local ns
	[ "$(id -u)" = 0 ] || die "must run as root"
	stop_all
	for ns in "$NS_A" "$NS_B" "$NS_C"; do
		if ns_exists "$ns"; then
			ip netns del "$ns"
		fi
	done
	restore_cc
	# Only our own files: WAN_STATE may point anywhere.
	rm -f "$PIDFILE" "$LOG" "$STATE"/wanem-c[ab].pid "$STATE"/wanem-c[ab].log \
	    "$STATE/profile" "$STATE/allowed_cc" "$STATE/topology"
	rmdir "$STATE" 2>/dev/null || true
	echo "wan.sh: down"
}

# cmd_signal cut|restore [LINK]: signal the wanem(s) and wait (10 s at
# most) for each one's line about it.
cmd_signal() {
	local what=$1 sig l pid log n all
	shift
	case $what in cut) sig=RTMIN ;; *) sig=RTMIN+1 ;; esac
	all=$(links)
	for l in ${1:-$all}; do
		case " $all " in *" $l "*) ;; *) die "no link '$l' (links: $all)" ;; esac
		pid=$(wanem_pid "$l") || die "wanem of link $l is not running"
		log=$(link_log "$l")
		n=$(grep -c ' link \(cut\|restored\)' "$log" || true)
		kill -s "$sig" "$pid"
		for _ in $(seq 200); do
			[ "$(grep -c ' link \(cut\|restored\)' "$log" || true)" -gt "$n" ] && break
			sleep 0.05
		done
		grep ' link \(cut\|restored\)' "$log" | tail -n 1 | sed "s/^/$l: /"
	done
}

cmd_status() {
	local pid ns l ok=1
	if [ -r "$STATE/profile" ]; then
		echo "profile: $(cat "$STATE/profile")"
	else
		echo "profile: none"
	fi
	for l in $(links); do
		if pid=$(wanem_pid "$l"); then
			echo "wanem $l: pid $pid ($(readlink "/proc/$pid/exe")), cpu $(wanem_cpu "$pid") s"
			kill -USR1 "$pid"
			sleep 0.2
			grep ' a>b \| b>a ' "$(link_log "$l")" | tail -n 2 || true
		else
			echo "wanem $l: not running"
			ok=0
		fi
	done
	for ns in "$NS_A" "$NS_B" "$NS_C"; do
		if ns_exists "$ns"; then
			echo "$ns:"
			ip -n "$ns" -brief addr show | sed 's/^/  /'
		else
			echo "$ns: absent"
		fi
	done
	[ "$ok" = 1 ]
}

case ${1:-} in
up) cmd_up "${2:-}" ;;
star) cmd_star "${2:-}" ;;
down) cmd_down ;;
cut | restore) cmd_signal "$1" "${2:-}" ;;
status) cmd_status ;;
profiles) profiles ;;
*) echo "usage: wan.sh up|star PROFILE | down | cut [LINK] | restore [LINK] | status | profiles" >&2; exit 2 ;;
esac
