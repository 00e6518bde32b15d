# shellcheck shell=bash
# The data paths of issue 12 on the emulated lfn1g link (1 Gbit/s, 50 ms
# RTT, 0.1 % loss, MTU 9000), sourced by bench/run.sh (--case paths).
#
# Everything memory to memory: zero-filled tmpfs sources (/dev/shm), the
# private null device as the target, so no disk decides.  The namespaces
# come from tests/integration/netns.sh (bench/wan.sh under a unique
# prefix, torn down on exit) with fixture sshds on port 22 in them.
#
# Pair topology (a 10.77.0.1 <-> b 10.77.0.2), lanecp and scp run in a,
# push to b's sshd.  Per round, in turn (each round starting one phase
# and one configuration later):
#   filter phase: wanem --filter-ab tcp=22 --filter-ba nosyn (only port 22
#     of b is reachable; b can open nothing towards a):
#     lanecp -s 16 --via-ssh, scp -c aes128-gcm (smaller file)
#   open phase (no filter): lanecp -s 16 (direct), -s 16 -z, -s 16
#     --via-ssh, -s 16 -J bastion (via SSH through the bastion), -s 16 -J
#     bastion --direct; the bastion is a second sshd in a itself
#     (10.77.0.1:2022), so it adds no link of its own.
# Switching phases restarts wanem (the namespaces and sshds stay).
#
# Star topology (c 10.77.1.1 <-> a 10.77.1.2 over link ca, c 10.77.2.1 <->
# b 10.77.2.2 over link cb; a and b cannot reach each other), lanecp runs in
# c: link cb is lfn1g, link ca fast (PATHS_CA, default rate=10g, no delay,
# no loss, MTU 9000), so the relayed copy a -> c -> b and the direct push
# c -> b cross the same lfn1g link:
#   lanecp -s 16 --relay a:SRC b:NULL   vs   lanecp -s 16 SRC b:NULL
# The relay host's CPU and peak RSS are the client's columns (the
# controller in c does all the relaying; the agents are server side).
#
# --case relay (issue 23 item 4): the star alone, with link ca a plain veth
# pair (bench/wan.sh WAN_PROFILE_CA=veth: no emulator, no user-space hop)
# and only cb emulated ($PATHS_PROFILE), so the relayed copy differs from
# the direct push by the relay itself (one more process and its splices,
# a kernel hop) and nothing else: -s 16 relay vs direct, $PATHS_RUNS
# rounds interleaved.  RELAY_B=/path/to/lanecp adds the relayed copy made
# by that other build, interleaved with the rest (an A/B of a relay
# change; the agents are the fixture's, from LANECP's directory).
# RELAY_PERF=1 adds, untimed, a relay and a direct run profiled
# (relay_perf below): results/STAMP-relay-perf.txt.

PATHS_PROFILE=${PATHS_PROFILE:-lfn1g}
PATHS_CA=${PATHS_CA:-rate=10g,delay=0ms,queue=8m,mtu=9000}
PATHS_RUNS=${RUNS_SET:-5}
if ((QUICK)); then
	PATHS_RUNS=${RUNS_SET:-1}
	PATHS_SIZE=${PATHS_SIZE:-256M} PATHS_SCP_SIZE=${PATHS_SCP_SIZE:-32M}
else
	PATHS_SIZE=${PATHS_SIZE:-1G} PATHS_SCP_SIZE=${PATHS_SCP_SIZE:-128M}
fi
PATHS_RXPID=
PATHS_CFG=

# Save/restore lib.sh's globals: lc_sshd_start (via lc_netns_sshd)
# overwrites them, and the other cases use the loopback sshd's.
PATHS_SAVED=()
paths_save() {
	local v
	PATHS_SAVED=()
	for v in LC_SSHD_DIR LC_SSHD_PORT LC_SSHD_PID LC_SSHD_LOG LC_SSHD_CONFIG \
	    LC_SSH_CONFIG LC_SSH_HOST LC_USER_KEY LC_KNOWN_HOSTS LC_HOST_KEY \
	    LC_HOST_KEY_ECDSA LC_SSHD_ADDR LC_SSHD_ALSO LC_SSHD_NETNS; do
		PATHS_SAVED+=("$v=${!v-}")
	done
}
paths_restore() {
	local kv
	for kv in "${PATHS_SAVED[@]}"; do
		printf -v "${kv%%=*}" '%s' "${kv#*=}"
	done
	export LC_SSH_CONFIG LC_SSHD_PORT LC_SSHD_PID
}

# paths_sshd X [PORT]: a fixture sshd in X's namespace, in the server
# cgroup, resident (listener) for measure.
paths_sshd() {
	cg_join server
	lc_netns_sshd "$@"
	echo "$BASHPID" >"$CG_HOME/cgroup.procs"
	SRV_RESIDENT+="$LC_SSHD_PID "
	SRV_LISTENERS+="$LC_SSHD_PID "
	PATHS_SSHDS+=("$LC_SSHD_PID")
}
PATHS_SSHDS=()
paths_sshds_stop() {
	local p
	for p in "${PATHS_SSHDS[@]}"; do stop_pid "$p"; done
	PATHS_SSHDS=()
}

# The wanem filter of the pair's phase: "" or "port22".
PATHS_FILTER=none
paths_filter() {
	[[ $PATHS_FILTER == "$1" ]] && return 0
	if [[ $1 == port22 ]]; then
		lc_netns_up pair "$PATHS_PROFILE" tcp=22,drop nosyn >/dev/null
	else
		lc_netns_up pair "$PATHS_PROFILE" >/dev/null
	fi
	PATHS_FILTER=$1
}

set_paths() {
	local c=$1 src=$MEM/paths-$PATHS_SIZE
	local -a ns
	BYTES=$(bytes_of "$PATHS_SIZE")
	STREAMS=16
	TOOL=lanecp
	RXPID=$PATHS_RXPID
	case $c in
	star-*) ns=(ip netns exec "$(lc_netns_name c)") ;;
	*) ns=(ip netns exec "$(lc_netns_name a)") ;;
	esac
	local -a L=("${ns[@]}" "$LANECP" -F "$PATHS_CFG" -q -s 16)
	case $c in
	f-viassh) CMD=("${L[@]}" --via-ssh "$src" "b:$NULLDEV") ;;
	f-scp)
		src=$MEM/paths-$PATHS_SCP_SIZE
		BYTES=$(bytes_of "$PATHS_SCP_SIZE")
		STREAMS=1 TOOL=scp
		CMD=("${ns[@]}" scp -q -F "$PATHS_CFG" -c aes128-gcm@openssh.com "$src" "b:$NULLDEV") ;;
	o-direct) CMD=("${L[@]}" --direct "$src" "b:$NULLDEV") ;;
	o-reverse) CMD=("${L[@]}" -z "$src" "b:$NULLDEV") ;;
	o-viassh) CMD=("${L[@]}" --via-ssh "$src" "b:$NULLDEV") ;;
	o-jump) CMD=("${L[@]}" -J bastion "$src" "b:$NULLDEV") ;;
	o-jump-direct) CMD=("${L[@]}" -J bastion --direct "$src" "b:$NULLDEV") ;;
	star-relay) CMD=("${L[@]}" --relay "a:$src" "b:$NULLDEV") ;;
	star-direct) CMD=("${L[@]}" --direct "$src" "b:$NULLDEV") ;;
	star-relay-b) CMD=("${ns[@]}" "$RELAY_B" -F "$PATHS_CFG" -q -s 16 --relay "a:$src" "b:$NULLDEV") ;;
	*) die "unknown paths config $c" ;;
	esac
}

# paths_rounds CASE PHASES...: each phase "name:cfg,cfg,..."; per round
# every phase (rotated), within it every configuration (rotated).
paths_rounds() {
	local case=$1 r i j k np nc ph cfgs
	shift
	local -a phases=("$@") cl
	np=${#phases[@]}
	for ((r = 0; r < PATHS_RUNS; r++)); do
		log "$case: round $((r + 1))/$PATHS_RUNS"
		for ((i = 0; i < np; i++)); do
			ph=${phases[$(((i + r) % np))]}
			IFS=, read -r -a cl <<<"${ph#*:}"
			[[ ${ph%%:*} != star ]] && paths_filter "${ph%%:*}"
			nc=${#cl[@]}
			for ((j = 0; j < nc; j++)); do
				k=${cl[$(((j + r) % nc))]}
				TOOL='' STREAMS='' BYTES='' TLIMIT=0 OK_ERR='' PRE='' POST='' VERIFY='' VERIFY_TARGET='' RXPID=''
				PRE=paths_pre POST=paths_post PATHS_CUR="$case $k $((r + 1))"
				set_paths "$k"
				measure "$case" "$k" $((r + 1))
			done
		done
	done
}
# Machine-wide CPU over each run (both cores, from /proc/stat: busy =
# total - idle - iowait) and the wanems' CPU (schedstat, not in any
# cgroup of measure), one line per run in $PATHS_CPU:
#   case config run busy_pct wanem_cpu_s
paths_stat() { awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
paths_wanem_cpu() {
	local f p t=0
	for f in "$LC_NS_DIR"/wan/*.pid; do
		read -r p <"$f" 2>/dev/null || continue
		t=$(calc "$t + $(cat /proc/"$p"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { print n / 1e9 + 0 }')")
	done
	echo "$t"
}
PATHS_S0='' PATHS_W0=''
paths_pre() {
	sync
	PATHS_S0=$(paths_stat) PATHS_W0=$(paths_wanem_cpu)
}
paths_post() {
	local s1 w1
	s1=$(paths_stat) w1=$(paths_wanem_cpu)
	echo "$PATHS_CUR $(awk -v a="$PATHS_S0" -v b="$s1" 'BEGIN { split(a, x, " "); split(b, y, " ");
	    t = y[1] - x[1]; printf "%.0f", (t > 0 ? 100 * (1 - (y[2] - x[2]) / t) : 0) }') $(calc "$w1 - $PATHS_W0")" >>"$PATHS_CPU"
}

# Goodput: file bytes / client wall time, MB/s, one line per successful
# run (measure's MBps column counts the IP bytes on b's link instead).
paths_gp() {	# CASE CONFIG
	local b
	b=$(bytes_of "$PATHS_SIZE")
	[[ $2 == f-scp ]] && b=$(bytes_of "$PATHS_SCP_SIZE")
	awk -F, -v c="$1" -v k="$2" -v b="$b" 'NR > 1 && $6 == c && $7 == k && $22 == 0 && $12 > 0 { print b / $12 / 1e6 }' "$CSV"
}

# Table row: config, runs, MB/s median (min-max), wire/steady Mbit/s,
# client and server CPU s per GiB, client RSS, ratio to REF.
paths_row() {	# CASE CONFIG DESC REF
	local case=$1 k=$2 m lo hi st cc sc b ref busy wc
	busy=$(awk -v c="$case" -v k="$k" '$1 == c && $2 == k { print $4 }' "$PATHS_CPU" | median)
	wc=$(awk -v c="$case" -v k="$k" '$1 == c && $2 == k { print $5 }' "$PATHS_CPU" | median)
	m=$(paths_gp "$case" "$k" | median)
	lo=$(paths_gp "$case" "$k" | minof); hi=$(paths_gp "$case" "$k" | maxof)
	st=$(med "$case" "$k" steady_Mbps)
	b=$(bytes_of "$PATHS_SIZE")
	[[ $k == f-scp ]] && b=$(bytes_of "$PATHS_SCP_SIZE")
	cc=$(awk -F, -v c="$case" -v k="$k" -v b="$b" 'NR > 1 && $6 == c && $7 == k && $22 == 0 { print $16 / (b / 1073741824) }' "$CSV" | median)
	sc=$(awk -F, -v c="$case" -v k="$k" -v b="$b" 'NR > 1 && $6 == c && $7 == k && $22 == 0 { print $17 / (b / 1073741824) }' "$CSV" | median)
	ref=$(paths_gp "$case" "$4" | median)
	out "| $3 | $(nruns "$case" "$k") | $(fmt "$m" 1) | $(fmt "$lo" 1)-$(fmt "$hi" 1) | $(fmt "$st" 0) | $(fmt "$cc" 2) | $(fmt "$sc" 2) | $(mib "$(col "$case" "$k" cli_rss_kb | maxof)") | $(fmt "$busy" 0) | $(fmt "$wc" 1) | $(ratio "$m" "$ref") |"
}

# paths_prepare NAME SRC: what both star cases need first: the emulator,
# the namespaces' helpers, the saved state, the CPU record
# (results/STAMP-NAME-cpu.txt) and the source file.
paths_prepare() {
	[[ -x $WANEM ]] || die "wanem not found at $WANEM (set WANEM=)"
	export LC_SRC_DIR=$REPO LC_WANEM=$WANEM
	# shellcheck source=../tests/integration/netns.sh
	. "$REPO/tests/integration/netns.sh"
	paths_save
	PATHS_CPU=$RESULTS/$STAMP-$1-cpu.txt
	: >"$PATHS_CPU"
	zero_file "$PATHS_SIZE" "$2"
}

case_paths() {
	local src=$MEM/paths-$PATHS_SIZE
	out "## Data paths (issue 12) on the emulated $PATHS_PROFILE link"
	out
	out "Memory to memory: $PATHS_SIZE zero-filled tmpfs file (scp: $PATHS_SCP_SIZE) to the private null device,"
	out "\`sync\` before each run. MB/s = file bytes / client wall time, 10^6 B (SSH setup and slow start included;"
	out "a whole copy, not a fixed time); \"steady\" = IP bytes on b's link from 3 s after the start to the end."
	out "CPU s/GiB: client (lanecp or scp in a or c, with its local agent) and server (sshds, agents) per GiB"
	out "copied. Machine busy %: both cores over the run (/proc/stat), wanem CPU s: the emulator(s) over the run"
	out "(counted in neither end). $PATHS_RUNS runs per configuration, interleaved; median and min-max."
	out
	paths_prepare paths "$src"
	[[ $PATHS_SCP_SIZE == "$PATHS_SIZE" ]] || zero_file "$PATHS_SCP_SIZE" "$MEM/paths-$PATHS_SCP_SIZE"

	# --- pair
	lc_netns_up pair "$PATHS_PROFILE" >/dev/null
	PATHS_FILTER=""
	paths_sshd b
	PATHS_RXPID=$LC_SSHD_PID
	paths_sshd a 2022
	PATHS_CFG=$W/paths_ssh_config
	cp "$LC_NS_SSH_CONFIG" "$PATHS_CFG"
	# the bastion: a's sshd on 10.77.0.1:2022, under the name "bastion"
	awk '/^Host / { p = ($2 == "a") } p { if (/^Host /) print "Host bastion"; else print }' \
	    "$LC_NS_SSH_CONFIG" >>"$PATHS_CFG"
	grep -A3 '^Host bastion' "$PATHS_CFG" | grep -q 'Port 2022' || die "bastion config: $(cat "$PATHS_CFG")"
	paths_rounds paths-pair "port22:f-viassh,f-scp" "":o-direct,o-reverse,o-viassh,o-jump,o-jump-direct
	paths_sshds_stop
	lc__netns_wan down >/dev/null 2>&1
	LC_NS_TOPO='' LC_NS_PFX=''

	# --- star
	WAN_PROFILE_CA=$PATHS_CA lc_netns_up star "$PATHS_PROFILE" >/dev/null
	paths_sshd a
	paths_sshd b
	PATHS_RXPID=$LC_SSHD_PID
	PATHS_CFG=$W/paths_ssh_config_star
	cp "$LC_NS_SSH_CONFIG" "$PATHS_CFG"
	paths_rounds paths-star star:star-relay,star-direct
	paths_sshds_stop
	lc__netns_wan down >/dev/null 2>&1
	LC_NS_TOPO='' LC_NS_PFX=''
	PATHS_RXPID=
	paths_restore
	rm -f "$src" "$MEM/paths-$PATHS_SCP_SIZE"

	local hdr="| configuration | runs | MB/s | min-max | steady Mbit/s | client CPU s/GiB | server CPU s/GiB | client RSS MiB (max) |"
	out "### Pair a -> b, lanecp in a"
	out
	out "$hdr machine busy % | wanem CPU s | ÷ direct |"
	out "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
	paths_row paths-pair o-direct "lanecp -s 16 --direct (no filter)" o-direct
	paths_row paths-pair o-reverse "lanecp -s 16 -z (no filter)" o-direct
	paths_row paths-pair o-viassh "lanecp -s 16 --via-ssh (no filter)" o-direct
	paths_row paths-pair f-viassh "lanecp -s 16 --via-ssh (port 22 only)" o-direct
	paths_row paths-pair f-scp "scp -c aes128-gcm, $PATHS_SCP_SIZE (port 22 only)" o-direct
	paths_row paths-pair o-jump "lanecp -s 16 -J bastion (via SSH through it)" o-direct
	paths_row paths-pair o-jump-direct "lanecp -s 16 -J bastion --direct" o-direct
	out
	out "### Star, lanecp in c: link ca $PATHS_CA, link cb $PATHS_PROFILE"
	out
	out "$hdr machine busy % | wanem CPU s | ÷ direct |"
	out "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
	paths_row paths-star star-direct "lanecp -s 16 --direct SRC b:NULL (c -> b)" star-direct
	paths_row paths-star star-relay "lanecp -s 16 --relay a:SRC b:NULL (a -> c -> b)" star-direct
	out
	failures paths-pair
	failures paths-star

	local d z v fv s j jd ov r rd
	d=$(paths_gp paths-pair o-direct | median); z=$(paths_gp paths-pair o-reverse | median)
	fv=$(paths_gp paths-pair f-viassh | median); ov=$(paths_gp paths-pair o-viassh | median)
	s=$(paths_gp paths-pair f-scp | median)
	j=$(paths_gp paths-pair o-jump | median); jd=$(paths_gp paths-pair o-jump-direct | median)
	r=$(paths_gp paths-star star-relay | median); rd=$(paths_gp paths-star star-direct | median)
	target "lfn1g, port 22 only: --via-ssh -s 16 ≥ 6x scp" \
	    "$(fmt "$fv" 1) vs $(fmt "$s" 1) MB/s = $(ratio "$fv" "$s")x" "$(ge "$(ratio "$fv" "$s")" 6)"
	target "lfn1g: --via-ssh -s 16 (port 22 only) ≥ 70% of direct -s 16 (no filter)" \
	    "$(fmt "$fv" 1) vs $(fmt "$d" 1) MB/s = $(ratio "$fv" "$d")" "$(ge "$(ratio "$fv" "$d")" 0.70)"
	target "lfn1g: -z -s 16 ≥ 90% of direct -s 16" \
	    "$(fmt "$z" 1) vs $(fmt "$d" 1) MB/s = $(ratio "$z" "$d")" "$(ge "$(ratio "$z" "$d")" 0.90)"
	target "lfn1g (cb) + fast ca: --relay -s 16 ≥ 90% of direct c -> b" \
	    "$(fmt "$r" 1) vs $(fmt "$rd" 1) MB/s = $(ratio "$r" "$rd")" "$(ge "$(ratio "$r" "$rd")" 0.90)"
	target "lfn1g: -J bastion -s 16 within 10% of --via-ssh -s 16 (no filter)" \
	    "$(fmt "$j" 1) vs $(fmt "$ov" 1) MB/s = $(ratio "$j" "$ov")" "$(ge "$(ratio "$j" "$ov")" 0.90)"
	target "lfn1g: -J bastion --direct -s 16 within 10% of direct -s 16" \
	    "$(fmt "$jd" 1) vs $(fmt "$d" 1) MB/s = $(ratio "$jd" "$d")" "$(ge "$(ratio "$jd" "$d")" 0.90)"
}

# The star with plain veth relay legs (issue 23 item 4).
case_relay() {
	local src=$MEM/paths-$PATHS_SIZE r rd
	out "## The relay, isolated (issue 23 item 4): star, link ca a plain veth, link cb $PATHS_PROFILE"
	out
	out "Memory to memory: $PATHS_SIZE zero-filled tmpfs file to the private null device in b, lanecp in c,"
	out "\`sync\` before each run. Link ca (c <-> a) is a veth pair (no emulator), link cb (c <-> b) the emulated"
	out "$PATHS_PROFILE: the relayed copy a -> c -> b and the direct push c -> b cross the same emulated link, and the"
	out "relay adds its own process and a kernel hop only. MB/s = file bytes / client wall time (SSH setup and"
	out "slow start included); steady = IP bytes on b's link from 3 s after the start. $PATHS_RUNS runs each, interleaved."
	out
	paths_prepare relay "$src"
	WAN_PROFILE_CA=veth lc_netns_up star "$PATHS_PROFILE" >/dev/null
	paths_sshd a
	paths_sshd b
	PATHS_RXPID=$LC_SSHD_PID
	PATHS_CFG=$W/paths_ssh_config_star
	cp "$LC_NS_SSH_CONFIG" "$PATHS_CFG"
	paths_rounds paths-relay "star:star-relay,star-direct${RELAY_B:+,star-relay-b}"
	[[ ${RELAY_PERF:-0} == 1 ]] && relay_perf "$src"
	paths_sshds_stop
	lc__netns_wan down >/dev/null 2>&1
	LC_NS_TOPO='' LC_NS_PFX=''
	PATHS_RXPID=
	paths_restore
	rm -f "$src"
	out "| configuration | runs | MB/s | min-max | steady Mbit/s | client CPU s/GiB | server CPU s/GiB | client RSS MiB (max) | machine busy % | wanem CPU s | ÷ direct |"
	out "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
	paths_row paths-relay star-direct "lanecp -s 16 --direct SRC b:NULL (c -> b)" star-direct
	paths_row paths-relay star-relay "lanecp -s 16 --relay a:SRC b:NULL (a -> c -> b)" star-direct
	[[ -n ${RELAY_B-} ]] && paths_row paths-relay star-relay-b "the same through RELAY_B=$RELAY_B" star-direct
	out
	failures paths-relay
	r=$(paths_gp paths-relay star-relay | median); rd=$(paths_gp paths-relay star-direct | median)
	target "$PATHS_PROFILE (cb) + veth ca: --relay -s 16 ≥ 90% of direct c -> b (issue 23)" \
	    "$(fmt "$r" 1) vs $(fmt "$rd" 1) MB/s = $(ratio "$r" "$rd")" "$(ge "$(ratio "$r" "$rd")" 0.90)"
}

# Untimed diagnosis of the relay (RELAY_PERF=1): one relay run with the
# controller profiled (perf record -g, if perf works here) and its threads'
# CPU (schedstat), and for the relay (RELAY_B's too) and the direct push
# alike the TCP state of c's data sockets at 3, 5 and 7 s into the run
# (ss -tin: Recv-Q and Send-Q, and per socket towards b how long it was
# busy and limited by the peer's window, its send buffer, or neither: the
# application did not give it data), and per snapshot the bytes the relay
# holds: Recv-Q of the sockets from a, and Send-Q (unacknowledged and
# unsent) of those to b.
relay_perf() {
	local src=$1 f=$RESULTS/$STAMP-relay-perf.txt pid p='' t k
	local nsc
	nsc=$(lc_netns_name c)
	: >"$f"
	for k in star-relay ${RELAY_B:+star-relay-b} star-direct; do
		log "relay: one untimed $k run, profiled"
		set_paths "$k"
		sync
		"${CMD[@]}" &
		pid=$!
		sleep 1
		if [[ $k == star-relay ]] && command -v perf >/dev/null; then
			perf record -g -F 499 -p "$pid" -o "$W/relay.perf" >/dev/null 2>&1 &
			p=$!
		fi
		sleep 1
		for t in 3 5 7; do
			{
				echo "# $k: ss -tin in c, $t s into the run (data sockets to b's 10.77.2.2, from a's 10.77.1.2)"
				ip netns exec "$nsc" ss -tinH state established | awk '
				    /^[ \t]/ { if (peer != "" && peer !~ /:22$/) print peer, "recvq/sendq", q, $0; peer = ""; next }
				    { peer = ($4 ~ /^10\.77\.[12]\.2:/) ? $4 : ""; q = $1 " " $2 }' |
				    tee "$W/ss" | awk '{ sub(/^ */, "") } 1'
				awk '$1 ~ /^10\.77\.1\.2:/ { ra += $3 } $1 ~ /^10\.77\.2\.2:/ { sb += $4; n++ }
				    END { printf "# %s: %d streams to b; Recv-Q of the sockets from a %.0f KiB in all, Send-Q of those to b %.0f KiB in all\n", "'"$k"'", n, ra / 1024, sb / 1024 }' "$W/ss"
			} >>"$f"
			sleep 2
		done
		: >"$W/relay-threads"
		while kill -0 "$pid" 2>/dev/null; do
			for t in /proc/"$pid"/task/*; do
				echo "$(cat "$t/comm" 2>/dev/null) $(awk '{ print $1 / 1e9 }' "$t/schedstat" 2>/dev/null)"
			done >"$W/relay-threads.new"
			grep -q '[a-z]' "$W/relay-threads.new" && mv "$W/relay-threads.new" "$W/relay-threads"
			sleep 0.2
		done
		wait "$pid"
		{
			echo "# $k: threads of the controller in c, CPU s (schedstat, last sample before exit)"
			awk 'NF == 2 { n[$1]++; s[$1] += $2 } END { for (k in s) printf "%s x%d %.3f\n", k, n[k], s[k] }' "$W/relay-threads" | sort -k3 -g -r
		} >>"$f"
	done
	if [[ -n $p ]]; then
		wait "$p"
		{ echo "# perf report --no-children of the relay run (top)"; perf report -i "$W/relay.perf" --no-children --sort sym --stdio --call-graph=none 2>/dev/null | grep -v '^$' | head -40; } >>"$f"
	fi
}
