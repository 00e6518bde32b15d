#!/bin/bash
# Emulated WAN between two network namespaces, for lanecp benchmarks.
#
#   bench/wan.sh up PROFILE    create/refresh namespaces, (re)start wanem
#   bench/wan.sh down          stop wanem, delete the namespaces
#   bench/wan.sh status        profile, pid, addresses, live wanem counters
#   bench/wan.sh profiles      list the profiles
#
# lc-wan-a (10.77.0.1/24 on TUN lcwa) <-> wanem <-> lc-wan-b (10.77.0.2/24
# on TUN lcwb).  wanem creates each TUN device directly inside its namespace
# (setns while opening /dev/net/tun); the devices vanish when wanem exits.
#
# Environment: WANEM=path to the wanem binary (default build/bench/wanem
# under the repository), WANEM_ARGS=extra wanem options (e.g. "--seed 7
# --tick 0"), WAN_STATE=state directory (default /run/lanecp-wan: pidfile,
# wanem.log, profile).  Needs root.
set -euo pipefail

NS_A=lc-wan-a
NS_B=lc-wan-b
DEV_A=lcwa
DEV_B=lcwb
ADDR_A=10.77.0.1
ADDR_B=10.77.0.2
PREFIX=24

here=$(cd "$(dirname "$0")" && pwd)
WANEM=${WANEM:-$here/../build/bench/wanem}
STATE=${WAN_STATE:-/run/lanecp-wan}
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
	*) return 1 ;;
	esac
	CC=cubic
}

profiles() {
	echo "lfn1g    1 Gbit/s, 50 ms RTT, 0.1% loss, MTU 9000, queue 3 MiB"
	echo "clean1g  1 Gbit/s, 50 ms RTT, no loss,   MTU 9000, queue 3 MiB"
	echo "wan200m  200 Mbit/s, 100 ms RTT, 0.05% loss, MTU 1500, queue 1.25 MiB"
}

wanem_pid() {
	local pid state
	[ -r "$PIDFILE" ] || return 1
	read -r pid <"$PIDFILE" || return 1
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

stop_wanem() {
	local pid
	pid=$(wanem_pid) || { rm -f "$PIDFILE"; return 0; }
	kill -TERM "$pid"
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "wan.sh: wanem $pid ignored SIGTERM, killing" >&2
		kill -KILL "$pid"
	fi
	rm -f "$PIDFILE"
	# Final per-direction counters.
	grep ' a>b \| b>a ' "$LOG" 2>/dev/null | tail -n 2 || true
}

ns_up() {
	local ns=$1
	ip netns list | grep -qx "$ns\( (id: [0-9]*)\)\?" || ip netns add "$ns"
	ip -n "$ns" link set lo up
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
	# Keep router solicitations and DAD off the emulated link.
	nsctl "$ns" net.ipv6.conf.all.disable_ipv6 1
	nsctl "$ns" net.ipv6.conf.default.disable_ipv6 1
}

start_wanem() {
	local pid extra
	# WANEM_ARGS is split on whitespace on purpose (no globbing).
	read -r -a extra <<<"${WANEM_ARGS:-}"
	[ -x "$WANEM" ] || die "wanem binary not found at $WANEM (build it or set WANEM=)"
	: >"$LOG"
	setsid "$WANEM" --dev-a "$DEV_A" --dev-b "$DEV_B" \
	    --netns-a "$NS_A" --netns-b "$NS_B" --rate "$RATE" \
	    --delay "$DELAY" --loss "$LOSS" --queue "$QUEUE" --mtu "$MTU" \
	    --pidfile "$PIDFILE" "${extra[@]}" \
	    </dev/null >>"$LOG" 2>&1 &
	pid=$!
	# wanem writes the pidfile once both devices exist.
	for _ in $(seq 100); do
		[ -s "$PIDFILE" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$LOG" >&2
	kill -TERM "$pid" 2>/dev/null || true
	die "wanem did not start"
}

addr_up() {
	local ns=$1 dev=$2 addr=$3
	ip -n "$ns" link set "$dev" mtu "$MTU" up
	ip -n "$ns" addr replace "$addr/$PREFIX" dev "$dev"
}

cmd_up() {
	local name=${1:-}
	[ -n "$name" ] || die "usage: wan.sh up PROFILE (see: wan.sh profiles)"
	profile "$name" || die "unknown profile '$name' (see: wan.sh profiles)"
	[ "$(id -u)" = 0 ] || die "must run as root"
	mkdir -p "$STATE"
	ns_up "$NS_A"
	ns_up "$NS_B"
	# wanem's parameters are fixed at start: keep a running wanem of the
	# same profile (open connections survive), restart it otherwise.
	if ! wanem_pid >/dev/null ||
	    [ "$(cat "$STATE/profile" 2>/dev/null)" != "$name${WANEM_ARGS:+ $WANEM_ARGS}" ] ||
	    ! ip -n "$NS_A" link show "$DEV_A" >/dev/null 2>&1 ||
	    ! ip -n "$NS_B" link show "$DEV_B" >/dev/null 2>&1; then
		stop_wanem >/dev/null
		rm -f "$STATE/profile"
		start_wanem
	fi
	addr_up "$NS_A" "$DEV_A" "$ADDR_A"
	addr_up "$NS_B" "$DEV_B" "$ADDR_B"
	allow_cc
	tune_ns "$NS_A"
	tune_ns "$NS_B"
	echo "$name${WANEM_ARGS:+ $WANEM_ARGS}" >"$STATE/profile"
	echo "wan.sh: $name up: $NS_A $ADDR_A <-> $NS_B $ADDR_B" \
	    "(rate $RATE, one-way delay $DELAY, loss $LOSS, queue $QUEUE," \
	    "mtu $MTU, $CC), wanem pid $(cat "$PIDFILE")"
}

cmd_down() {
	local ns
	[ "$(id -u)" = 0 ] || die "must run as root"
	stop_wanem
	for ns in "$NS_A" "$NS_B"; do
		if ip netns list | grep -qx "$ns\( (id: [0-9]*)\)\?"; then
			ip netns del "$ns"
		fi
	done
	restore_cc
	# Only our own files: WAN_STATE may point anywhere.
	rm -f "$PIDFILE" "$LOG" "$STATE/profile" "$STATE/allowed_cc"
	rmdir "$STATE" 2>/dev/null || true
	echo "wan.sh: down"
}

cmd_status() {
	local pid ns
	if [ -r "$STATE/profile" ]; then
		echo "profile: $(cat "$STATE/profile")"
	else
		echo "profile: none"
	fi
	if pid=$(wanem_pid); then
		echo "wanem: pid $pid ($(readlink "/proc/$pid/exe")), cpu $(wanem_cpu "$pid") s"
		kill -USR1 "$pid"
		sleep 0.2
		grep ' a>b \| b>a ' "$LOG" | tail -n 2 || true
	else
		echo "wanem: not running"
	fi
	for ns in "$NS_A" "$NS_B"; do
		if ip netns list | grep -qx "$ns\( (id: [0-9]*)\)\?"; then
			echo "$ns:"
			ip -n "$ns" -brief addr show | sed 's/^/  /'
		else
			echo "$ns: absent"
		fi
	done
	[ -n "${pid:-}" ]
}

case ${1:-} in
up) cmd_up "${2:-}" ;;
down) cmd_down ;;
status) cmd_status ;;
profiles) profiles ;;
*) echo "usage: wan.sh up PROFILE | down | status | profiles" >&2; exit 2 ;;
esac
