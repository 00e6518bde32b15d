# shellcheck shell=bash
#
# lanecp integration tests over emulated networks: network namespaces joined
# by bench/wanem (user-space link model and packet filter), set up with
# bench/wan.sh.  Source it after lib.sh, whose functions it uses:
#
#   . "$LC_SRC_DIR/tests/integration/lib.sh"
#   . "$LC_SRC_DIR/tests/integration/netns.sh"
#   lc_netns_need                            # or exit 77 (skipped)
#   lc_netns_up pair rate=100m,delay=10ms    # namespaces a <-> b
#   lc_netns_sshd b                          # sshd in b, Host alias "b"
#   lc_netns_lanecp a "$f" "b:$d/"           # lanecp runs in a
#   lc_netns_wait_no_agents 60
#
# Topologies (addresses from bench/wan.sh):
#   pair  a 10.77.0.1 fd77::1 <-> b 10.77.0.2 fd77::2, one link "ab"
#   star  c 10.77.1.1 fd77:1::1 <-> a 10.77.1.2 fd77:1::2 (link "ca"),
#         c 10.77.2.1 fd77:2::1 <-> b 10.77.2.2 fd77:2::2 (link "cb");
#         a and b cannot reach each other (no route, c does not forward)
# All namespaces share the file system: test files can live anywhere.
#
# lc_netns_need
#   Exits 77 (ctest: skipped) unless we are root, /dev/net/tun exists, `ip`
#   is installed, $LC_WANEM (set by tests/integration/CMakeLists.txt) is
#   an executable wanem, sshd is installed and a namespace can be created.
# lc_netns_up TOPO PROFILE [FILTER_AB [FILTER_BA]]
#   Brings up topology TOPO (pair or star) in namespaces named
#   lct<pid>x<random>-{a,b,c} (unique per test process: tests run in
#   parallel), with link PROFILE (a bench/wan.sh profile: a name or
#   "rate=R,delay=D[,loss=L][,queue=Q][,mtu=M]") and, for pair, wanem
#   filter SPECs for a->b and b->a (see bench/wanem.c: tcp=22, nosyn, syn=22,
#   all, drop|reject, other=...).  Everything is torn down on exit, also on
#   failure.  Calling it again with another profile or filter restarts the
#   wanem(s) (open connections break; the namespaces, their addresses and
#   the sshds in them stay).  Sets LC_NS_TOPO, LC_NS_ADDR_X and
#   LC_NS_ADDR6_X for X in a b (c: both of its addresses, space-separated),
#   LC_NS_DIR (a temp dir for the test, removed on exit).
# lc_netns_spoke X [RATE]
#   After lc_netns_up star: one more host X (only d) on the star, joined to
#   c by a veth pair (not wanem; with RATE, e.g. 20mbit, a tc tbf at each
#   end): c 10.77.3.1 fd77:3::1 (lccd) <-> d 10.77.3.2 fd77:3::2 (lcwd).
#   Sets LC_NS_ADDR_d, LC_NS_ADDR6_d and adds to LC_NS_ADDR_c; the
#   namespace is deleted on exit.
# lc_netns_forward
#   After lc_netns_up star (and lc_netns_spoke): c forwards IPv4 between
#   its links and a, b (and d) route each other's networks through c, so
#   the targets of a --also chain reach each other.
# lc_netns_block X Y / lc_netns_unblock X Y
#   With lc_netns_forward: X's route to Y's network and Y's to X's become
#   "unreachable" (again through c): a connect between them fails at once
#   with "No route to host" either way (no ICMP, so no rate limit), while
#   c still reaches both.
# lc_netns_sshd_kill X
#   Kills X's sshd (lc_netns_sshd) with every session under it, and every
#   "lanecp --agent" in X's namespace: the host is gone, a new SSH
#   connection to it is refused.  lc_netns_sshd_again X starts it again
#   with the same config, keys and port.
# lc_netns_name X        prints the namespace name of host X (a, b, c, d).
# lc_netns_exec X CMD... runs CMD in X's namespace.
# lc_netns_sshd X [PORT]
#   Starts a fixture sshd (lib.sh lc_sshd_start: own config, host keys,
#   user key, SetEnv SHLVL=1 and PATH with $LANECP's directory) inside X's
#   namespace, listening on each of X's addresses (IPv4 and IPv6) on PORT
#   (default 22: each namespace has its own ports) and adds to
#   LC_NS_SSH_CONFIG (also made LC_SSH_CONFIG) a "Host X" (HostName: X's
#   first IPv4 address) and a "Host ADDR" block per address, so both
#   "X:/path" and "[fd77::2]:/path" work.  Sets LC_NS_SSHD_PID_X.
# lc_netns_tcp X ADDR [PORT]
#   Opens a TCP connection from X's namespace to ADDR:PORT (default 22)
#   and closes it; returns 0 if it connected (no timeout of its own: a
#   dropped SYN waits for the kernel's retransmissions).
# lc_netns_lanecp X ARGS...
# lc_netns_lanecp_expect X CODE PATTERN ARGS...
#   lib.sh's lc_lanecp / lc_lanecp_expect with lanecp running in X's
#   namespace and -F $LC_NS_SSH_CONFIG; stderr in $LC_ERR.
# lc_netns_cut [LINK] / lc_netns_restore [LINK]
#   Cuts (every packet lost, both directions) or restores LINK (ab; ca or
#   cb; default: every link) and returns once wanem has logged the change.
# lc_netns_stat LINK DIR FIELD
#   Prints wanem counter FIELD (f_port, f_rst, drop_cut, out_pkts...) of
#   direction DIR (a>b or b>a) of LINK, read after asking wanem for fresh
#   statistics.
# lc_netns_agents        prints the pids of "lanecp --agent" processes
#                        (any name ending in lanecp, or an -T agent
#                        path) that run in one of our namespaces.
# lc_netns_wait_no_agents SECONDS
#   Polls until lc_netns_agents prints nothing; fails naming them after
#   SECONDS.

LC_NS_TOPO=
LC_NS_PFX=
LC_NS_DIR=
LC_NS_SSH_CONFIG=

lc__netns_skip() {
	printf 'SKIPPED: %s\n' "$*"
	exit 77
}

lc_netns_need() {
	local probe
	[[ $(id -u) == 0 ]] || lc__netns_skip "not root: network namespaces need root"
	[[ -c /dev/net/tun ]] || lc__netns_skip "no /dev/net/tun"
	command -v ip >/dev/null 2>&1 || lc__netns_skip "no ip (iproute2)"
	[[ -n ${LC_WANEM-} && -x ${LC_WANEM-} ]] ||
		lc__netns_skip "no wanem binary (LC_WANEM='${LC_WANEM-}')"
	command -v sshd >/dev/null 2>&1 || [[ -x /usr/sbin/sshd ]] ||
		lc__netns_skip "no sshd (openssh-server)"
	probe=lctprobe$$
	ip netns add "$probe" >/dev/null 2>&1 ||
		lc__netns_skip "cannot create a network namespace"
	ip netns del "$probe"
}

lc__netns_wan() {
	WAN_NS=$LC_NS_PFX WAN_STATE=$LC_NS_DIR/wan WANEM=$LC_WANEM \
	    "$LC_SRC_DIR/bench/wan.sh" "$@"
}

lc_netns_name() {
	case $1 in
	a | b | c | d) echo "$LC_NS_PFX-$1" ;;
	*) lc_fail "lc_netns_name: no host '$1'" ;;
	esac
}

lc_netns_exec() {
	local ns
	ns=$(lc_netns_name "$1")
	shift
	ip netns exec "$ns" "$@"
}

lc_netns_up() {
	local topo=$1 prof=$2 fab=${3-} fba=${4-} cmd out
	case $topo in
	pair) cmd=up ;;
	star) cmd=star ;;
	*) lc_fail "lc_netns_up: topology '$topo' (pair or star)" ;;
	esac
	[[ -z $LC_NS_TOPO || $LC_NS_TOPO == "$topo" ]] ||
		lc_fail "lc_netns_up: $LC_NS_TOPO is up; one topology per test"
	if [[ -z $LC_NS_PFX ]]; then
		LC_NS_PFX=lct$$x$RANDOM
		LC_NS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/lanecp-netns.XXXXXX") ||
			lc_fail "mktemp failed"
		if [[ -n ${LC_KEEP_TMP-} ]]; then
			lc_on_exit "echo 'kept $LC_NS_DIR' >&2"
		else
			lc_on_exit "rm -rf '$LC_NS_DIR'"
		fi
		LC_NS_SSH_CONFIG=$LC_NS_DIR/ssh_config
		: >"$LC_NS_SSH_CONFIG"
		# registered before any sshd: runs after they are killed
		lc_on_exit "lc__netns_wan down"
	fi
	LC_NS_TOPO=$topo
	if ! out=$(WAN_FILTER_AB=$fab WAN_FILTER_BA=$fba lc__netns_wan "$cmd" \
	    "$prof" 2>&1); then
		printf '%s\n' "$out" >&2
		lc_fail "bench/wan.sh $cmd $prof failed"
	fi
	lc_note "$(printf '%s\n' "$out" | grep '^wan.sh: .* up:' || true)" \
	    "${fab:+filter a>b $fab }${fba:+filter b>a $fba}"
	if [[ $topo == pair ]]; then
		LC_NS_ADDR_a=10.77.0.1 LC_NS_ADDR6_a=fd77::1
		LC_NS_ADDR_b=10.77.0.2 LC_NS_ADDR6_b=fd77::2
		LC_NS_ADDR_c='' LC_NS_ADDR6_c=''
	else
		LC_NS_ADDR_a=10.77.1.2 LC_NS_ADDR6_a=fd77:1::2
		LC_NS_ADDR_b=10.77.2.2 LC_NS_ADDR6_b=fd77:2::2
		LC_NS_ADDR_c="10.77.1.1 10.77.2.1"
		LC_NS_ADDR6_c="fd77:1::1 fd77:2::1"
	fi
	export LC_NS_TOPO LC_NS_DIR LC_NS_ADDR_a LC_NS_ADDR_b LC_NS_ADDR_c \
	    LC_NS_ADDR6_a LC_NS_ADDR6_b LC_NS_ADDR6_c
}

lc_netns_sshd() {
	local x=$1 port=${2:-22} v4 v6 first a blk
	[[ -n $LC_NS_TOPO ]] || lc_fail "lc_netns_sshd: no topology up"
	v4=LC_NS_ADDR_$x v6=LC_NS_ADDR6_$x
	v4=${!v4} v6=${!v6}
	[[ -n $v4 ]] || lc_fail "lc_netns_sshd: no host '$x' in $LC_NS_TOPO"
	first=${v4%% *}
	LC_SSHD_ADDR=$first LC_SSHD_ALSO="${v4#"$first"} $v6" \
	    LC_SSHD_NETNS=$(lc_netns_name "$x") LC_SSHD_LISTEN_PORT=$port \
	    lc_sshd_start
	printf -v "LC_NS_SSHD_PID_$x" '%s' "$LC_SSHD_PID"
	# shellcheck disable=SC2153 # set by lc_sshd_start
	printf -v "LC_NS_SSHD_CFG_$x" '%s' "$LC_SSHD_CONFIG"
	printf -v "LC_NS_SSHD_LOG_$x" '%s' "$LC_SSHD_LOG"
	export "LC_NS_SSHD_PID_$x" "LC_NS_SSHD_CFG_$x" "LC_NS_SSHD_LOG_$x"
	blk=$LC_NS_DIR/ssh_config.$x
	LC_SSH_HOST=$x LC_SSHD_ADDR=$first lc_ssh_config "$blk"
	cat "$blk" >>"$LC_NS_SSH_CONFIG"
	for a in $v4 $v6; do
		LC_SSH_HOST=$a lc_ssh_config "$blk" HostName=
		cat "$blk" >>"$LC_NS_SSH_CONFIG"
	done
	rm -f "$blk"
	LC_SSH_CONFIG=$LC_NS_SSH_CONFIG
	export LC_NS_SSH_CONFIG LC_SSH_CONFIG
}

# LC_LANECP_WRAP is read by lib.sh's lc__lanecp_run (dynamic scope).
# shellcheck disable=SC2034
lc_netns_lanecp() {
	local x=$1
	shift
	local -a LC_LANECP_WRAP=(ip netns exec "$(lc_netns_name "$x")")
	LC_SSH_CONFIG=$LC_NS_SSH_CONFIG lc_lanecp "$@"
}

# shellcheck disable=SC2034
lc_netns_lanecp_expect() {
	local x=$1
	shift
	local -a LC_LANECP_WRAP=(ip netns exec "$(lc_netns_name "$x")")
	LC_SSH_CONFIG=$LC_NS_SSH_CONFIG lc_lanecp_expect "$@"
}

lc_netns_spoke() {
	local x=$1 rate=${2-} ns c dev
	[[ $LC_NS_TOPO == star ]] || lc_fail "lc_netns_spoke: not on a star"
	[[ $x == d ]] || lc_fail "lc_netns_spoke: host '$x' (only d)"
	ns=$(lc_netns_name d) c=$(lc_netns_name c)
	ip netns add "$ns" || lc_fail "ip netns add $ns"
	lc_on_exit "ip netns del '$ns'"
	ip -n "$ns" link set lo up
	ip link add lccd netns "$c" type veth peer name lcwd netns "$ns" ||
		lc_fail "lc_netns_spoke: veth lccd-lcwd"
	ip -n "$c" addr add 10.77.3.1/24 dev lccd
	ip -n "$c" -6 addr add fd77:3::1/64 dev lccd nodad
	ip -n "$ns" addr add 10.77.3.2/24 dev lcwd
	ip -n "$ns" -6 addr add fd77:3::2/64 dev lcwd nodad
	ip -n "$c" link set lccd up
	ip -n "$ns" link set lcwd up
	if [[ -n $rate ]]; then
		command -v tc >/dev/null 2>&1 ||
			lc__netns_skip "no tc (iproute2) for the link to $x"
		for dev in "$c lccd" "$ns lcwd"; do
			# shellcheck disable=SC2086
			tc -n ${dev% *} qdisc add dev ${dev#* } root tbf \
			    rate "$rate" burst 32k latency 50ms ||
				lc_fail "tc tbf $rate on ${dev#* }"
		done
	fi
	LC_NS_ADDR_d=10.77.3.2 LC_NS_ADDR6_d=fd77:3::2
	LC_NS_ADDR_c="$LC_NS_ADDR_c 10.77.3.1"
	LC_NS_ADDR6_c="$LC_NS_ADDR6_c fd77:3::1"
	export LC_NS_ADDR_c LC_NS_ADDR6_c LC_NS_ADDR_d LC_NS_ADDR6_d
}

# x's network and c's address on it (lc_netns_forward, lc_netns_block)
lc__netns_net() {
	case $1 in
	a) echo 10.77.1.0/24 10.77.1.1 ;;
	b) echo 10.77.2.0/24 10.77.2.1 ;;
	d) echo 10.77.3.0/24 10.77.3.1 ;;
	*) lc_fail "no star host '$1' (a, b, d)" ;;
	esac
}

lc_netns_forward() {
	local x y xs=a\ b
	[[ $LC_NS_TOPO == star ]] || lc_fail "lc_netns_forward: not on a star"
	[[ -n ${LC_NS_ADDR_d-} ]] && xs+=\ d
	lc_netns_exec c sysctl -qw net.ipv4.ip_forward=1 >/dev/null ||
		lc_fail "lc_netns_forward: ip_forward in c"
	for x in $xs; do
		for y in $xs; do
			[[ $x == "$y" ]] || lc__netns_route "$x" "$y" via ||
				lc_fail "lc_netns_forward: $x's route to $y"
		done
	done
}

# lc__netns_route X Y unreachable|via: X's route to Y's network
lc__netns_route() {
	local net gw
	read -r _ gw < <(lc__netns_net "$1")
	read -r net _ < <(lc__netns_net "$2")
	if [[ $3 == via ]]; then
		ip -n "$(lc_netns_name "$1")" route replace "$net" via "$gw"
	else
		ip -n "$(lc_netns_name "$1")" route replace unreachable "$net"
	fi
}

lc_netns_block() {
	{ lc__netns_route "$1" "$2" unreachable &&
	    lc__netns_route "$2" "$1" unreachable; } ||
		lc_fail "lc_netns_block $*"
}

lc_netns_unblock() {
	{ lc__netns_route "$1" "$2" via && lc__netns_route "$2" "$1" via; } ||
		lc_fail "lc_netns_unblock $*"
}

lc_netns_sshd_kill() {
	local x=$1 v p ino
	v=LC_NS_SSHD_PID_$x
	[[ -n ${!v-} ]] || lc_fail "lc_netns_sshd_kill: no sshd in $x"
	lc__kill_tree "${!v}"
	ino=$(stat -L -c %i "/run/netns/$(lc_netns_name "$x")") ||
		lc_fail "lc_netns_sshd_kill: no namespace for $x"
	for p in $(lc_netns_agents); do
		[[ $(readlink "/proc/$p/ns/net" 2>/dev/null) == "net:[$ino]" ]] &&
			kill -KILL "$p" 2>/dev/null
	done
	return 0
}

lc_netns_sshd_again() {
	local x=$1 cfg log pid n i
	cfg=LC_NS_SSHD_CFG_$x log=LC_NS_SSHD_LOG_$x
	cfg=${!cfg-} log=${!log-}
	[[ -n $cfg ]] || lc_fail "lc_netns_sshd_again: no sshd in $x"
	n=$(grep -c 'Server listening' "$log" || true)
	# not through a shell function: $! must be sshd itself
	ip netns exec "$(lc_netns_name "$x")" "$(lc__sshd_bin)" -D -f "$cfg" \
	    -E "$log" </dev/null &
	pid=$!
	lc_on_exit "lc__kill_tree $pid"
	for ((i = 0; i < 100; i++)); do
		(($(grep -c 'Server listening' "$log" || true) > n)) && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	(($(grep -c 'Server listening' "$log" || true) > n)) ||
		{ lc__show "$log"; lc_fail "sshd in $x did not start again"; }
	printf -v "LC_NS_SSHD_PID_$x" '%s' "$pid"
	export "LC_NS_SSHD_PID_$x"
}

lc_netns_tcp() {
	# shellcheck disable=SC2016
	lc_netns_exec "$1" bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$2" "${3:-22}" \
	    2>/dev/null
}

lc_netns_cut() {
	lc__netns_wan cut "${1-}" || lc_fail "wan.sh cut ${1-} failed"
}

lc_netns_restore() {
	lc__netns_wan restore "${1-}" || lc_fail "wan.sh restore ${1-} failed"
}

lc_netns_stat() {
	local link=$1 dir=$2 field=$3 log pid n i
	if [[ $link == ab ]]; then
		log=$LC_NS_DIR/wan/wanem.log pid=$LC_NS_DIR/wan/wanem.pid
	else
		log=$LC_NS_DIR/wan/wanem-$link.log pid=$LC_NS_DIR/wan/wanem-$link.pid
	fi
	read -r pid <"$pid" || lc_fail "lc_netns_stat: no wanem for $link"
	n=$(grep -c " $dir " "$log" || true)
	kill -USR1 "$pid"
	for ((i = 0; i < 100; i++)); do
		(($(grep -c " $dir " "$log" || true) > n)) && break
		sleep 0.05
	done
	grep " $dir " "$log" | tail -n 1 | tr ' ' '\n' |
	    sed -n "s/^$field=//p"
}

lc_netns_agents() {
	local x ino p cmd
	local -A ours=()
	for x in a b c d; do
		ino=$(stat -L -c %i "/run/netns/$LC_NS_PFX-$x" 2>/dev/null) ||
			continue
		ours["net:[$ino]"]=1
	done
	for p in /proc/[0-9]*; do
		{ cmd=$(tr '\0' ' ' <"$p/cmdline"); } 2>/dev/null || continue
		[[ $cmd == *" --agent"* && $cmd != *bash* ]] || continue
		ino=$(readlink "$p/ns/net" 2>/dev/null) || continue
		[[ -n ${ours[$ino]-} ]] && echo "${p#/proc/}"
	done
	return 0
}

lc_netns_wait_no_agents() {
	local end=$((SECONDS + $1)) p
	while :; do
		p=$(lc_netns_agents)
		[[ -z $p ]] && return 0
		((SECONDS < end)) || break
		sleep 0.1
	done
	lc_fail "agents still running in our namespaces $1 s later:" \
	    "$(for i in $p; do tr '\0' ' ' <"/proc/$i/cmdline" 2>/dev/null; echo "($i)"; done)"
}
