# shellcheck shell=bash
# Start-up cost per SSH transport (issue 22, "Measure"), sourced by
# bench/run.sh (--case startup).  On bench/wan.sh's lfn1g pair (1 Gbit/s,
# 50 ms RTT, 0.1 % loss; client in lc-wan-a, sshd in lc-wan-b), tmpfs to
# tmpfs (/dev/shm; both namespaces share the file system), lanecp's
# defaults otherwise:
#
# 1. one push per run, interleaved round-robin (run_case), of a 4 KiB and
#    a 64 MiB random file: lanecp over libssh2, over ssh (--ssh) with no
#    ControlMaster ("cold"), over ssh through a ControlMaster started
#    before the runs ("warm"), and each of them with --via-ssh; reference
#    rows `ssh HOST true` and scp of the 4 KiB file, cold and warm.
# 2. a cron-like series: N copies of the 4 KiB file (N = STARTUP_SERIES,
#    default 20), one process each, one after the other, to the same
#    target (lanecp -f: it overwrites, as scp does): lanecp over libssh2,
#    lanecp --ssh without and with ControlPersist (the first copy of the
#    series starts the master, the series ends with ssh -O exit), scp
#    without and with ControlPersist.
#
# tcpdump in lc-wan-b captures the TCP headers of the packets from
# lc-wan-a for the whole case (the same clock as measure's t0/t1).  Per
# run, from the capture:
#   first data byte  the first packet from a with >= STARTUP_DATA bytes
#                    of TCP payload (default 4096: only the file's data
#                    fills a segment that far; SSH's and TLS's handshakes,
#                    the boot command and lanecp's own messages do not),
#                    seconds since the process's start, as it arrives at
#                    b (one way, 25 ms, after it left a)
#   first SYN        the first SYN from a, seconds since the start: the
#                    local cost before the network is used (+ 25 ms)
#   TCP connections  SYNs from a (retransmissions not counted): to sshd's
#                    port, and to others (lanecp's data streams)
#   client flights   SYNs and segments with payload from a, grouped where
#                    a pause of STARTUP_GAP (40 ms, under one RTT) or more
#                    separates them: a client waiting for an answer pauses
#                    one RTT, so on an idle machine the flights before the
#                    first data byte count the round trips it paid (a
#                    local pause of 40 ms or more, e.g. CPU, counts too)
# Wall time: the client process, fork to exit (measure).
#
# Environment: STARTUP_TRS (lanecp rows, default "l2 sc sw vl2 vsc vsw";
# also l2pull: a pull, l2h2h: host to host with both ends on the server,
# and b2, b2pull, b2h2h: the same with the lanecp STARTUP_BASE names, an
# earlier build to compare with in the same run), STARTUP_REFS (default
# "true-0 truew-0 scp-4K scpw-4K"; also scppull-4K), STARTUP_SERIES_CFGS
# (default "ser-l2 ser-sc ser-sp ser-scp ser-scpp"),
# STARTUP_SIZES (default "4K 64M"; --quick: 4K),
# STARTUP_SERIES (copies per series, default 20; --quick: 5),
# STARTUP_DATA, STARTUP_GAP (above), STARTUP_PCAP=FILE keeps the capture
# (TCP headers from a, about 10 MB per 64 MiB run).

STARTUP_TRS=${STARTUP_TRS:-l2 sc sw vl2 vsc vsw}
STARTUP_REFS=${STARTUP_REFS:-true-0 truew-0 scp-4K scpw-4K}
STARTUP_SERIES_CFGS=${STARTUP_SERIES_CFGS:-ser-l2 ser-sc ser-sp ser-scp ser-scpp}
STARTUP_BASE=${STARTUP_BASE:-}
STARTUP_RUNS=${RUNS_SET:-5}
STARTUP_REPS=${RUNS_SET:-3}
STARTUP_DATA=${STARTUP_DATA:-4096}
STARTUP_GAP=${STARTUP_GAP:-0.04}	# s: a pause that starts a new client flight
if ((QUICK)); then
	STARTUP_RUNS=${RUNS_SET:-1}
	STARTUP_REPS=${RUNS_SET:-1}
	STARTUP_SIZES=${STARTUP_SIZES:-4K}
	STARTUP_SERIES=${STARTUP_SERIES:-5}
else
	STARTUP_SIZES=${STARTUP_SIZES:-4K 64M}
	STARTUP_SERIES=${STARTUP_SERIES:-20}
fi
STARTUP_CAP_PID=
STARTUP_LOG=
STARTUP_RUNLOG=
STARTUP_SRC=
STARTUP_DST=
STARTUP_SSH_PORT=2222	# wan_sshd_start's

# Per-run figures from the capture (tcpdump's text) and the run log.
startup_py() {
	cat >"$W/startup.py" <<'EOF'
import re, sys, bisect

PKT = re.compile(r'^(\d+\.\d+) IP [0-9.]+\.(\d+) > [0-9.]+\.(\d+): '
                 r'Flags \[([^\]]*)\][^\n]*?, length (\d+)')

def main():
    text, runlog, sshport, th = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    gap = float(sys.argv[5])
    pk = []
    for l in open(text):
        m = PKT.match(l)
        if m:
            pk.append((float(m.group(1)), int(m.group(2)), int(m.group(3)),
                       m.group(4), int(m.group(5))))
    pk.sort()
    ts = [p[0] for p in pk]
    for l in open(runlog):
        f = l.split()
        if not f or f[0].startswith('#'):
            continue
        t0, t1 = float(f[4]), float(f[5])
        syn = fd = None
        ssh, data = set(), set()
        last, fl_all, fl_data = None, 0, None
        for t, sp, dp, fl, n in pk[bisect.bisect_left(ts, t0):bisect.bisect_right(ts, t1)]:
            if fl == 'S':
                (ssh if dp == sshport else data).add(sp)
                if syn is None:
                    syn = t - t0
            if fl == 'S' or n > 0:
                # a flight: SYNs and segments with payload, after a pause
                # of FLIGHT_GAP or more since the previous one
                if last is None or t - last >= gap:
                    fl_all += 1
                last = t
            if fd is None and n >= th:
                fd = t - t0
                fl_data = fl_all - 1
        fmt = lambda v: '-' if v is None else '%.3f' % v
        print(' '.join(f), fmt(syn), fmt(fd), len(ssh), len(data),
              '-' if fl_data is None else fl_data, fl_all)

main()
EOF
}

startup_capture_start() {
	local i
	: >"$W/tcpdump.err"
	ip netns exec "$WAN_PFX-b" tcpdump -i lcwb -n -Z root -s 128 -B 8192 -U \
	    -w "$W/startup.pcap" "tcp and src host 10.77.0.1" </dev/null 2>"$W/tcpdump.err" &
	STARTUP_CAP_PID=$!
	BG_PIDS+=("$STARTUP_CAP_PID")
	for ((i = 0; i < 50; i++)); do
		grep -q 'listening on' "$W/tcpdump.err" && return 0
		kill -0 "$STARTUP_CAP_PID" 2>/dev/null || break
		sleep 0.1
	done
	die "tcpdump in $WAN_PFX-b did not start: $(cat "$W/tcpdump.err")"
}

# The ssh_config files: plain (no ControlMaster: "cold"), warm (a client
# of the master started by startup_master_start; ControlMaster no, so a
# run without the master would connect by itself, and show it in the
# TCP connections column) and persist (the cron case: the first ssh
# becomes the master and stays for 60 s).
startup_configs() {
	local save=$LC_SSH_HOST
	mkdir -p "$W/cm"
	LC_SSH_HOST=lcwan
	lc_ssh_config "$W/ssh_config_st_warm" HostName=10.77.0.2 Port=$STARTUP_SSH_PORT \
	    ControlMaster=no ControlPath="$W/cm/warm-%C"
	lc_ssh_config "$W/ssh_config_st_persist" HostName=10.77.0.2 Port=$STARTUP_SSH_PORT \
	    ControlMaster=auto ControlPath="$W/cm/persist-%C" ControlPersist=60
	LC_SSH_HOST=$save
}
# The warm master: started once, untimed, in the client cgroup (its CPU is
# the runs' client CPU); its sshd session processes stay, so they are
# resident servers for server_idle.
startup_master_start() {
	local p
	(cg_join client; exec ip netns exec "$WAN_PFX-a" ssh -F "$W/ssh_config_st_warm" \
	    -o ControlMaster=yes -o ControlPersist=yes -fN lcwan) </dev/null >/dev/null 2>"$W/master.err" ||
		die "the ControlMaster did not start: $(cat "$W/master.err")"
	ip netns exec "$WAN_PFX-a" ssh -F "$W/ssh_config_st_warm" -O check lcwan 2>/dev/null ||
		die "the ControlMaster does not answer"
	sleep 0.5	# its session on the server side settles
	for p in $(cat "$CG/server/cgroup.procs" 2>/dev/null); do
		[[ $SRV_RESIDENT == *" $p "* ]] && continue
		SRV_RESIDENT+="$p "
		SRV_LISTENERS+="$p "
	done
}
startup_master_stop() {
	ip netns exec "$WAN_PFX-a" ssh -F "$W/ssh_config_st_warm" -O exit lcwan >/dev/null 2>&1
	ip netns exec "$WAN_PFX-a" ssh -F "$W/ssh_config_st_persist" -O exit lcwan >/dev/null 2>&1
	return 0
}
startup_down() {
	startup_master_stop
	[[ -n $STARTUP_CAP_PID ]] && stop_pid "$STARTUP_CAP_PID"
	STARTUP_CAP_PID=
}

# The series runner: N copies, "start end" per copy on stdout; with a
# config given, ssh -O exit on it at the end (the master of ControlPersist).
STARTUP_LOOP='n=$1 x=$2; shift 2
for ((i = 0; i < n; i++)); do
	s=$EPOCHREALTIME
	"$@" || exit
	echo "$s $EPOCHREALTIME"
done
[ -z "$x" ] || ssh -F "$x" -O exit lcwan 2>/dev/null
exit 0'

declare -A STARTUP_DESC=(
	[l2]="lanecp (libssh2)"
	[sc]="lanecp --ssh, cold"
	[sw]="lanecp --ssh, warm ControlMaster"
	[vl2]="lanecp --via-ssh (libssh2)"
	[vsc]="lanecp --ssh --via-ssh, cold"
	[vsw]="lanecp --ssh --via-ssh, warm ControlMaster"
	[l2pull]="lanecp (libssh2), pull"
	[l2h2h]="lanecp (libssh2), host to host (both ends on the server)"
	[b2]="lanecp (libssh2), STARTUP_BASE"
	[b2pull]="lanecp (libssh2), pull, STARTUP_BASE"
	[b2h2h]="lanecp (libssh2), host to host, STARTUP_BASE"
	[scppull]="scp, cold, pull"
	[true]="ssh HOST true, cold"
	[truew]="ssh HOST true, warm ControlMaster"
	[scp]="scp, cold"
	[scpw]="scp, warm ControlMaster"
	[ser-l2]="lanecp (libssh2)"
	[ser-sc]="lanecp --ssh, no ControlPersist"
	[ser-sp]="lanecp --ssh, ControlPersist"
	[ser-scp]="scp, no ControlPersist"
	[ser-scpp]="scp, ControlPersist"
)

startup_pre() {
	rm -rf "${STARTUP_DST:?}"/* 2>/dev/null
	sync
}
startup_post() {
	local tot=- first=- later=-
	if [[ $cfg == ser-* && $rc == 0 ]]; then
		if [[ $(awk 'NF == 2' "$W/cli.out" | wc -l) == "$STARTUP_SERIES" ]]; then
			tot=$(awk 'NF == 2 { if (a == "") a = $1; e = $2 } END { printf "%.3f", e - a }' "$W/cli.out")
			first=$(awk 'NF == 2 { printf "%.3f", $2 - $1; exit }' "$W/cli.out")
			later=$(awk 'NF == 2 && n++ { print $2 - $1 }' "$W/cli.out" | median)
		else
			rc=98
			log "  $cfg run $run: $(awk 'NF == 2' "$W/cli.out" | wc -l) of $STARTUP_SERIES copies done"
		fi
	fi
	echo "$case $cfg $run $rc $t0 $t1 $tot $first $later" >>"$STARTUP_LOG"
	rm -rf "${STARTUP_DST:?}"/* 2>/dev/null
}

set_startup() {	# CONFIG: TR-SIZE (TR: l2 sc sw vl2 vsc vsw true truew scp scpw) or ser-TR
	local c=$1 tr z src dst
	local -a ns=(ip netns exec "$WAN_PFX-a") pl=(-F "$W/ssh_config_wan") pw=(-F "$W/ssh_config_st_warm")
	tr=${c%-*} z=${c##*-}
	PRE=startup_pre POST=startup_post
	STREAMS=1
	if [[ $c == ser-* ]]; then
		tr=$c z=4K
	fi
	src=$STARTUP_SRC/f-$z dst=$STARTUP_DST/f-$z
	BYTES=$(bytes_of "$z")
	VERIFY=$src VERIFY_TARGET=$dst
	case $tr in
	l2 | l2pull | l2h2h) CMD=("$LANECP" "${pl[@]}" -q) ;;
	b2 | b2pull | b2h2h) CMD=("$STARTUP_BASE" "${pl[@]}" -q) ;;
	scppull) CMD=(scp -q "${pl[@]}") ;;
	sc) CMD=("$LANECP" "${pl[@]}" -q --ssh) ;;
	sw) CMD=("$LANECP" "${pw[@]}" -q --ssh) ;;
	vl2) CMD=("$LANECP" "${pl[@]}" -q --via-ssh) ;;
	vsc) CMD=("$LANECP" "${pl[@]}" -q --ssh --via-ssh) ;;
	vsw) CMD=("$LANECP" "${pw[@]}" -q --ssh --via-ssh) ;;
	true) CMD=(ssh "${pl[@]}" lcwan true) VERIFY='' ;;
	truew) CMD=(ssh "${pw[@]}" lcwan true) VERIFY='' ;;
	scp) CMD=(scp -q "${pl[@]}") ;;
	scpw) CMD=(scp -q "${pw[@]}") ;;
	ser-l2) CMD=("$LANECP" "${pl[@]}" -q -f) ;;
	ser-sc) CMD=("$LANECP" "${pl[@]}" -q -f --ssh) ;;
	ser-sp) CMD=("$LANECP" -F "$W/ssh_config_st_persist" -q -f --ssh) ;;
	ser-scp) CMD=(scp -q "${pl[@]}") ;;
	ser-scpp) CMD=(scp -q -F "$W/ssh_config_st_persist") ;;
	esac
	case ${CMD[0]} in
	"$LANECP" | "$STARTUP_BASE") TOOL=lanecp ;;
	*) TOOL=${CMD[0]} ;;
	esac
	case $tr in
	true*) ;;
	*pull) CMD+=("lcwan:$src" "$dst") ;;
	*h2h) CMD+=("lcwan:$src" "lcwan:$dst") ;;
	*) CMD+=("$src" "lcwan:$dst") ;;
	esac
	if [[ $c == ser-* ]]; then
		local x=
		[[ $c == ser-sp || $c == ser-scpp ]] && x=$W/ssh_config_st_persist
		CMD=(bash -c "$STARTUP_LOOP" loop "$STARTUP_SERIES" "$x" "${CMD[@]}")
	fi
	CMD=("${ns[@]}" "${CMD[@]}")
}

# Values from the per-run file for CASE CONFIG (successful runs): an awk
# expression over its fields ($5 t0, $6 t1, $7 series total, $8 first
# copy, $9 later copies' median, $10 first SYN, $11 first data byte, $12
# TCP connections to sshd, $13 to other ports, $14 client flights before
# the first data byte, $15 in all).
startup_vals() {	# CASE CONFIG EXPR
	awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 { print '"$3"' }' "$STARTUP_RUNLOG" | awk '$1 != "-"'
}
startup_nruns() {	# CASE CONFIG: "successful/all" (a series short of copies failed)
	awk -v c="$1" -v k="$2" '$1 == c && $2 == k { n++; if ($4 == 0) ok++ } END { printf "%d/%d", ok, n }' "$STARTUP_RUNLOG"
}
startup_conns() {	# CASE CONFIG: "ssh + data" (medians)
	local a b
	a=$(startup_vals "$1" "$2" '$12' | median)
	b=$(startup_vals "$1" "$2" '$13' | median)
	[[ $a == - ]] && { echo -; return; }
	echo "$(fmt "$a" 0) + $(fmt "$b" 0)"
}

case_startup() {
	local c k z tr ref w fd
	local -a cfgs=() scfgs=()
	out "## Start-up per SSH transport (issue 22): the emulated lfn1g link ($("$HERE/wan.sh" profiles | awk '$1 == "lfn1g" { $1 = ""; sub(/^ +/, ""); print }'))"
	out
	out "Client in lc-wan-a, sshd in lc-wan-b (\`SetEnv SHLVL=1\`), lanecp's defaults (TLS, -s 4), random files"
	out "from tmpfs to tmpfs. Wall: the client process from fork to exit. First data byte: the first packet from the"
	out "client's side with >= $STARTUP_DATA bytes of TCP payload, as it arrives at the server's side (tcpdump in lc-wan-b),"
	out "since fork; first SYN: the first TCP SYN, likewise (one way is 25 ms). TCP connections: SYNs to sshd's port +"
	out "to other ports (lanecp's data streams). Client flights: the client's SYNs and segments with payload, grouped where a pause"
	out "of $(fmt "$(calc "$STARTUP_GAP * 1000")" 0) ms or more separates them (a client that waits for an answer pauses one RTT): before the first"
	out "data byte / in all, about the round trips paid (a local pause that long counts too). Warm ControlMaster: \`ssh -fN -o ControlMaster=yes -o ControlPersist=yes\`"
	out "started before the runs; the runs' config has its ControlPath. Runs per configuration: $STARTUP_RUNS, interleaved"
	out "round-robin; medians (min-max). Before the runs, one untimed copy over each transport."
	out
	[[ -x $WANEM ]] || die "wanem not found at $WANEM (set WANEM=)"
	command -v python3 >/dev/null || die "the startup case needs python3"
	command -v tcpdump >/dev/null || die "the startup case needs tcpdump"
	if wan_sh status >/dev/null 2>&1; then
		die "an emulated WAN is already up (bench/wan.sh status): someone else may be using it; not touching it"
	fi
	startup_py
	STARTUP_LOG=$W/startup.runs
	: >"$STARTUP_LOG"
	STARTUP_SRC=$(mktemp -d /dev/shm/lanecp-st-src.XXXXXX) || die "mktemp /dev/shm failed"
	STARTUP_DST=$(mktemp -d /dev/shm/lanecp-st-dst.XXXXXX) || die "mktemp /dev/shm failed"
	lc_on_exit "rm -rf '$STARTUP_SRC' '$STARTUP_DST'"
	[[ -z ${STARTUP_BASE-} || -x ${STARTUP_BASE-} ]] || die "STARTUP_BASE=$STARTUP_BASE is not executable"
	for z in 4K $STARTUP_SIZES; do
		[[ -e $STARTUP_SRC/f-$z ]] || head -c "$(bytes_of "$z")" /dev/urandom >"$STARTUP_SRC/f-$z"
	done
	chmod 0644 "$STARTUP_SRC"/*
	WAN_UP=1
	lc_on_exit wan_down
	lc_on_exit startup_down
	wan_sh up lfn1g >&2 || die "bench/wan.sh up lfn1g failed"
	wan_sshd_start
	startup_configs
	# untimed: the first connection of each kind (known_hosts lookups,
	# page-cached binaries, the remote lanecp)
	for c in "" --ssh; do
		ip netns exec "$WAN_PFX-a" "$LANECP" -F "$W/ssh_config_wan" -q $c "$STARTUP_SRC/f-4K" "lcwan:$STARTUP_DST/warmup$c" </dev/null >/dev/null 2>"$W/warmup.err" ||
			die "lanecp ${c:-(libssh2)} to $WAN_PFX-b failed (untimed warm-up): $(cat "$W/warmup.err")"
	done
	if [[ -n $STARTUP_BASE ]]; then	# its own agent in the cache
		ip netns exec "$WAN_PFX-a" "$STARTUP_BASE" -F "$W/ssh_config_wan" -q "$STARTUP_SRC/f-4K" "lcwan:$STARTUP_DST/warmup-base" </dev/null >/dev/null 2>"$W/warmup.err" ||
			die "STARTUP_BASE to $WAN_PFX-b failed (untimed warm-up): $(cat "$W/warmup.err")"
	fi
	server_idle
	startup_master_start
	startup_capture_start

	for z in $STARTUP_SIZES; do
		for tr in $STARTUP_TRS; do cfgs+=("$tr-$z"); done
	done
	for tr in $STARTUP_REFS; do cfgs+=("$tr"); done
	local save_runs=$RUNS
	RUNS=$STARTUP_RUNS
	run_case startup set_startup "${cfgs[@]}"
	startup_master_stop
	for tr in $STARTUP_SERIES_CFGS; do scfgs+=("$tr"); done
	RUNS=$STARTUP_REPS
	run_case startup-series set_startup "${scfgs[@]}"
	RUNS=$save_runs
	sleep 0.3	# the last packets into the capture
	startup_down
	wan_down
	tcpdump -r "$W/startup.pcap" -n -tt 2>/dev/null >"$W/startup.pcap.txt"
	[[ -n ${STARTUP_PCAP-} ]] && cp "$W/startup.pcap" "$STARTUP_PCAP"
	STARTUP_RUNLOG=$RESULTS/$STAMP-startup.txt
	{
		echo "# case config run rc t0 t1 series_total_s first_copy_s later_copies_median_s first_syn_s first_data_s tcp_to_sshd tcp_other flights_before_data flights_all"
		python3 "$W/startup.py" "$W/startup.pcap.txt" "$STARTUP_LOG" "$STARTUP_SSH_PORT" "$STARTUP_DATA" "$STARTUP_GAP"
	} >"$STARTUP_RUNLOG" || die "startup.py failed"

	# --- the tables
	out "| configuration | file | runs | wall s | first data byte s | first SYN s | TCP connections (sshd + data) | client flights: before data / in all | wall ÷ libssh2 | first data ÷ libssh2 | CPU s (client+server) |"
	out "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for k in "${cfgs[@]}"; do
		tr=${k%-*} z=${k##*-}
		ref=l2-$z
		[[ $tr == true* || $tr == scp* ]] && ref=l2-4K
		[[ $tr == *pull ]] && ref=l2pull-$z
		[[ $tr == *h2h ]] && ref=l2h2h-$z
		w=$(startup_vals startup "$k" '$6 - $5' | median)
		fd=$(startup_vals startup "$k" '$11' | median)
		out "| ${STARTUP_DESC[$tr]} | $([[ $z == 0 ]] && echo - || echo "$z") | $(startup_nruns startup "$k") | $(startup_vals startup "$k" '$6 - $5' | mm 3) | $(startup_vals startup "$k" '$11' | mm 3) | $(startup_vals startup "$k" '$10' | mm 3) | $(startup_conns startup "$k") | $(fmt "$(startup_vals startup "$k" '$14' | median)" 0) / $(fmt "$(startup_vals startup "$k" '$15' | median)" 0) | $(ratio "$w" "$(startup_vals startup "$ref" '$6 - $5' | median)") | $(ratio "$fd" "$(startup_vals startup "$ref" '$11' | median)") | $(cpu_cell startup "$k") |"
	done
	out
	failures startup
	out "Cron-like series: $STARTUP_SERIES copies of the 4 KiB file to one host, one process each, one after the other (one"
	out "process per copy, as cron would start them). Total: the first copy's start to the last one's end; ControlPersist"
	out "(60 s): the first copy starts the master, the next ones use it (the series then ends with \`ssh -O exit\`, not"
	out "counted). Repetitions: $STARTUP_REPS, interleaved; medians (min-max)."
	out
	out "| configuration | repetitions | $STARTUP_SERIES copies, total s | per copy s | first copy s | later copies s (median) | TCP connections per series (sshd + data) | total ÷ libssh2 |"
	out "|---|---|---:|---:|---:|---:|---:|---:|"
	local lt
	lt=$(startup_vals startup-series ser-l2 '$7' | median)
	for k in "${scfgs[@]}"; do
		w=$(startup_vals startup-series "$k" '$7' | median)
		out "| ${STARTUP_DESC[$k]} | $(startup_nruns startup-series "$k") | $(startup_vals startup-series "$k" '$7' | mm 2) | $(fmt "$(awk -v w="$w" -v n="$STARTUP_SERIES" 'BEGIN { if (w == "-") print "-"; else print w / n }')" 3) | $(startup_vals startup-series "$k" '$8' | mm 3) | $(startup_vals startup-series "$k" '$9' | mm 3) | $(startup_conns startup-series "$k") | $(ratio "$w" "$lt") |"
	done
	out
	failures startup-series
	c=$(awk -v n="$STARTUP_SERIES" '$1 == "startup-series" && $4 == 98 { printf "- %s, run %s: fewer than %d copies ended\n", $2, $3, n }' "$STARTUP_RUNLOG")
	[[ -z $c ]] || { out "Series left out of the medians:"; out; out "$c"; out; }
	out "Per-run figures: \`$(basename "$RESULTS")/$(basename "$STARTUP_RUNLOG")\`."
	out
}
