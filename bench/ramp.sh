# shellcheck shell=bash
# The ramp of a whole copy on an emulated long fat pipe (issue 13 part 2,
# "the long fat pipe is not full"), sourced by bench/run.sh (--case ramp,
# ramp-lfn1g, ramp-wan200m).
#
# End to end and memory to memory: a zero-filled tmpfs file (/dev/shm) to
# the private null device in lc-wan-b, the client's wall time from fork to
# exit (SSH setup, TLS handshakes and slow start included), through
# bench/wan.sh's pair (lc-wan-a 10.77.0.1 -> wanem -> lc-wan-b 10.77.0.2).
#
# Configurations per size (interleaved round-robin by run_case, each round
# starting one configuration later): lanecp -s 16, lanecp -s 32 (both -v,
# stderr kept for the sink's head-of-line line) and iperf3 -P 16 -t T.
#
# A link sampler (python3, under ip netns exec lc-wan-b) reads lcwb's
# received bytes from /proc/net/dev every 50 ms for the whole case (one
# file, wall-clock stamps, the same clock as measure's t0/t1).  From it,
# per run:
#   link Mbit/s    IP bytes received on lcwb over the run's wall time (as
#                  the WAN case); goodput = file bytes x 8 / wall time
#   first data     the start of the first 50 ms sample interval whose rate
#                  is over 1 MB/s above the idle background (the rate over
#                  the 1 s before the run), from the process's start
#   iperf3, same duration
#                  iperf3 runs -t T, T = the size at 75 % of the link rate,
#                  rounded up, + 2 s, or the longest lanecp -s 16 copy of
#                  that size so far + 2-3 s if that is longer (so T
#                  outlasts the copy it is compared with); its link
#                  bytes are counted over its first W seconds, W = the
#                  median wall time of lanecp -s 16 at that size: both tools
#                  get the same W seconds from process start (connection
#                  setup and slow start in both).  iperf3 over its own
#                  whole run is shown too.

RAMP_RUNS=${RUNS_SET:-5}
if ((QUICK)); then
	RAMP_RUNS=${RUNS_SET:-1}
	RAMP_SIZES=${RAMP_SIZES:-256M}
	RAMP_SIZES_WAN200M=${RAMP_SIZES_WAN200M:-256M}
else
	RAMP_SIZES=${RAMP_SIZES:-512M 2G}
	RAMP_SIZES_WAN200M=${RAMP_SIZES_WAN200M:-512M}
fi
RAMP_BUCKET=${RAMP_BUCKET:-0.1}	# plot bucket, seconds
RAMP_SAMPLES=
RAMP_SAMPLER_PID=
RAMP_RUNLOG=

# The helper: link sampler and the sums over its samples.
ramp_py() {
	cat >"$W/ramp.py" <<'EOF'
import sys, time, signal

def sample(iface, out):
    # "epoch_seconds rx_bytes" every 50 ms (absolute schedule, no drift)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    f = open(out, "w", buffering=1)
    key = iface + ":"
    nxt = time.time()
    while not stop:
        b = -1
        with open("/proc/net/dev") as s:
            for l in s:
                l = l.strip()
                if l.startswith(key):
                    b = int(l[len(key):].split()[0])
                    break
        f.write("%.4f %d\n" % (time.time(), b))
        nxt += 0.05
        d = nxt - time.time()
        if d > 0:
            time.sleep(d)
        else:
            nxt = time.time()

def load(path):
    rows = []
    for l in open(path):
        p = l.split()
        if len(p) == 2 and int(p[1]) >= 0:
            rows.append((float(p[0]), int(p[1])))
    return rows

def at(rows, t):
    # rx bytes at time t, interpolated between the samples around it
    lo, hi = 0, len(rows) - 1
    if t <= rows[0][0]:
        return rows[0][1]
    if t >= rows[hi][0]:
        return rows[hi][1]
    while hi - lo > 1:
        m = (lo + hi) // 2
        if rows[m][0] <= t:
            lo = m
        else:
            hi = m
    (ta, ba), (tb, bb) = rows[lo], rows[hi]
    return ba + (bb - ba) * (t - ta) / (tb - ta) if tb > ta else bb

def first_data(rows, t0, t1):
    # background: rate over [t0 - 1, t0]; first 50 ms interval after t0
    # over background + 1 MB/s; seconds from t0 to its start, or "-"
    bg = max(0.0, at(rows, t0) - at(rows, t0 - 1.0))
    prev = None
    for t, b in rows:
        if t < t0:
            continue
        if t > t1:
            break
        if prev is not None and t > prev[0]:
            if (b - prev[1]) / (t - prev[0]) > bg + 1e6:
                return "%.3f" % (max(prev[0], t0) - t0)
        prev = (t, b)
    return "-"

def main():
    cmd = sys.argv[1]
    if cmd == "sample":
        sample(sys.argv[2], sys.argv[3])
        return
    rows = load(sys.argv[2])
    if len(rows) < 2:
        print("- -")
        return
    if cmd == "run":            # SAMPLES T0 T1 -> first_data_s link_bytes
        t0, t1 = float(sys.argv[3]), float(sys.argv[4])
        print(first_data(rows, t0, t1), "%.0f" % (at(rows, t1) - at(rows, t0)))
    elif cmd == "window":       # SAMPLES T0 W -> link bytes in [T0, T0+W]
        t0, w = float(sys.argv[3]), float(sys.argv[4])
        print("%.0f" % (at(rows, t0 + w) - at(rows, t0)))
    elif cmd == "series":       # SAMPLES T0 T1 BUCKET -> "t Mbit/s" lines
        t0, t1, step = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
        t = t0
        while t < t1 - 1e-9:
            e = min(t + step, t1)
            print("%.3f %.1f" % (t - t0 + (e - t) / 2,
                                 (at(rows, e) - at(rows, t)) * 8 / 1e6 / (e - t)))
            t = e

main()
EOF
}

ramp_sampler_start() {
	RAMP_SAMPLES=$W/ramp-$1.samples
	: >"$RAMP_SAMPLES"
	ip netns exec "$WAN_PFX-b" python3 "$W/ramp.py" sample lcwb "$RAMP_SAMPLES" </dev/null 2>"$W/ramp-sampler.err" &
	RAMP_SAMPLER_PID=$!
	BG_PIDS+=("$RAMP_SAMPLER_PID")
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s $RAMP_SAMPLES ]] && break
		sleep 0.1
	done
	[[ -s $RAMP_SAMPLES ]] || die "the link sampler did not start: $(cat "$W/ramp-sampler.err")"
	sleep 1.1	# one second of background before the first run
}
ramp_sampler_stop() {
	local i
	[[ -n $RAMP_SAMPLER_PID ]] || return 0
	kill -TERM "$RAMP_SAMPLER_PID" 2>/dev/null	# it ends its loop on TERM
	for ((i = 0; i < 20; i++)); do
		kill -0 "$RAMP_SAMPLER_PID" 2>/dev/null || break
		sleep 0.1
	done
	wait "$RAMP_SAMPLER_PID" 2>/dev/null
	stop_pid "$RAMP_SAMPLER_PID"
	RAMP_SAMPLER_PID=
}

# iperf3 -t for SIZE on a link of RATE Mbit/s: the copy at 75 % of the link
# rate, rounded up, + 2 s (setup: a second to the first data byte on a
# loaded machine), so that it outlasts the copies it is compared with.
ramp_iperf_t() {	# SIZE RATE
	awk -v b="$(bytes_of "$1")" -v r="$2" 'BEGIN { t = b * 8 / (0.75 * r * 1e6); printf "%d", (t == int(t) ? t : int(t) + 1) + 2 }'
}

RAMP_PROF='' RAMP_RATE='' RAMP_CASE=''
declare -A RAMP_T_USED=()	# SIZE -> the iperf3 -t values used
set_ramp() {	# CONFIG: l16-SIZE, l32-SIZE, i16-SIZE
	local c=$1 z=${1#*-} s
	local -a ns=(ip netns exec "$WAN_PFX-a")
	s=${c%%-*}; s=${s#?}
	BYTES=$(bytes_of "$z")
	STREAMS=$s
	RXPID=$WAN_SSHD_PID
	POST=ramp_post
	case $c in
	l*)
		TOOL=lanecp
		CMD=("${ns[@]}" "$LANECP" -F "$W/ssh_config_wan" -v -s "$s" "$MEM/ramp-$z" "lcwan:$NULLDEV") ;;
	i*)
		TOOL=iperf3
		local t w
		t=$(ramp_iperf_t "$z" "$RAMP_RATE")
		# longer still if a copy of this size already took longer
		w=$(ramp_vals "$RAMP_CASE" "l16-$z" '$6 - $5' | maxof)
		[[ $w != - ]] && t=$(awk -v t="$t" -v w="$w" 'BEGIN { w = int(w) + 3; print (w > t ? w : t) }')
		RAMP_T_USED[$z]+="$t "
		CMD=("${ns[@]}" iperf3 -c 10.77.0.2 -p "$IPERF_PORT" -P "$s" -t "$t")
		TLIMIT=$((t + 15)) ;;	# a guard only; iperf3 ends itself at -t
	esac
}
# After each run (called by measure, whose locals t0, t1, rc, err, case, cfg
# and run it reads): one line per run in RAMP_RUNLOG:
#   case cfg run rc t0 t1 first_data_s link_bytes wait_s streams
#   quota_from quota_to quota_max_one_stream hol_s
# from the sink's -v line, since fe07f59:
#   head-of-line: streams waited 4.29 s in all for a buffer (16 streams);
#   quotas grew from 32 to 96 blocks of 1024 KiB in all (at most 12 on one
#   stream)
# or before it (quota_* "-", hol_s = "all streams but one waited ... for"):
#   head-of-line: all streams but one waited on the ordered writer for
#   0.00 s (quotas of 2 x 1024 KiB per stream); 13.23 s of waiting summed
#   over the 16 streams
ramp_post() {
	local fd lb hol=- wt=- nst=- qa=- qb=- qm=- l
	read -r fd lb < <(python3 "$W/ramp.py" run "$RAMP_SAMPLES" "$t0" "$t1")
	l=$(grep -E 'head-of-line: ' "$err" | tail -n 1)
	if [[ $l =~ streams\ waited\ ([0-9.]+)\ s\ in\ all\ for\ a\ buffer\ \(([0-9]+)\ streams\) ]]; then
		wt=${BASH_REMATCH[1]} nst=${BASH_REMATCH[2]}
		if [[ $l =~ quotas\ grew\ from\ ([0-9]+)\ to\ ([0-9]+)\ blocks.*at\ most\ ([0-9]+)\ on\ one ]]; then
			qa=${BASH_REMATCH[1]} qb=${BASH_REMATCH[2]} qm=${BASH_REMATCH[3]}
		fi
	elif [[ $l =~ writer\ for\ ([0-9.]+)\ s.*\;\ ([0-9.]+)\ s\ of\ waiting\ summed\ over\ the\ ([0-9]+)\ streams ]]; then
		hol=${BASH_REMATCH[1]} wt=${BASH_REMATCH[2]} nst=${BASH_REMATCH[3]}
	elif [[ $TOOL == lanecp && $rc == 0 ]]; then
		log "  $cfg run $run: no head-of-line line in lanecp -v's output"
	fi
	cp "$err" "$W/ramp-$case-$cfg-$run.err" 2>/dev/null
	echo "$case $cfg $run $rc $t0 $t1 ${fd:--} ${lb:--} $wt $nst $qa $qb $qm $hol" >>"$RAMP_RUNLOG"
	log "  $cfg run $run: $(fmt "$(calc "$t1 - $t0")" 2) s, first data byte at ${fd:--} s$([[ $wt != - ]] && echo ", streams waiting on the writer $(fmt "$(calc "100 * $wt / ($nst * ($t1 - $t0))")" 0) %")$([[ $qb != - ]] && echo ", quotas $qa -> $qb blocks")"
}
# Values from RAMP_RUNLOG for CASE CONFIG (successful runs): field N, or
# an awk expression over the fields ($5 t0, $6 t1, $7 first data, $8 link
# bytes, $9 wait s, $10 streams, $11-$13 quotas, $14 old hol s).
ramp_vals() {	# CASE CONFIG EXPR
	awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 && $8 != "-" { print '"$3"' }' "$RAMP_RUNLOG" | awk '$1 != "-"'
}
ramp_hol_vals() {	# CASE CONFIG: % of stream-seconds waiting on the writer
	awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 && $9 != "-" && $10 > 0 { print 100 * $9 / ($10 * ($6 - $5)) }' "$RAMP_RUNLOG"
}
# The iperf3 -t values used for SIZE: "T" or "T1-T2".
ramp_t_range() {	# SIZE
	local v
	v=$(tr ' ' '\n' <<<"${RAMP_T_USED[$1]-}" | awk 'NF')
	[[ -n $v ]] || { ramp_iperf_t "$1" "$RAMP_RATE"; return; }
	awk 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 } END { if (lo == hi) print lo; else print lo "-" hi }' <<<"$v"
}
# "start -> median end (min-max) (max on one stream)" of the sink's quotas.
# link_plot_run DAT T0 T1 FD COLOUR LW TITLE [BAR]: add one run's link
# series (its samples from T0 to T1 in RAMP_BUCKET buckets) to the
# caller's plots/labels/n/tmax: a dashed line at its first data byte FD
# (unless "-"), and with BAR (default 1) a bar at the bottom at its exit.
link_plot_run() {
	local dat=$1 t0=$2 t1=$3 fd=$4 col=$5 lw=$6 title=$7 bar=${8:-1} d
	d=$(calc "$t1 - $t0")
	python3 "$W/ramp.py" series "$RAMP_SAMPLES" "$t0" "$t1" "$RAMP_BUCKET" >"$dat"
	tmax=$(awk -v a="$tmax" -v b="$d" 'BEGIN { print (b > a ? b : a) }')
	plots+=("\"$dat\" using 1:2 with steps lw $lw lc rgb \"$col\" title \"$title (first data byte $fd s, exit $(fmt "$d" 2) s)\"")
	if [[ $fd != - ]]; then
		n=$((n + 1))
		labels+=("set arrow $n from $fd, graph 0 to $fd, graph 1 nohead dt 2 lc rgb \"$col\"")
	fi
	if ((bar)); then
		n=$((n + 1))
		labels+=("set arrow $n from $d, graph 0 to $d, graph 0.15 nohead lw 2 lc rgb \"$col\"")
	fi
}

# link_plot PNG RATE TITLE XLABEL: draw the caller's plots and labels
# (link_plot_run) against the link rate RATE Mbit/s; 0 when PNG was made.
link_plot() {
	local png=$1 rate=$2
	gnuplot <<EOF 2>"$W/gnuplot.err" || log "gnuplot failed: $(cat "$W/gnuplot.err")"
set terminal pngcairo size 1000,560 font "sans,11"
set output "$png"
set title "$3"
set xlabel "$4"
set ylabel "Mbit/s on lc-wan-b's link (IP bytes, ${RAMP_BUCKET} s buckets)"
set xrange [0:$(awk -v t="$tmax" 'BEGIN { printf "%d", t + 1 }')]
set yrange [0:$((rate * 14 / 10))]
set key top right
set grid
$(printf '%s\n' "${labels[@]}")
link = $rate
plot $(IFS=,; echo "${plots[*]}"), link with lines lw 1 lc rgb "black" title "link rate"
EOF
	[[ -s $png ]]
}

ramp_quota_cell() {	# CASE CONFIG
	local a
	a=$(awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 && $11 != "-" && $11 != "" { print $11; exit }' "$RAMP_RUNLOG")
	[[ -n $a ]] || { echo -; return; }
	echo "$a -> $(awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 && $12 != "-" && $12 != "" { print $12 }' "$RAMP_RUNLOG" | mm 0), ≤ $(awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 && $13 != "-" && $13 != "" { print $13 }' "$RAMP_RUNLOG" | maxof) on one stream"
}
# iperf3's link bytes over the first W seconds of each of its runs, Mbit/s.
ramp_iperf_window() {	# CASE CONFIG W
	local t0 t1 b
	awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 { print $5, $6 }' "$RAMP_RUNLOG" |
		while read -r t0 t1; do
			b=$(python3 "$W/ramp.py" window "$RAMP_SAMPLES" "$t0" "$3")
			# a run shorter than W (it should not be) counts over its own time
			awk -v b="$b" -v w="$3" -v d="$(calc "$t1 - $t0")" 'BEGIN { if (d < w) w = d; printf "%.3f\n", b * 8 / w / 1e6 }'
		done
}
mm() {	# median (min-max) of stdin, D decimals
	local v m
	v=$(cat)
	m=$(median <<<"$v")
	[[ $m == - || -z $v ]] && { echo -; return; }
	echo "$(fmt "$m" "$1") ($(fmt "$(minof <<<"$v")" "$1")-$(fmt "$(maxof <<<"$v")" "$1"))"
}

case_ramp() {
	local prof=$1 sizes z c k png data rc_
	local -a cfgs=()
	case $prof in lfn1g) RAMP_RATE=1000; sizes=$RAMP_SIZES ;; wan200m) RAMP_RATE=200; sizes=$RAMP_SIZES_WAN200M ;; esac
	RAMP_PROF=$prof
	local rcase=ramp-$prof
	RAMP_CASE=$rcase
	RAMP_T_USED=()
	out "## Ramp (issue 13 part 2): whole copies on the emulated $prof link ($("$HERE/wan.sh" profiles | awk -v p="$prof" '$1 == p { $1 = ""; sub(/^ +/, ""); print }'))"
	out
	out "Memory to memory: a zero-filled tmpfs file (${sizes// / and }) to the private null device in lc-wan-b, client in"
	out "lc-wan-a, lanecp -v (TLS, autotuned windows). Wall time: the client process from fork to exit (SSH setup,"
	out "TLS handshakes and slow start included). Link Mbit/s: IP bytes received on lc-wan-b's link (lcwb) over the"
	out "wall time, 10^6 bit/s (the bytes wanem rates; goodput = file bytes x 8 / wall time is the payload,"
	out "lower by the TCP/IP headers). First data byte: the start of the first 50 ms interval of the link"
	out "sampler with > 1 MB/s above the idle background, from the process's start (±50 ms). iperf3 -P 16 runs"
	out "-t T (the size at 75 % of the link, rounded up, + 2 s; or the longest lanecp -s 16 copy of that size so far + 2-3 s"
	out "if longer); \"same duration\" counts its link bytes over"
	out "its first W seconds, W = the median wall time of lanecp -s 16 at that size. Streams waiting on the"
	out "writer: the sink's \"streams waited X s in all for a buffer\" (lanecp -v; before fe07f59 \"X s of waiting"
	out "summed over the streams\") / (streams x wall time); sink quotas: that line's \"quotas grew from A to B\"."
	out "$RAMP_RUNS runs per configuration, interleaved round-robin; medians (min-max)."
	out
	[[ -x $WANEM ]] || die "wanem not found at $WANEM (set WANEM=)"
	command -v python3 >/dev/null || die "the ramp case needs python3 (the link sampler)"
	if wan_sh status >/dev/null 2>&1; then
		die "an emulated WAN is already up (bench/wan.sh status): someone else may be using it; not touching it"
	fi
	ramp_py
	RAMP_RUNLOG=$RESULTS/$STAMP-$rcase.txt
	echo "# case config run rc t0 t1 first_data_s link_bytes streams_waited_s streams quota_from quota_to quota_max_one_stream all_but_one_waited_s(before fe07f59)" >"$RAMP_RUNLOG"
	WAN_UP=1
	lc_on_exit wan_down
	wan_sh up "$prof" >&2 || die "bench/wan.sh up $prof failed"
	for z in $sizes; do
		zero_file "$z" "$MEM/ramp-$z"
		cat "$MEM/ramp-$z" >/dev/null
		cfgs+=("l16-$z" "l32-$z" "i16-$z")
	done
	wan_sshd_start
	iperf_start "$WAN_PFX-b" 10.77.0.2
	ramp_sampler_start "$prof"
	local save_runs=$RUNS
	RUNS=$RAMP_RUNS
	run_case "$rcase" set_ramp "${cfgs[@]}"
	RUNS=$save_runs
	sleep 0.5	# the last run's tail into the samples
	ramp_sampler_stop
	wan_down
	gzip -c "$RAMP_SAMPLES" >"$RESULTS/$STAMP-$rcase.samples.gz"
	for z in $sizes; do rm -f "$MEM/ramp-$z"; done

	# --- the table
	out "| configuration | size | runs | wall s | goodput Mbit/s | link Mbit/s | % of link | iperf3 same duration, link Mbit/s | ÷ iperf3 same duration | first data byte s | streams waiting on the writer % | sink quotas, blocks in all: start -> end | CPU s (client+server) |"
	out "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
	local -A W16=() IPW=()
	for z in $sizes; do
		W16[$z]=$(ramp_vals "$rcase" "l16-$z" '$6 - $5' | median)
		IPW[$z]=-
		[[ ${W16[$z]} != - ]] && IPW[$z]=$(ramp_iperf_window "$rcase" "i16-$z" "${W16[$z]}" | median)
	done
	for z in $sizes; do
		local b gp lkm ipw short
		b=$(bytes_of "$z")
		for k in "l16-$z" "l32-$z" "i16-$z"; do
			case $k in
			l16-*) c="lanecp -s 16" ;; l32-*) c="lanecp -s 32" ;;
			i16-*) c="iperf3 -P 16 -t $(ramp_t_range "$z") (whole run)" ;;
			esac
			lkm=$(ramp_vals "$rcase" "$k" '$8 * 8 / ($6 - $5) / 1e6' | median)
			if [[ $k == i16-* ]]; then
				gp=- ipw="$(ramp_iperf_window "$rcase" "$k" "${W16[$z]}" | mm 0) over W = $(fmt "${W16[$z]}" 2) s"
				[[ ${W16[$z]} == - ]] && ipw=-
				short=0
				[[ ${W16[$z]} != - ]] && short=$(ramp_vals "$rcase" "$k" '$6 - $5' | awk -v w="${W16[$z]}" '$1 < w { n++ } END { print n + 0 }')
				((short)) && ipw+=" ($short runs shorter than W: over their own time)"
				rc_=-
			else
				gp=$(ramp_vals "$rcase" "$k" "$b * 8 / (\$6 - \$5) / 1e6" | mm 0)
				ipw="" rc_=$(ratio "$lkm" "${IPW[$z]}")
			fi
			out "| $c | $z | $(nruns "$rcase" "$k") | $(ramp_vals "$rcase" "$k" '$6 - $5' | mm 2) | $gp | $(ramp_vals "$rcase" "$k" '$8 * 8 / ($6 - $5) / 1e6' | mm 0) | $(awk -v a="$lkm" -v r="$RAMP_RATE" 'BEGIN { if (a == "-") print "-"; else printf "%.1f %%", 100 * a / r }') | $ipw | $rc_ | $(ramp_vals "$rcase" "$k" '$7' | mm 2) | $(ramp_hol_vals "$rcase" "$k" | mm 1) | $(ramp_quota_cell "$rcase" "$k") | $(cpu_cell "$rcase" "$k") |"
		done
	done
	out
	failures "$rcase"

	# --- targets
	local -a zs
	read -r -a zs <<<"$sizes"
	local zsmall=${zs[0]} zbig=${zs[${#zs[@]} - 1]} l lg
	if [[ $prof == lfn1g ]]; then
		l=$(ramp_vals "$rcase" "l16-$zbig" '$8 * 8 / ($6 - $5) / 1e6' | median)
		target "lfn1g: $zbig copy at -s 16 ≥ 0.97x iperf3 -P 16 for the same duration (link Mbit/s, end to end)$([[ $zbig != 2G ]] && echo " [issue: 2 GiB]")" \
		    "$(fmt "$l" 0) vs $(fmt "${IPW[$zbig]}" 0) Mbit/s over $(fmt "${W16[$zbig]}" 2) s = $(ratio "$l" "${IPW[$zbig]}")x" "$(ge "$(ratio "$l" "${IPW[$zbig]}")" 0.97)"
		l=$(ramp_vals "$rcase" "l16-$zsmall" '$8 * 8 / ($6 - $5) / 1e6' | median)
		lg=$(ramp_vals "$rcase" "l16-$zsmall" "$(bytes_of "$zsmall") * 8 / (\$6 - \$5) / 1e6" | median)
		target "lfn1g: $zsmall copy at -s 16 ≥ 85% of the link (link bytes over wall time, end to end)$([[ $zsmall != 512M ]] && echo " [issue: 512 MiB]")" \
		    "$(fmt "$l" 0) Mbit/s = $(awk -v a="$l" 'BEGIN { if (a == "-") print "-"; else printf "%.1f %%", a / 10 }') (goodput $(fmt "$lg" 0) Mbit/s)" "$(ge "$l" 850)"
		for z in $sizes; do
			local g16 g32
			g16=$(ramp_vals "$rcase" "l16-$z" "$(bytes_of "$z") * 8 / (\$6 - \$5) / 1e6" | median)
			g32=$(ramp_vals "$rcase" "l32-$z" "$(bytes_of "$z") * 8 / (\$6 - \$5) / 1e6" | median)
			target "lfn1g: $z copy at -s 32 not slower than -s 16 (goodput, medians)" \
			    "$(fmt "$g32" 0) vs $(fmt "$g16" 0) Mbit/s = $(ratio "$g32" "$g16")x (-s 32: $(ramp_vals "$rcase" "l32-$z" "$(bytes_of "$z") * 8 / (\$6 - \$5) / 1e6" | mm 0), -s 16: $(ramp_vals "$rcase" "l16-$z" "$(bytes_of "$z") * 8 / (\$6 - \$5) / 1e6" | mm 0))" "$(ge "$(ratio "$g32" "$g16")" 1)"
		done
	else
		l=$(ramp_vals "$rcase" "l16-$zsmall" '$8 * 8 / ($6 - $5) / 1e6' | median)
		lg=$(ramp_vals "$rcase" "l16-$zsmall" "$(bytes_of "$zsmall") * 8 / (\$6 - \$5) / 1e6" | median)
		target "wan200m: $zsmall copy at -s 16 ≥ 90% of the link (link bytes over wall time, end to end)$([[ $zsmall != 512M && $zsmall != 1G ]] && echo " [issue: 512 MiB or 1 GiB]")" \
		    "$(fmt "$l" 0) Mbit/s = $(awk -v a="$l" 'BEGIN { if (a == "-") print "-"; else printf "%.1f %%", a / 2 }') (goodput $(fmt "$lg" 0) Mbit/s)" "$(ge "$l" 180)"
	fi

	# --- the plot: the median-wall lanecp -s 16 run of the smallest size
	# and the iperf3 -P 16 run of the same round (-s 32 of that round too).
	local pr t0 t1 fd
	pr=$(awk -v c="$rcase" -v k="l16-$zsmall" '$1 == c && $2 == k && $4 == 0 && $8 != "-" { print $6 - $5, $3 }' "$RAMP_RUNLOG" |
		sort -g | awk '{ a[NR] = $2 } END { if (NR) print a[int((NR + 1) / 2)] }')
	[[ -n $pr ]] || { out "No plot: no successful lanecp -s 16 run."; out; return 0; }
	data=$W/ramp-$prof
	local -a plots=() labels=()
	local n=0 tmax=0
	for k in "l16-$zsmall" "i16-$zsmall" "l32-$zsmall"; do
		read -r t0 t1 fd < <(awk -v c="$rcase" -v k="$k" -v r="$pr" '$1 == c && $2 == k && $3 == r && $4 == 0 { print $5, $6, $7 }' "$RAMP_RUNLOG")
		[[ -n ${t0-} ]] || continue
		case $k in
		l16-*) link_plot_run "$data-$k.dat" "$t0" "$t1" "$fd" "#1f5fbf" 2 "lanecp -s 16" ;;
		i16-*) link_plot_run "$data-$k.dat" "$t0" "$t1" "$fd" "#d95f02" 2 "iperf3 -P 16 -t $(ramp_t_range "$zsmall")" 0 ;;
		l32-*) link_plot_run "$data-$k.dat" "$t0" "$t1" "$fd" "#1b9e77" 1 "lanecp -s 32" ;;
		esac
	done
	png=$RESULTS/ramp-$prof-$STAMP.png
	if link_plot "$png" "$RAMP_RATE" \
	    "Ramp on '$prof' ($RAMP_RATE Mbit/s): one $zsmall copy (run $pr of $RAMP_RUNS, median wall time) vs iperf3 -P 16 in the same round" \
	    "seconds since the client process started (dashed: first data byte on the link; bar at the bottom: lanecp's exit)"; then
		cp "$png" "$HERE/ramp-$prof.png"
		out "Plot: \`$(basename "$RESULTS")/$(basename "$png")\` (copied to \`bench/ramp-$prof.png\`): link Mbit/s per ${RAMP_BUCKET} s since the process started, run $pr. Per-run times and head-of-line figures: \`$(basename "$RESULTS")/$(basename "$RAMP_RUNLOG")\`; the 50 ms samples (epoch seconds, rx bytes): \`$(basename "$RESULTS")/$STAMP-$rcase.samples.gz\`."
		out
	fi
}
