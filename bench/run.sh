#!/usr/bin/env bash
# lanecp benchmark suite (issue 4).  One command, as root, on Debian/Ubuntu:
#
#   bench/run.sh                 full suite, 3 runs per case (~30 min on 2 cores) + the tree cases (5 runs)
#   bench/run.sh --quick         smoke run: small sizes, 1 run (~2-3 min)
#   bench/run.sh -n 5 --case file --case mem
#
# It installs its dependencies (scripts/deps.sh bench), builds lanecp and
# wanem (Release, in build-bench/; or set LANECP=/path/to/lanecp, then also
# WANEM= for the WAN cases), starts a throwaway sshd on 127.0.0.1 (and one
# inside the emulated WAN's lc-wan-b namespace), an anonymous GridFTP server
# and iperf3 servers on loopback, generates its data, runs every case N times
# with the tools interleaved round-robin (each round starts one tool later),
# prints markdown tables (median MB/s, CPU seconds of both ends, peak RSS of
# both ends, ratios to lanecp) and writes them to bench/results/:
#   STAMP.csv  one row per run, with date and machine (nproc, kernel, CPU)
#   STAMP.md   the tables as printed, plus the machine and tool versions
#   wan-PROFILE-STAMP.png (and bench/wan-PROFILE.png, the latest plot)
# Everything it starts (sshd, GridFTP, iperf3, wanem and the namespaces,
# cgroups, temp files) is removed on exit, also on failure and Ctrl-C.
#
# Cases (--case NAME, repeatable; default all):
#   mem      (a) zero-filled tmpfs file -> host:/dev/null, all tools
#   file     (b) 2 GiB random file (page-cached) -> file on the same fs
#   streams  (c) lanecp -s 1/4/16, autotuned vs -w 4m, TLS vs --no-encrypt,
#                against iperf3 -P 1/4/16 (memory to memory)
#   rss      (e) peak RSS at -s 16, push and pull, 256 MiB, 2 GiB (and 8 GiB)
#   aead     (f) issue 13 part 1: memory to memory, lanecp encrypted vs
#                --no-encrypt with each end pinned to its own core (client
#                on CPU 0, sshd and so the remote agent on CPU 1) and
#                unpinned, and scp -c aes128-gcm; CPU s per GiB for each
#   wan      (d) both emulated WAN profiles; or wan-lfn1g, wan-wan200m
#   tree     trees (issue 11, bench/tree.sh): tree-10k, tree-1k, tree-mixed,
#            tree-one, tree-noop, tree-rss (each also alone); rsync -a, tar|ssh,
#            scp -r vs lanecp -r; 5 runs unless -n; not part of --quick's
#            default (ask for it: --quick --case tree)
#   tree-lfn1g  issue 23: the tree-10k tree pushed over lfn1g (bench/tree.sh),
#            tmpfs to tmpfs: lanecp -r -s 16 vs rsync -a and tar|ssh (both
#            aes128-gcm); 3 runs unless -n (--quick: 2,000 files, 1 run);
#            not in the default set or in `tree` (ask for it); link use
#            sampled every 50 ms: first data byte, link busy after it, and
#            a plot (results/tree-lfn1g-STAMP.png, bench/tree-lfn1g.png)
#   tree-wan200m  the same over wan200m (200 Mbit/s, 100 ms RTT, 0.05 % loss)
#   tree-clean1g  the same over clean1g (lfn1g without its loss; bound23);
#            with TREE_WAN_FLOOR=1 (any tree-* WAN case) also `ssh true`
#            and iperf3 -P 16 -n (the tree's bytes) in the same rounds
#   tree-mixed-lfn1g  issue 23: the same with 2 x 256 MiB + 5,000 x 4 KiB in
#            50 directories (--quick: 2 x 32 MiB + 1,000); target lanecp
#            ≤ 0.5x rsync -a and the link ≥ 70 % busy after SSH setup
#   shard-lfn1g  issue 25 part 2: one tree (4 x 96 MiB + 2,000 x 64 KiB)
#            pushed over lfn1g by N = 1, 2, 4 lanecp --shard processes at
#            once, each -s 16, the same path (its ceiling); 5 runs unless
#            -n (--quick: 4 x 16 MiB + 500, 1 run); not in the default set
#   pipe     issue 14: a pipe as the source, memory to memory:
#            dd if=/dev/zero bs=1M | lanecp - host:/dev/null, against
#            dd | ssh host 'cat > /dev/null' and lanecp from a tmpfs file
#            of the same size (8 GiB; --quick: 1 GiB); not in the default
#            set (ask for it: --case pipe)
#   paths    data paths of issue 12 on lfn1g (bench/paths.sh): -s 16 direct,
#            -z, --via-ssh (port 22 only, vs scp), -J bastion (with and
#            without --direct), --relay in a star; memory to memory, 5
#            runs unless -n (--quick: 256 MiB, 1 run); not in the default
#            set (ask for it: --case paths)
#   relay    issue 23 item 4 (bench/paths.sh): the star with link ca a plain
#            veth and cb lfn1g, lanecp -s 16 --relay a -> c -> b vs direct
#            c -> b; memory to memory, 5 runs unless -n (--quick: 256 MiB,
#            1 run); RELAY_PERF=1 adds a profiled run; not in the default
#            set (ask for it: --case relay)
#   ramp     issue 13 part 2, "the long fat pipe is not full" (bench/ramp.sh):
#            whole copies end to end, memory to memory, on lfn1g (512 MiB and
#            2 GiB) and wan200m (512 MiB): lanecp -s 16 and -s 32 (-v) vs
#            iperf3 -P 16 counted over the same duration; link bytes sampled
#            every 50 ms in lc-wan-b for the time to the first data byte and
#            a plot of the ramp (results/ramp-PROFILE-STAMP.png, copied to
#            bench/ramp-PROFILE.png); the sink's head-of-line figure as
#            "streams waiting on the writer %"; or ramp-lfn1g, ramp-wan200m;
#            5 runs unless -n (--quick: 256 MiB, 1 run, lfn1g only); not in
#            the default set (ask for it: --case ramp)
#   compress issue 13 part 3 (bench/compress_wan.sh): -c on wan200m, 1 GiB
#            of web logs (bench/gen_logs.py) and 1 GiB of random data, each
#            with and without -c, lanecp -s 16, tmpfs -> /dev/null, RUNS
#            interleaved rounds (--quick: 64 MiB); not in the default set
#            (ask for it: --case compress)
#   startup  issue 22 (bench/startup.sh): start-up cost per SSH transport on
#            lfn1g, fork to the first data byte (tcpdump in lc-wan-b) and
#            to exit: lanecp over libssh2, --ssh cold and through a warm
#            ControlMaster, each also with --via-ssh, 4 KiB and 64 MiB;
#            ssh HOST true and scp for reference; and a cron-like series
#            of 20 one-file copies with and without ControlPersist; 5 runs
#            (series: 3) unless -n (--quick: 4 KiB only, series of 5, 1
#            run); not in the default set (ask for it: --case startup)
#
# How things are measured (details in bench/README.md):
#   MB/s     10^6 bytes per second of the client's wall time, SSH setup
#            included.  WAN: IP bytes received on lc-wan-b's link (Mbit/s).
#   CPU s    user+sys of both ends: the client runs in a cpuacct cgroup of
#            its own, every server (sshd and all its sessions, GridFTP,
#            iperf3 -s) in another; the deltas of cpuacct.usage over a run.
#   RSS      client: GNU time's max RSS (largest process of the client's
#            tree); server: largest peak RSS (VmHWM) among the server-side
#            session processes (sshd session, agent, sftp-server, rsync,
#            GridFTP session, iperf3 -s); the agent's exactly, via GNU time
#            in an sshd ForceCommand wrapper, the others sampled every 0.1 s.
#
# Options:
#   -n N          runs per configuration (default 3; --quick: 1)
#   --quick       small sizes, fewer configurations, lfn1g only
#   --case NAME   mem|file|streams|rss|wan|wan-lfn1g|wan-wan200m (or a..e),
#                 tree|tree-10k|tree-1k|tree-mixed|tree-one|tree-noop|tree-rss,
#                 tree-lfn1g|tree-wan200m|tree-clean1g|tree-mixed-lfn1g, shard-lfn1g,
#                 paths (alias wan-paths), relay, pipe, ramp|ramp-lfn1g|ramp-wan200m,
#                 compress, startup
#   --tree-big S  size of each of the 2 big files of tree-mixed (default 256M)
#   --wan-time S  seconds per WAN run (default 10; --quick: 5)
#   -o DIR        results directory (default bench/results)
#   -h            this help
# Environment: LANECP, WANEM (prebuilt binaries), LC_BENCH_TMP (work dir
# parent, default /var/tmp; data and targets go there, on one filesystem),
# BENCH_WAN_NS (the wan, ramp and startup cases' namespace prefix, default
# lc-wan).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CMDLINE="bench/run.sh${*:+ $*}"
REPO=$(cd "$HERE/.." && pwd)

usage() {
	sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

# ---------------------------------------------------------------- options
RUNS=
QUICK=0
CASES=()
WAN_T=
RESULTS=$HERE/results
TREE_BIG=
while (($#)); do
	case $1 in
	-n) RUNS=${2:?-n needs a number}; shift ;;
	-n*) RUNS=${1#-n} ;;
	--quick) QUICK=1 ;;
	--case) CASES+=("${2:?--case needs a name}"); shift ;;
	--case=*) CASES+=("${1#--case=}") ;;
	--wan-time) WAN_T=${2:?}; shift ;;
	--tree-big) TREE_BIG=${2:?}; shift ;;
	-o) RESULTS=${2:?}; shift ;;
	-h | --help) usage 0 ;;
	*) echo "run.sh: unknown option '$1'" >&2; usage 2 >&2 ;;
	esac
	shift
done
[[ -z $RUNS || $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: -n: not a positive number: $RUNS" >&2; exit 2; }
[[ -z $WAN_T || $WAN_T =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --wan-time: not a positive number" >&2; exit 2; }
RUNS_SET=$RUNS	# the tree cases default to 5 runs, unless -n was given
[[ -z $TREE_BIG || $TREE_BIG =~ ^[1-9][0-9]*[KkMmGg]?$ ]] || { echo "run.sh: --tree-big: not a size: $TREE_BIG" >&2; exit 2; }
if ! ((${#CASES[@]})); then
	CASES=(mem file streams rss wan)
	((QUICK)) || CASES+=(tree)
fi
SEL=" "
for c in "${CASES[@]}"; do
	case $c in
	a | mem) SEL+="mem " ;;
	b | file) SEL+="file " ;;
	c | streams) SEL+="streams " ;;
	d | wan) SEL+="wan-lfn1g wan-wan200m " ;;
	wan-lfn1g | lfn1g) SEL+="wan-lfn1g " ;;
	wan-wan200m | wan200m) SEL+="wan-wan200m " ;;
	e | rss) SEL+="rss " ;;
	f | aead) SEL+="aead " ;;
	tree) SEL+="tree-10k tree-1k tree-mixed tree-one tree-noop tree-rss " ;;
	tree-10k | tree-1k | tree-mixed | tree-one | tree-noop | tree-rss | tree-lfn1g | tree-wan200m | tree-clean1g | tree-mixed-lfn1g) SEL+="$c " ;;
	shard-lfn1g) SEL+="$c " ;;
	paths | wan-paths) SEL+="paths " ;;
	relay) SEL+="relay " ;;
	pipe) SEL+="pipe " ;;
	compress) SEL+="compress " ;;
	startup) SEL+="startup " ;;
	ramp) SEL+="ramp-lfn1g ramp-wan200m " ;;
	ramp-lfn1g | ramp-wan200m) SEL+="$c " ;;
	*) echo "run.sh: unknown case '$c'" >&2; exit 2 ;;
	esac
done
if ((QUICK)); then
	SEL=${SEL//wan-wan200m /}
	quick_ramp=0
	[[ $SEL == *" ramp-lfn1g "* || $SEL == *" ramp-wan200m "* ]] && quick_ramp=1
	SEL=${SEL//ramp-wan200m /}
	((quick_ramp)) && [[ $SEL != *" ramp-lfn1g "* ]] && SEL+="ramp-lfn1g "
	[[ $SEL == " " ]] && SEL=" wan-lfn1g "
fi
want() { [[ $SEL == *" $1 "* ]]; }

# Sizes and sweeps (full / quick).
if ((QUICK)); then
	RUNS=${RUNS:-1}; WAN_T=${WAN_T:-5}
	MEM_SIZE=1G FILE_SIZE=512M STREAMS_SIZE=1G RSS_SIZES="256M 2G"
	AEAD_SIZE=1G PIPE_SIZE=1G
	GRID_PS="4" STREAM_NS="1 16" STREAM_WS="auto" WAN_NS="4 16"
else
	RUNS=${RUNS:-3}; WAN_T=${WAN_T:-10}
	MEM_SIZE=8G FILE_SIZE=2G STREAMS_SIZE=4G RSS_SIZES="256M 2G 8G"
	AEAD_SIZE=4G PIPE_SIZE=8G
	GRID_PS="1 4 8 16" STREAM_NS="1 4 16" STREAM_WS="auto 4m"
	WAN_NS="1 2 4 8 16 32"
fi
WAN_SPARSE=8G		# does not finish within WAN_T (<= 60 s) at 1 Gbit/s

bytes_of() {	# 512M, 2G -> bytes
	local n=${1%[KkMmGg]} u=${1: -1}
	case $u in
	[Kk]) echo $((n << 10)) ;; [Mm]) echo $((n << 20)) ;;
	[Gg]) echo $((n << 30)) ;; *) echo "$1" ;;
	esac
}

# ---------------------------------------------------------------- helpers
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "must run as root (cgroups, namespaces, GridFTP's setuid)"

# Float arithmetic.
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
fmt() { awk -v v="$1" -v d="${2:-1}" 'BEGIN { if (v == "" || v == "-") print "-"; else printf "%.*f", d, v }'; }

# ---------------------------------------------------------------- setup
log "dependencies: scripts/deps.sh bench"
"$REPO/scripts/deps.sh" bench || die "scripts/deps.sh bench failed"
for t in sshd ssh scp sftp rsync iperf3 gnuplot globus-url-copy globus-gridftp-server timeout; do
	command -v "$t" >/dev/null || [[ -x /usr/sbin/$t ]] || die "$t not found after deps.sh"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) not found"

if [[ -z ${LANECP-} ]]; then
	BUILD=$REPO/build-bench
	log "building lanecp and wanem (Release) in $BUILD"
	{ cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
	    cmake --build "$BUILD" -j "$(nproc)" --target lanecp wanem >/dev/null; } ||
		die "build failed (cmake -S $REPO -B $BUILD -DCMAKE_BUILD_TYPE=Release)"
	LANECP=$BUILD/cmd/lanecp
	WANEM=${WANEM:-$BUILD/bench/wanem}
fi
[[ -x $LANECP ]] || die "LANECP=$LANECP is not executable"
LANECP=$(cd "$(dirname "$LANECP")" && pwd)/$(basename "$LANECP")
export LANECP WANEM="${WANEM:-$REPO/build/bench/wanem}"
SFTP_SERVER=
for p in /usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server /usr/libexec/sftp-server; do
	[[ -x $p ]] && { SFTP_SERVER=$p; break; }
done
[[ -n $SFTP_SERVER ]] || die "sftp-server not found"

# The work dir holds keys, configs, data and targets: all on one
# filesystem, removed on exit (lib.sh's trap runs our lc_on_exit hooks).
W=$(mktemp -d "${LC_BENCH_TMP:-/var/tmp}/lanecp-bench.XXXXXX") || die "mktemp failed"
chmod 0755 "$W"
export TMPDIR=$W	# lib.sh puts the sshd dir under it
# shellcheck source=../tests/integration/lib.sh
. "$REPO/tests/integration/lib.sh"
lc_on_exit "rm -rf '$W'"

# Processes we start in the background, killed (with their trees) on exit.
BG_PIDS=()
RUN_PID="" SAMPLER_PID="" RXSAMPLER_PID="" RXPID=""
# Kill a process tree of ours without the wait builtin (lib.sh's
# lc__kill_tree waits; a wait inside the exit trap, after a trapped ^C had
# interrupted another wait, once hung here), then poll until it is gone.
# The descendants get SIGKILL; our own child (a job of this shell) gets
# SIGTERM, and SIGKILL only if it is still there after 5 s: bash reports
# a background job that a signal ended ("line N: PID Killed ( cg_join
# server; exec ... )") unless this shell traps that signal, and lib.sh
# traps TERM (wait or disown do not keep it quiet: the job may be reaped
# and reported before either runs).
kill_tree() {	# PID
	local p i st
	[[ -n $1 ]] || return 0
	for p in $(lc__descendants "$1"); do kill -KILL "$p" 2>/dev/null; done
	kill -TERM "$1" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
		[[ -z $st || $st == Z ]] && return 0
		((i == 50)) && kill -KILL "$1" 2>/dev/null
		sleep 0.1
	done
}
stop_samplers() {
	[[ -n $SAMPLER_PID ]] && kill -KILL "$SAMPLER_PID" 2>/dev/null
	[[ -n $RXSAMPLER_PID ]] && kill -KILL "$RXSAMPLER_PID" 2>/dev/null
	SAMPLER_PID="" RXSAMPLER_PID=""
}
bg_cleanup() {
	local p
	stop_samplers
	kill_tree "$RUN_PID"
	for p in "${BG_PIDS[@]}"; do kill_tree "$p"; done
	BG_PIDS=()
}

# --- cgroups: cpuacct (v1) or cpu.stat (v2); client/ and server/.
CG_ROOT=
CG=
if [[ -w /sys/fs/cgroup/cpuacct/cgroup.procs ]]; then
	CG_ROOT=/sys/fs/cgroup/cpuacct
	CG_KIND=v1
elif [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
	CG_ROOT=/sys/fs/cgroup
	CG_KIND=v2
else
	die "no cgroup cpuacct (v1) or cgroup2 hierarchy: cannot measure CPU of process trees"
fi
# where this shell is now (to come back to after starting the sshd)
if [[ $CG_KIND == v1 ]]; then
	CG_HOME=$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ { print $3 }' /proc/self/cgroup)
else
	CG_HOME=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
fi
CG_HOME=$CG_ROOT${CG_HOME%/}
[[ -w $CG_HOME/cgroup.procs ]] || CG_HOME=$CG_ROOT
CG=$CG_ROOT/lanecp-bench.$$
mkdir -p "$CG/client" "$CG/server" || die "cannot create cgroups under $CG_ROOT"
cg_cleanup() {
	local g p
	for g in client server; do
		[[ -d $CG/$g ]] || continue
		# whatever is still in there is ours (a server session, a client)
		for p in $(cat "$CG/$g/cgroup.procs" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[[ -s $CG/$g/cgroup.procs ]] || break
			sleep 0.1
		done
		for p in $(cat "$CG/$g/cgroup.procs" 2>/dev/null); do
			echo "$p" >"$CG_HOME/cgroup.procs" 2>/dev/null
		done
		rmdir "$CG/$g" 2>/dev/null
	done
	rmdir "$CG" 2>/dev/null
}
lc_on_exit cg_cleanup
lc_on_exit bg_cleanup
cg_join() { echo "$BASHPID" >"$CG/$1/cgroup.procs"; }
cg_cpu_ns() {
	if [[ $CG_KIND == v1 ]]; then
		cat "$CG/$1/cpuacct.usage"
	else
		awk '$1 == "usage_usec" { printf "%d\n", $2 * 1000 }' "$CG/$1/cpu.stat"
	fi
}

# --- the sshd: lib.sh's, plus sftp-server and a ForceCommand wrapper that
# runs the remote command under GNU time (exact peak RSS of the agent).
mkdir -p "$W/srvtime"
cat >"$W/srvwrap" <<EOF
#!/bin/sh
exec /usr/bin/time -q -f '%M' -o "$W/srvtime/\$\$.t" /bin/sh -c "\$SSH_ORIGINAL_COMMAND"
EOF
chmod 0755 "$W/srvwrap"
export LC_SSHD_OPTIONS="Subsystem sftp $SFTP_SERVER
ForceCommand $W/srvwrap"
log "starting a throwaway sshd on 127.0.0.1 (tests/integration/lib.sh)"
cg_join server		# the sshd (and its sessions) inherit the server cgroup
lc_sshd_start
echo "$BASHPID" >"$CG_HOME/cgroup.procs"
# Server-cgroup processes that outlive a run: SRV_RESIDENT (the run is over
# when only these are left); SRV_LISTENERS among them only accept
# connections (left out of the RSS figures; iperf3 -s is not, it does the
# work).
SRV_RESIDENT=" $LC_SSHD_PID "
SRV_LISTENERS=" $LC_SSHD_PID "
CFG=$LC_SSH_CONFIG
H=$LC_SSH_HOST

# Data and targets.
DATA=$W/data
# Memory-to-memory sources: zero-filled files on tmpfs, written (not
# truncated: lanecp keeps holes since issue 11, so a sparse source would
# send nothing and measure nothing), removed on exit.
MEM=$(mktemp -d /dev/shm/lanecp-bench.XXXXXX) || die "mktemp /dev/shm failed"
lc_on_exit "rm -rf '$MEM'"
zero_file() {	# zero_file SIZE PATH
	head -c "$1" /dev/zero >"$2" || die "cannot write $2 (tmpfs full?)"
}
DST=$W/dst		# targets (mode 1777: GridFTP writes as nobody)
mkdir -p "$DATA" "$DST"
chmod 1777 "$DST"
# A private null device as the "/dev/null" target: scp (SFTP protocol)
# fsetstat()s and rsync renames/replaces its target, neither of which may
# touch the real /dev/null.
NULLDEV=$W/null
if mknod "$NULLDEV" c 1 3 2>/dev/null && chmod 0666 "$NULLDEV" &&
    echo x >"$NULLDEV" 2>/dev/null; then :; else
	die "cannot create a null device node in $W (nodev mount?); set LC_BENCH_TMP"
fi

# --- GridFTP (anonymous, clear text, loopback) and iperf3 servers.
# Is something listening on PORT (hex from /proc/PID/net/tcp; PID selects
# the network namespace)?  No connect: that would count as a session.
listening() {	# PID PORT
	local hex
	printf -v hex '%04X' "$2"
	grep -q "^ *[0-9]*: [0-9A-F]*:$hex [0-9A-F]*:0000 0A " "/proc/$1/net/tcp" 2>/dev/null
}
wait_listen() {	# PID PORT WHAT
	local i
	for ((i = 0; i < 100; i++)); do
		listening "$1" "$2" && return 0
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	die "$3 did not start listening on port $2"
}

GRID_PID="" GRID_PORT=""
grid_start() {
	[[ -n $GRID_PID ]] && return 0
	GRID_PORT=$(lc_free_port)
	# Runs as root and forks a session per connection that setuid()s to
	# the anonymous user (nobody).  -aa: anonymous clear-text logins.
	(cg_join server; exec globus-gridftp-server -aa -anonymous-user nobody \
	    -p "$GRID_PORT" -control-interface 127.0.0.1 \
	    -data-interface 127.0.0.1 -home-dir "$W" -d error \
	    -l "$W/gridftp.log" </dev/null >>"$W/gridftp.out" 2>&1) &
	GRID_PID=$!
	BG_PIDS+=("$GRID_PID")
	SRV_RESIDENT+="$GRID_PID "
	SRV_LISTENERS+="$GRID_PID "
	wait_listen "$GRID_PID" "$GRID_PORT" "globus-gridftp-server"
}

IPERF_PID="" IPERF_PORT=""
iperf_start() {	# [NETNS ADDR]
	local ns=${1-} addr=${2:-127.0.0.1}
	IPERF_PORT=$(lc_free_port)
	if [[ -n $ns ]]; then
		(cg_join server; exec ip netns exec "$ns" iperf3 -s -B "$addr" -p "$IPERF_PORT" \
		    </dev/null >>"$W/iperf3-$ns.out" 2>&1) &
	else
		(cg_join server; exec iperf3 -s -B "$addr" -p "$IPERF_PORT" \
		    </dev/null >>"$W/iperf3.out" 2>&1) &
	fi
	IPERF_PID=$!
	BG_PIDS+=("$IPERF_PID")
	SRV_RESIDENT+="$IPERF_PID "
	wait_listen "$IPERF_PID" "$IPERF_PORT" "iperf3 -s"
}
stop_pid() {	# PID: one of ours
	local p=$1 i
	[[ -n $p ]] || return 0
	kill_tree "$p"
	SRV_RESIDENT=${SRV_RESIDENT// $p / }
	SRV_LISTENERS=${SRV_LISTENERS// $p / }
	for i in "${!BG_PIDS[@]}"; do [[ ${BG_PIDS[$i]} == "$p" ]] && unset "BG_PIDS[$i]"; done
	BG_PIDS=("${BG_PIDS[@]}")
}

# --- results files.
STAMP=$(date -u +%Y%m%d-%H%M%S)
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$RESULTS" || die "cannot create $RESULTS"
CSV=$RESULTS/$STAMP.csv
MD=$RESULTS/$STAMP.md
NPROC=$(nproc)
KERNEL=$(uname -r)
CPUMODEL=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
CPUMODEL=${CPUMODEL//,/;}
MEMGIB=$(awk '/^MemTotal/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
HOSTNAME_=$(hostname)
LANECP_VER=$("$LANECP" --version 2>&1 | head -n 1)
GITREV=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
if (cd "$REPO" && GIT_OPTIONAL_LOCKS=0 git diff --quiet HEAD -- src cmd include 2>/dev/null); then
	GITDIRTY=""
else
	GITDIRTY=" (src/cmd/include modified in the working tree)"
fi
echo "date,host,nproc,kernel,cpu,case,config,tool,streams,run,bytes,seconds,MBps,wire_Mbps,steady_Mbps,cli_cpu_s,srv_cpu_s,cpu_s,cli_rss_kb,srv_rss_kb,srv_rss_proc,rc,note" >"$CSV"
{
	echo "# lanecp benchmark $STAMP"
	echo
	echo "- date: $DATE"
	echo "- command: \`$CMDLINE\`"
	echo "- machine: $HOSTNAME_, $NPROC CPUs ($CPUMODEL), ${MEMGIB} GiB RAM, kernel $KERNEL"
	echo "- lanecp: $LANECP_VER, git $GITREV$GITDIRTY"
	echo "- peers: $(ssh -V 2>&1); $(rsync --version | head -n 1 | sed 's/  */ /g'); $(iperf3 --version | head -n 1); globus-url-copy $(globus-url-copy -version 2>&1 | awk '{print $2}'); $(globus-gridftp-server -version 2>&1 | head -n 1)"
	echo "- loopback TCP: congestion control $(sysctl -n net.ipv4.tcp_congestion_control), tcp_wmem $(sysctl -n net.ipv4.tcp_wmem | tr -s '\t ' ' '), tcp_rmem $(sysctl -n net.ipv4.tcp_rmem | tr -s '\t ' ' '), rmem_max/wmem_max $(sysctl -n net.core.rmem_max)/$(sysctl -n net.core.wmem_max)"
	echo "- runs per configuration: $RUNS (round-robin; medians; RSS: max over runs)"
	echo
} >"$MD"
out() { printf '%s\n' "$*" | tee -a "$MD"; }
log "results: $CSV, $MD"
if ((NPROC <= 2)); then
	out "> Note: this machine has $NPROC CPUs. Both ends of every loopback copy (and wanem) share them,"
	out "> so CPU-bound tools are slower than they would be between two hosts."
	out
fi

# ---------------------------------------------------------------- sampling
# rss_sampler OUT: every 0.1 s, the peak RSS (VmHWM) of every process in the
# server cgroup except the resident servers; on SIGTERM writes
# "pid name kB" lines to OUT.
rss_sampler() {
	local out=$1 p k v n h stop=0
	local -A peak=() pname=()
	local -a pids
	trap 'stop=1' TERM
	while ((!stop)); do
		mapfile -t pids <"$CG/server/cgroup.procs" 2>/dev/null
		for p in "${pids[@]}"; do
			[[ $SRV_LISTENERS == *" $p "* ]] && continue
			n='' h=0
			{ while read -r k v _; do
				case $k in Name:) n=$v ;; VmHWM:) h=$v; break ;; esac
			done <"/proc/$p/status"; } 2>/dev/null
			if ((h > ${peak[$p]:-0})); then peak[$p]=$h; pname[$p]=$n; fi
		done
		sleep 0.1 &
		wait $! 2>/dev/null
	done
	for p in "${!peak[@]}"; do echo "$p ${pname[$p]} ${peak[$p]}"; done >"$out"
}

# rx_sampler PID OUT: "time rx_bytes" of lcwb (seen from PID's network
# namespace) every 0.5 s, until SIGTERM.
rx_bytes() {	# PID
	local l
	while read -r l; do
		if [[ $l == lcwb:* ]]; then
			l=${l#lcwb:}
			read -r l _ <<<"$l"
			echo "$l"
			return 0
		fi
	done <"/proc/$1/net/dev" 2>/dev/null
	echo 0
}
rx_sampler() {
	local pid=$1 out=$2 stop=0
	trap 'stop=1' TERM
	while ((!stop)); do
		echo "$EPOCHREALTIME $(rx_bytes "$pid")" >>"$out"
		sleep 0.5 &
		wait $! 2>/dev/null
	done
}

# Wait until the server side of the last run is gone (only resident
# servers left in the server cgroup); kill stragglers after 15 s.
server_idle() {
	local i p busy
	for ((i = 0; i < 300; i++)); do
		busy=
		for p in $(cat "$CG/server/cgroup.procs" 2>/dev/null); do
			[[ $SRV_RESIDENT == *" $p "* ]] && continue
			# a killed resident not reaped yet does not count
			[[ $(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1) == [ZX] ]] && continue
			busy=$p
			break
		done
		[[ -z $busy ]] && return 0
		sleep 0.05
	done
	for p in $(cat "$CG/server/cgroup.procs" 2>/dev/null); do
		[[ $SRV_RESIDENT == *" $p "* ]] || kill -KILL "$p" 2>/dev/null
	done
	NOTE+="server-side straggler killed;"
	sleep 0.2
}

# ---------------------------------------------------------------- one run
# measure CASE CONFIG RUN: runs CMD (array) with the globals TOOL, STREAMS,
# BYTES (payload for MB/s), TLIMIT (seconds, 0 = run to completion),
# RXPID (WAN: a pid in lc-wan-b whose lcwb counters to read), OK_ERR (an
# ERE for stderr that is accepted with a non-zero exit), PRE/POST (hook
# function names), VERIFY (a file to compare the target with) and appends
# one CSV row.
measure() {
	local case=$1 cfg=$2 run=$3
	local tf=$W/cli.time err=$W/cli.err rs=$W/srv.rss rxs=$W/rx.samples
	local c0 c1 s0 s1 t0 t1 rc=0 spid rxpid="" rx0=0 rx1=0 dt mbps wire=- steady=-
	local cli_rss srv_rss=0 srv_who=- f v p n k
	NOTE=
	[[ -n ${PRE-} ]] && "$PRE"
	rm -f "$W"/srvtime/*.t "$tf" "$rs" "$rxs"
	rss_sampler "$rs" &
	spid=$!
	SAMPLER_PID=$spid
	if [[ -n ${RXPID-} ]]; then
		rx_sampler "$RXPID" "$rxs" &
		rxpid=$!
		RXSAMPLER_PID=$rxpid
		rx0=$(rx_bytes "$RXPID")
	fi
	c0=$(cg_cpu_ns client)
	s0=$(cg_cpu_ns server)
	t0=$EPOCHREALTIME
	if ((${TLIMIT:-0} > 0)); then
		(cg_join client; exec /usr/bin/time -q -f '%M' -o "$tf" \
		    timeout -s TERM -k 5 "$TLIMIT" "${CMD[@]}") \
		    </dev/null >"$W/cli.out" 2>"$err" &
	else
		(cg_join client; exec /usr/bin/time -q -f '%M' -o "$tf" "${CMD[@]}") \
		    </dev/null >"$W/cli.out" 2>"$err" &
	fi
	RUN_PID=$!
	wait "$RUN_PID"
	rc=$?
	t1=$EPOCHREALTIME
	RUN_PID=
	[[ -n ${RXPID-} ]] && rx1=$(rx_bytes "$RXPID")
	server_idle
	c1=$(cg_cpu_ns client)
	s1=$(cg_cpu_ns server)
	kill -TERM "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	SAMPLER_PID=
	if [[ -n $rxpid ]]; then
		kill -TERM "$rxpid" 2>/dev/null
		wait "$rxpid" 2>/dev/null
		RXSAMPLER_PID=
	fi
	# A time-limited run is stopped by timeout (124): that is its end.
	if ((${TLIMIT:-0} > 0 && rc == 124)); then rc=0; NOTE+="stopped at ${TLIMIT}s;"; fi
	if ((rc != 0)) && [[ -n ${OK_ERR-} ]] && grep -Eq -- "$OK_ERR" "$err" &&
	    ! grep -Evq -- "$OK_ERR" "$err"; then
		NOTE+="exit $rc accepted: $(head -n 1 "$err" | tr -d ',');"
		rc=0
	fi
	if ((rc != 0)); then
		NOTE+="FAILED: $(head -c 200 "$err" | tr '\n,' '  ');"
		log "  $cfg run $run FAILED (exit $rc): $(head -n 3 "$err")"
	fi
	if ((rc == 0)) && [[ -d ${VERIFY-} ]]; then
		# a tree: diff -r the first run, count the files of the others
		if [[ $run == 1 ]]; then
			diff -r -q --no-dereference "$VERIFY" "$VERIFY_TARGET" >/dev/null 2>&1 ||
				{ rc=99; NOTE+="FAILED: target tree differs from source;"; }
		else
			[[ $(find "$VERIFY_TARGET" -type f 2>/dev/null | wc -l) == "$(find "$VERIFY" -type f | wc -l)" ]] ||
				{ rc=99; NOTE+="FAILED: target tree has another number of files;"; }
		fi
		((rc == 0)) || log "  $cfg run $run: $NOTE"
	elif ((rc == 0)) && [[ -n ${VERIFY-} ]]; then
		if [[ $run == 1 ]]; then
			cmp -s "$VERIFY" "$VERIFY_TARGET" || { rc=99; NOTE+="FAILED: target differs from source;"; }
		else
			[[ $(stat -c %s "$VERIFY_TARGET" 2>/dev/null) == "$(stat -c %s "$VERIFY")" ]] ||
				{ rc=99; NOTE+="FAILED: target size differs;"; }
		fi
		((rc == 0)) || log "  $cfg run $run: $NOTE"
	fi
	cli_rss=$(tail -n 1 "$tf" 2>/dev/null)
	[[ $cli_rss =~ ^[0-9]+$ ]] || cli_rss=0
	while read -r p n k; do
		((k > srv_rss)) && { srv_rss=$k; srv_who=$n; }
	done <"$rs"
	for f in "$W"/srvtime/*.t; do
		[[ -e $f ]] || continue
		v=$(tail -n 1 "$f")
		[[ $v =~ ^[0-9]+$ ]] || continue
		((v >= srv_rss)) && { srv_rss=$v; srv_who="agent"; }
	done
	dt=$(calc "$t1 - $t0")
	mbps=$(calc "$BYTES / $dt / 1e6")
	if [[ -n ${RXPID-} ]]; then
		wire=$(calc "($rx1 - $rx0) * 8 / $dt / 1e6")
		# steady state: from the first sample >= t0 + 3 s to the end
		steady=$(awk -v t0="$t0" -v t1="$t1" -v r1="$rx1" '
			!a && $1 >= t0 + 3 { a = $1; ra = $2 }
			END { if (a && t1 - a > 1) printf "%.6f", (r1 - ra) * 8 / (t1 - a) / 1e6; else print "-" }' "$rxs")
		BYTES=$((rx1 - rx0))
		mbps=$(calc "$BYTES / $dt / 1e6")
	fi
	echo "$DATE,$HOSTNAME_,$NPROC,$KERNEL,$CPUMODEL,$case,$cfg,$TOOL,$STREAMS,$run,$BYTES,$dt,$mbps,$wire,$steady,$(calc "($c1 - $c0) / 1e9"),$(calc "($s1 - $s0) / 1e9"),$(calc "($c1 - $c0 + $s1 - $s0) / 1e9"),$cli_rss,$srv_rss,$srv_who,$rc,${NOTE%;}" >>"$CSV"
	[[ -n ${POST-} ]] && "$POST"
	if [[ -n ${RXPID-} ]]; then
		log "  $cfg run $run: $(fmt "$wire") Mbit/s on the wire (steady $(fmt "$steady")), cpu $(fmt "$(calc "($c1 - $c0 + $s1 - $s0) / 1e9")" 2) s"
	else
		log "  $cfg run $run: $(fmt "$mbps") MB/s, cpu $(fmt "$(calc "($c1 - $c0 + $s1 - $s0) / 1e9")" 2) s, rss $((cli_rss / 1024))/$((srv_rss / 1024)) MiB"
	fi
	return 0
}

# run_case CASE SETCMD CONFIG...: RUNS rounds over the configurations, each
# round starting one configuration later.  SETCMD CONFIG sets CMD and the
# other globals of measure.
run_case() {
	local case=$1 setcmd=$2 r i j nj
	shift 2
	local -a cfgs=("$@")
	nj=${#cfgs[@]}
	for ((r = 0; r < RUNS; r++)); do
		log "$case: round $((r + 1))/$RUNS"
		for ((i = 0; i < nj; i++)); do
			j=$(((i + r) % nj))
			TOOL='' STREAMS='' BYTES='' TLIMIT=0 OK_ERR='' PRE='' POST='' VERIFY='' VERIFY_TARGET='' RXPID=''
			"$setcmd" "${cfgs[$j]}"
			measure "$case" "${cfgs[$j]}" $((r + 1))
		done
	done
}

# ---------------------------------------------------------------- tables
# Values of column COL for CASE/CONFIG over the successful runs.
col() {	# CASE CONFIG COL
	awk -F, -v c="$1" -v k="$2" -v col="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
		$h["case"] == c && $h["config"] == k && $h["rc"] == 0 && $h[col] != "-" { print $h[col] }' "$CSV"
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
maxof() { sort -g | awk 'END { if (NR == 0) print "-"; else print $1 }'; }
minof() { sort -g | awk 'NR == 1 { print $1 }'; }
med() { col "$1" "$2" "$3" | median; }
nruns() { awk -F, -v c="$1" -v k="$2" 'NR > 1 && $6 == c && $7 == k { n++; if ($22 == 0) ok++ } END { printf "%d/%d", ok, n }' "$CSV"; }
ratio() {	# A B -> A/B with 2 decimals, or -
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}
mib() { awk -v k="$1" 'BEGIN { if (k == "-" || k == "") print "-"; else printf "%.1f", k / 1024 }'; }
cpu_cell() {	# CASE CONFIG: "total (client+server)"
	local t c s
	t=$(med "$1" "$2" cpu_s); c=$(med "$1" "$2" cli_cpu_s); s=$(med "$1" "$2" srv_cpu_s)
	[[ $t == - ]] && { echo -; return; }
	echo "$(fmt "$t" 2) ($(fmt "$c" 2)+$(fmt "$s" 2))"
}
rss_cell() {	# CASE CONFIG: "client / server (who)"
	local c s who
	c=$(col "$1" "$2" cli_rss_kb | maxof); s=$(col "$1" "$2" srv_rss_kb | maxof)
	who=$(awk -F, -v c="$1" -v k="$2" -v m="$s" 'NR > 1 && $6 == c && $7 == k && $20 == m { print $21; exit }' "$CSV")
	echo "$(mib "$c") | $(mib "$s") ${who:+($who)}"
}

# Describe a configuration for the tables.
declare -A DESC=()

# table CASE REF_ENC REF_NOENC CONFIG...: the per-tool table.
table() {
	local case=$1 ref=$2 refn=$3 k m lo hi rm rn
	shift 3
	rm=$(med "$case" "$ref" MBps)
	rn=$(med "$case" "$refn" MBps)
	out "| tool | runs | MB/s (median) | min-max | CPU s (client+server) | client RSS MiB | server RSS MiB | ÷ lanecp | ÷ lanecp --no-encrypt |"
	out "|---|---|---:|---|---:|---:|---:|---:|---:|"
	for k in "$@"; do
		m=$(med "$case" "$k" MBps)
		lo=$(col "$case" "$k" MBps | minof); hi=$(col "$case" "$k" MBps | maxof)
		out "| ${DESC[$k]:-$k} | $(nruns "$case" "$k") | $(fmt "$m" 0) | $(fmt "$lo" 0)-$(fmt "$hi" 0) | $(cpu_cell "$case" "$k") | $(rss_cell "$case" "$k") | $(ratio "$m" "$rm") | $(ratio "$m" "$rn") |"
	done
	out
}

# failures CASE: the failed runs of CASE, if any, with their first error.
failures() {
	local f
	f=$(awk -F, -v c="$1" 'NR > 1 && $6 == c && $22 != 0 { printf "- %s, run %s (exit %s): %s\n", $7, $10, $22, substr($23, 1, 200) }' "$CSV")
	[[ -n $f ]] || return 0
	out "Failed runs (left out of the medians):"
	out
	out "$f"
	out
}

# Targets, collected as the cases finish, printed at the end.
TARGETS=()
target() {	# TEXT MEASURED PASS(1/0/-)
	local verdict
	case $3 in 1) verdict="met" ;; 0) verdict="**not met**" ;; *) verdict="n/a" ;; esac
	TARGETS+=("| $1 | $2 | $verdict |")
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "") print "-"; else print (a + 0 >= b + 0) ? 1 : 0 }'; }

best_grid() {	# CASE -> "config median" of the fastest gridftp-pN
	local k m best='' bm=0
	for k in $GRID_PS; do
		m=$(med "$1" "gridftp-p$k" MBps)
		[[ $m == - ]] && continue
		if [[ -z $best ]] || awk -v a="$m" -v b="$bm" 'BEGIN { exit !(a > b) }'; then
			best=gridftp-p$k; bm=$m
		fi
	done
	echo "${best:-none} ${bm}"
}

# ---------------------------------------------------------------- tools
# Common commands.  $1: source, $2: target path on the host.
lanecp_cmd() {	# SRC DST ARGS...
	local s=$1 d=$2
	shift 2
	CMD=("$LANECP" -F "$CFG" -q "$@" "$s" "$H:$d")
	TOOL=lanecp
}
peer_cmd() {	# TOOLCFG SRC DST
	local s=$2 d=$3
	TOOL=${1%%-*}
	STREAMS=1
	case $1 in
	scp-gcm) CMD=(scp -q -F "$CFG" -c aes128-gcm@openssh.com "$s" "$H:$d") ;;
	scp) CMD=(scp -q -F "$CFG" "$s" "$H:$d") ;;
	sftp)
		printf 'put %s %s\n' "$s" "$d" >"$W/sftp.batch"
		CMD=(sftp -q -F "$CFG" -b "$W/sftp.batch" "$H")
		;;
	rsync)
		if [[ -c $d ]]; then
			CMD=(rsync --whole-file --write-devices -e "ssh -F $CFG" "$s" "$H:$d")
		else
			CMD=(rsync --whole-file -e "ssh -F $CFG" "$s" "$H:$d")
		fi
		;;
	gridftp-p*)
		STREAMS=${1#gridftp-p}
		TOOL=gridftp
		CMD=(globus-url-copy -p "$STREAMS" -fast "file://$s" "ftp://127.0.0.1:$GRID_PORT$d")
		;;
	iperf3-P*)
		STREAMS=${1#iperf3-P}
		TOOL=iperf3
		CMD=(iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -P "$STREAMS" -n "$BYTES")
		;;
	*) die "unknown tool config $1" ;;
	esac
}
# scp and sftp (SFTP protocol) end a copy to a character device with a
# failed fsetstat (ftruncate on /dev/null: EINVAL -> "Bad message"), after
# all the data has been written.  That one error is accepted for /dev/null.
NULL_OK_ERR='fsetstat: Bad message|^$'

DESC[lanecp]="lanecp (TLS, -s 4)"
DESC[lanecp-noenc]="lanecp --no-encrypt (-s 4)"
DESC[lanecp-nofsync]="lanecp --no-fsync (TLS, -s 4)"
DESC[lanecp-noenc-nofsync]="lanecp --no-encrypt --no-fsync"
DESC[scp-gcm]="scp -c aes128-gcm@openssh.com"
DESC[scp]="scp (default cipher)"
DESC[sftp]="sftp -b (put)"
DESC[rsync]="rsync --whole-file (ssh)"
for p in 1 4 8 16; do DESC[gridftp-p$p]="globus-url-copy -p $p (clear text)"; done
DESC[iperf3-P4]="iperf3 -P 4 (TCP ceiling)"

# ---------------------------------------------------------------- case a: memory to memory
MEM_CFGS=(lanecp lanecp-noenc scp-gcm scp sftp rsync)
for p in $GRID_PS; do MEM_CFGS+=("gridftp-p$p"); done
MEM_CFGS+=(iperf3-P4)
set_mem() {
	local src=$MEM/zero-$MEM_SIZE
	BYTES=$(bytes_of "$MEM_SIZE")
	case $1 in
	lanecp) lanecp_cmd "$src" "$NULLDEV"; STREAMS=4 ;;
	lanecp-noenc) lanecp_cmd "$src" "$NULLDEV" --no-encrypt; STREAMS=4 ;;
	*) peer_cmd "$1" "$src" "$NULLDEV" ;;
	esac
	case $1 in scp* | sftp) OK_ERR=$NULL_OK_ERR ;; esac
}
case_mem() {
	local size=$MEM_SIZE g
	out "## (a) Memory to memory: $size zero-filled tmpfs file -> host:/dev/null (loopback)"
	out
	out "Source: a zero-filled file on tmpfs (written, not sparse: lanecp would send a hole as a header)."
	out "Target: a private character device (mknod c 1 3, i.e. /dev/null) for every tool."
	out "iperf3 sends the same number of bytes (-n) at lanecp's default stream count."
	out
	zero_file "$size" "$MEM/zero-$size"
	cat "$MEM/zero-$size" >/dev/null
	grid_start
	iperf_start
	run_case mem set_mem "${MEM_CFGS[@]}"
	stop_pid "$IPERF_PID"; IPERF_PID=
	table mem lanecp lanecp-noenc "${MEM_CFGS[@]}"
	failures mem
	local n i e
	n=$(med mem lanecp-noenc MBps); i=$(med mem iperf3-P4 MBps); e=$(med mem lanecp MBps)
	target "memory to memory --no-encrypt ≥ 70% of iperf3 (loopback, 4 streams, $size)" \
	    "$(fmt "$n" 0) vs $(fmt "$i" 0) MB/s = $(ratio "$n" "$i")" "$(ge "$(ratio "$n" "$i")" 0.70)"
	target "encrypted ≥ 80% of --no-encrypt (loopback memory to memory, -s 4, $size)" \
	    "$(fmt "$e" 0) vs $(fmt "$n" 0) MB/s = $(ratio "$e" "$n")" "$(ge "$(ratio "$e" "$n")" 0.80)"
	rm -f "$MEM/zero-$size"
}

# ---------------------------------------------------------------- case pipe: stdin as the source (issue 14)
PIPE_CFGS=(lanecp-pipe ssh-cat lanecp-file)
DESC[lanecp-pipe]="dd \\| lanecp - host:/dev/null (TLS, -s 4)"
DESC[ssh-cat]="dd \\| ssh host 'cat > /dev/null'"
DESC[lanecp-file]="lanecp tmpfs file -> host:/dev/null (TLS, -s 4)"
set_pipe() {
	local mib=$(($(bytes_of "$PIPE_SIZE") >> 20))
	BYTES=$(bytes_of "$PIPE_SIZE")
	STREAMS=4
	case $1 in
	lanecp-pipe)
		TOOL=lanecp
		CMD=(bash -c "dd if=/dev/zero bs=1M count=$mib status=none | \"\$0\" -F \"\$1\" -q - \"\$2\"" \
		    "$LANECP" "$CFG" "$H:$NULLDEV")
		;;
	ssh-cat)
		TOOL=ssh
		STREAMS=1
		CMD=(bash -c "dd if=/dev/zero bs=1M count=$mib status=none | ssh -F \"\$0\" \"\$1\" \"cat > \$2\"" \
		    "$CFG" "$H" "$NULLDEV")
		;;
	lanecp-file) lanecp_cmd "$MEM/zero-$PIPE_SIZE" "$NULLDEV" ;;
	esac
}
# Issue 13 part 3, -c on wan200m: bench/compress_wan.sh (its own WAN and
# sshd; CZ_MIB, default 1024, --quick 64), RUNS rounds; its table goes in.
case_compress() {
	local mib=${CZ_MIB:-1024}
	((QUICK)) && mib=${CZ_MIB:-64}
	out "## Compression (-c) on wan200m: ${mib} MiB of logs and of random data"
	out
	local f=$W/compress.out
	if LANECP=$LANECP WANEM=$WANEM "$HERE/compress_wan.sh" "$mib" "$RUNS" >"$f" 2>"$W/compress.err"; then
		while IFS= read -r l; do out "$l"; done <"$f"
	else
		out "compress_wan.sh failed: $(tail -3 "$W/compress.err")"
	fi
	out
}

case_pipe() {
	local size=$PIPE_SIZE
	out "## Pipes (issue 14): $size from dd through a pipe -> host:/dev/null (loopback)"
	out
	out "lanecp reads stdin with one reader into its stream buffers and stripes it over 4 TLS streams;"
	out "ssh copies the same pipe over one SSH channel (default cipher); the file row is the same bytes"
	out "from a zero-filled tmpfs file.  Target: a private character device (/dev/null) for all."
	out "The two ratio columns are to the pipe row (\"÷ lanecp\") and to the file row (the second)."
	out
	zero_file "$size" "$MEM/zero-$size"
	cat "$MEM/zero-$size" >/dev/null
	run_case pipe set_pipe "${PIPE_CFGS[@]}"
	table pipe lanecp-pipe lanecp-file "${PIPE_CFGS[@]}"
	failures pipe
	rm -f "$MEM/zero-$size"
}

# ---------------------------------------------------------------- case f: encryption cost (issue 13 part 1)
# Pinned: the client (controller and source agent) on CPU 0, the sshd
# listener on CPU 1 before the run, so the session it forks (and the sink
# agent) inherits CPU 1: each end on its own core, as between two hosts.
# Unpinned: both may use every CPU (the affinity is reset before the run).
# LANECP_OLD=/path/to/an/earlier/lanecp adds it, encrypted, at both ends
# (-T), pinned and unpinned: before and after in the same run.
AEAD_CFGS=(lanecp-pin lanecp-noenc-pin lanecp lanecp-noenc scp-gcm)
[[ -n ${LANECP_OLD-} ]] && AEAD_CFGS+=(old-pin old)
DESC[lanecp-pin]="lanecp (encrypted, -s 4), pinned"
DESC[lanecp-noenc-pin]="lanecp --no-encrypt (-s 4), pinned"
DESC[old-pin]="LANECP_OLD (encrypted, -s 4), pinned"
DESC[old]="LANECP_OLD (encrypted, -s 4)"
aead_pin() { taskset -apc 1 "$LC_SSHD_PID" >/dev/null; }
aead_unpin() { taskset -apc "0-$(($(nproc) - 1))" "$LC_SSHD_PID" >/dev/null; }
set_aead() {
	local src=$MEM/zero-$AEAD_SIZE
	BYTES=$(bytes_of "$AEAD_SIZE")
	case $1 in
	lanecp-pin) lanecp_cmd "$src" "$NULLDEV"; STREAMS=4 ;;
	lanecp-noenc-pin) lanecp_cmd "$src" "$NULLDEV" --no-encrypt; STREAMS=4 ;;
	lanecp) lanecp_cmd "$src" "$NULLDEV"; STREAMS=4 ;;
	lanecp-noenc) lanecp_cmd "$src" "$NULLDEV" --no-encrypt; STREAMS=4 ;;
	old*)
		CMD=("$LANECP_OLD" -F "$CFG" -q -T "$LANECP_OLD" "$src" "$H:$NULLDEV")
		TOOL=lanecp; STREAMS=4 ;;
	*) peer_cmd "$1" "$src" "$NULLDEV"; OK_ERR=$NULL_OK_ERR ;;
	esac
	if [[ $1 == *-pin ]]; then
		PRE=aead_pin
		CMD=(taskset -c 0 "${CMD[@]}")
	else
		PRE=aead_unpin
	fi
}
case_aead() {
	local size=$AEAD_SIZE k m gib ep np e n sc
	out "## (f) Encryption cost (issue 13 part 1): $size zero-filled tmpfs file -> host:/dev/null (loopback)"
	out
	out "Pinned: client on CPU 0, sshd (so the sink agent) on CPU 1. Rounds interleaved."
	out
	DESC[lanecp]="lanecp (encrypted, -s 4)"
	zero_file "$size" "$MEM/zero-$size"
	cat "$MEM/zero-$size" >/dev/null
	run_case aead set_aead "${AEAD_CFGS[@]}"
	aead_unpin
	table aead lanecp lanecp-noenc "${AEAD_CFGS[@]}"
	gib=$(calc "$(bytes_of "$size") / 1073741824")
	out "| config | MB/s (median) | CPU s per GiB, both ends (client+server) |"
	out "|---|---:|---:|"
	for k in "${AEAD_CFGS[@]}"; do
		m=$(med aead "$k" MBps)
		out "| ${DESC[$k]:-$k} | $(fmt "$m" 0) | $(fmt "$(calc "$(med aead "$k" cpu_s) / $gib")" 2) ($(fmt "$(calc "$(med aead "$k" cli_cpu_s) / $gib")" 2)+$(fmt "$(calc "$(med aead "$k" srv_cpu_s) / $gib")" 2)) |"
	done
	out
	failures aead
	ep=$(med aead lanecp-pin MBps); np=$(med aead lanecp-noenc-pin MBps)
	e=$(med aead lanecp MBps); n=$(med aead lanecp-noenc MBps); sc=$(med aead scp-gcm MBps)
	target "encrypted ≥ 0.9x --no-encrypt, each end pinned to its own core ($size)" \
	    "$(fmt "$ep" 0) vs $(fmt "$np" 0) MB/s = $(ratio "$ep" "$np")" "$(ge "$(ratio "$ep" "$np")" 0.90)"
	target "encrypted ≥ 0.65x --no-encrypt, unpinned ($size)" \
	    "$(fmt "$e" 0) vs $(fmt "$n" 0) MB/s = $(ratio "$e" "$n")" "$(ge "$(ratio "$e" "$n")" 0.65)"
	target "encrypted ≥ 3x scp -c aes128-gcm to /dev/null, unpinned ($size)" \
	    "$(fmt "$e" 0) vs $(fmt "$sc" 0) MB/s = $(ratio "$e" "$sc")" "$(ge "$(ratio "$e" "$sc")" 3)"
	rm -f "$MEM/zero-$size"
}

# ---------------------------------------------------------------- case b: file to file
FILE_CFGS=(lanecp lanecp-nofsync lanecp-noenc lanecp-noenc-nofsync scp-gcm scp sftp rsync)
((QUICK)) && FILE_CFGS=(lanecp lanecp-noenc scp-gcm sftp rsync)
for p in $GRID_PS; do FILE_CFGS+=("gridftp-p$p"); done
file_pre() {
	rm -rf "${DST:?}"/* "$DST"/.[!.]* 2>/dev/null
	cat "$FILE_SRC" >/dev/null	# the source stays page-cached
	warm_pages "$FILE_SIZE"
	sync
}
# On VMs that hand free guest memory back to the host (virtio-balloon free
# page reporting, DAMON; this one does), the first write to such memory is
# slow: a 2 GiB dd into the page cache ran at 0.5-0.7 GB/s on memory that had
# been free for a few seconds and at 4.6 GB/s right after 2.5 GiB had been
# allocated and freed.  So before each file-case run, write and delete a file
# of the target's size + 512 MiB: whatever tool runs next gets warm pages.
warm_pages() {	# SIZE
	dd if=/dev/zero of="$W/warm" bs=1M count=$(($(bytes_of "$1") / 1048576 + 512)) status=none
	rm -f "$W/warm"
}
file_post() {
	# Deleting the target right away discards its dirty pages; the sync
	# then flushes whatever writeback had started, so every run starts
	# with a clean page cache (except the cached source).
	rm -rf "${DST:?}"/* "$DST"/.[!.]* 2>/dev/null
	sync
}
set_file() {
	local t=$DST/target.bin
	BYTES=$(bytes_of "$FILE_SIZE")
	case $1 in
	lanecp) lanecp_cmd "$FILE_SRC" "$t"; STREAMS=4 ;;
	lanecp-nofsync) lanecp_cmd "$FILE_SRC" "$t" --no-fsync; STREAMS=4 ;;
	lanecp-noenc) lanecp_cmd "$FILE_SRC" "$t" --no-encrypt; STREAMS=4 ;;
	lanecp-noenc-nofsync) lanecp_cmd "$FILE_SRC" "$t" --no-encrypt --no-fsync; STREAMS=4 ;;
	*) peer_cmd "$1" "$FILE_SRC" "$t" ;;
	esac
	PRE=file_pre POST=file_post VERIFY=$FILE_SRC VERIFY_TARGET=$t
}
case_file() {
	out "## (b) File to file: $FILE_SIZE random data, page-cached source -> file on the same filesystem (loopback)"
	out
	out "Before each run: the source is read (cat > /dev/null, so it is cached), the target"
	out "directory emptied and \`sync\` run. After each run the target is deleted at once (its dirty"
	out "pages are discarded unwritten) and \`sync\` run again. lanecp fsyncs file and directory by"
	out "default before its rename; scp, sftp, rsync and globus-url-copy do not (their time ends"
	out "with the data in the page cache), so lanecp is shown with and without --no-fsync."
	out "Every first run of a tool is verified with cmp, later runs by size."
	out
	FILE_SRC=$DATA/random-$FILE_SIZE
	log "generating $FILE_SIZE of random data"
	head -c "$(bytes_of "$FILE_SIZE")" /dev/urandom >"$FILE_SRC" || die "cannot write $FILE_SRC"
	chmod 0644 "$FILE_SRC"
	grid_start
	run_case file set_file "${FILE_CFGS[@]}"
	table file lanecp lanecp-noenc "${FILE_CFGS[@]}"
	failures file
	local l ln s r n g gb
	l=$(med file lanecp MBps); ln=$(med file lanecp-nofsync MBps)
	s=$(med file scp-gcm MBps); r=$(med file rsync MBps); n=$(med file lanecp-noenc MBps)
	read -r gb g < <(best_grid file)
	out "GridFTP's best stream count here: ${gb#gridftp-p} ($(fmt "$g" 0) MB/s)."
	out
	target "file to file $FILE_SIZE, encrypted defaults ≥ 4x scp -c aes128-gcm" \
	    "$(fmt "$l" 0) vs $(fmt "$s" 0) MB/s = $(ratio "$l" "$s")x$([[ $ln != - ]] && echo " (--no-fsync: $(fmt "$ln" 0) MB/s = $(ratio "$ln" "$s")x)")" "$(ge "$(ratio "$l" "$s")" 4)"
	target "file to file $FILE_SIZE, encrypted defaults ≥ 2x rsync" \
	    "$(fmt "$l" 0) vs $(fmt "$r" 0) MB/s = $(ratio "$l" "$r")x$([[ $ln != - ]] && echo " (--no-fsync: $(ratio "$ln" "$r")x)")" "$(ge "$(ratio "$l" "$r")" 2)"
	local nn
	nn=$(med file lanecp-noenc-nofsync MBps)
	target "file to file $FILE_SIZE, --no-encrypt ≥ globus-url-copy at its best -p (${gb#gridftp-p})" \
	    "$(fmt "$n" 0) vs $(fmt "$g" 0) MB/s = $(ratio "$n" "$g")x$([[ $nn != - ]] && echo " (--no-fsync: $(fmt "$nn" 0) MB/s = $(ratio "$nn" "$g")x)")" "$(ge "$(ratio "$n" "$g")" 1)"
	rm -f "$FILE_SRC"
}

# ---------------------------------------------------------------- case c: streams, windows, TLS
STREAM_CFGS=()
for s in $STREAM_NS; do
	for w in $STREAM_WS; do
		for e in "" -noenc; do
			STREAM_CFGS+=("lanecp$e-s$s-w$w")
		done
	done
	STREAM_CFGS+=("iperf3-P$s")
done
set_streams() {
	local src=$MEM/zero-$STREAMS_SIZE c=$1 s w
	local -a a=()
	BYTES=$(bytes_of "$STREAMS_SIZE")
	if [[ $c == iperf3-P* ]]; then
		peer_cmd "$c" "$src" "$NULLDEV"
		return
	fi
	s=${c#*-s}; s=${s%%-*}
	w=${c##*-w}
	[[ $c == *-noenc-* ]] && a+=(--no-encrypt)
	[[ $w != auto ]] && a+=(-w "$w")
	lanecp_cmd "$src" "$NULLDEV" -s "$s" "${a[@]}"
	STREAMS=$s
}
case_streams() {
	local s w e ea ew na nw ip
	out "## (c) lanecp streams, TCP window and encryption: $STREAMS_SIZE zero-filled tmpfs file -> host:/dev/null (loopback)"
	out
	out "\`-w auto\`: kernel autotuning (no -w); \`-w 4m\`: SO_SNDBUF/SO_RCVBUF 4 MiB (the host's"
	out "rmem_max/wmem_max are 4 MiB here, so that is also the cap). iperf3 -P N sends the same bytes."
	out
	zero_file "$STREAMS_SIZE" "$MEM/zero-$STREAMS_SIZE"
	cat "$MEM/zero-$STREAMS_SIZE" >/dev/null
	iperf_start
	run_case streams set_streams "${STREAM_CFGS[@]}"
	stop_pid "$IPERF_PID"; IPERF_PID=
	local hdr="| -s | TLS auto | TLS -w 4m | --no-encrypt auto | --no-encrypt -w 4m | iperf3 -P N | no-enc ÷ iperf3 (auto, 4m) | TLS ÷ no-enc (auto, 4m) | CPU s TLS / no-enc (auto) |"
	out "MB/s, medians:"
	out
	out "$hdr"
	out "|---:|---:|---:|---:|---:|---:|---|---|---|"
	for s in $STREAM_NS; do
		ea=$(med streams "lanecp-s$s-wauto" MBps); ew=$(med streams "lanecp-s$s-w4m" MBps)
		na=$(med streams "lanecp-noenc-s$s-wauto" MBps); nw=$(med streams "lanecp-noenc-s$s-w4m" MBps)
		ip=$(med streams "iperf3-P$s" MBps)
		out "| $s | $(fmt "$ea" 0) | $(fmt "$ew" 0) | $(fmt "$na" 0) | $(fmt "$nw" 0) | $(fmt "$ip" 0) | $(ratio "$na" "$ip"), $(ratio "$nw" "$ip") | $(ratio "$ea" "$na"), $(ratio "$ew" "$nw") | $(fmt "$(med streams "lanecp-s$s-wauto" cpu_s)" 2) / $(fmt "$(med streams "lanecp-noenc-s$s-wauto" cpu_s)" 2) |"
		target "--no-encrypt ≥ 70% of iperf3 -P $s (loopback memory to memory, autotuned)" \
		    "$(fmt "$na" 0) vs $(fmt "$ip" 0) MB/s = $(ratio "$na" "$ip")" "$(ge "$(ratio "$na" "$ip")" 0.70)"
		target "encrypted ≥ 80% of --no-encrypt at -s $s (loopback, autotuned)" \
		    "$(fmt "$ea" 0) vs $(fmt "$na" 0) MB/s = $(ratio "$ea" "$na")" "$(ge "$(ratio "$ea" "$na")" 0.80)"
	done
	out
	out "All configurations:"
	out
	for c in "${STREAM_CFGS[@]}"; do
		case $c in
		iperf3-P*) DESC[$c]="iperf3 -P ${c#iperf3-P}" ;;
		*) s=${c#*-s}; s=${s%%-*}; w=${c##*-w}
		   DESC[$c]="lanecp$([[ $c == *-noenc-* ]] && echo " --no-encrypt") -s $s$([[ $w != auto ]] && echo " -w $w")" ;;
		esac
	done
	table streams lanecp-s4-wauto lanecp-noenc-s4-wauto "${STREAM_CFGS[@]}"
	failures streams
	[[ " $STREAM_NS " == *" 4 "* ]] || out "(÷ columns: relative to -s 4, which this run did not include)"
	rm -f "$MEM/zero-$STREAMS_SIZE"
}

# ---------------------------------------------------------------- case e: peak RSS
# Push to the null device (and, in a full run, to a file) and pull from
# the server to the null device, at each size.  Issue 23's target: at
# most 64 MiB resident at each end, push and pull.
RSS_LIMIT_KB=65536
RSS_CFGS=()
for z in $RSS_SIZES; do
	((QUICK)) || RSS_CFGS+=("lanecp-s16-$z-file")
	RSS_CFGS+=("lanecp-s16-$z-null" "lanecp-s16-$z-pull")
done
rss_post() { rm -rf "${DST:?}"/* "$DST"/.[!.]* 2>/dev/null; sync; }
set_rss() {
	local z=${1#lanecp-s16-}
	z=${z%-*}
	BYTES=$(bytes_of "$z")
	STREAMS=16
	case $1 in
	*-file)
		lanecp_cmd "$MEM/zero-$z" "$DST/rss.bin" -s 16 --no-fsync
		PRE=rss_post POST=rss_post
		;;
	*-pull)
		# the client is the sink here: the controller with its agent
		CMD=("$LANECP" -F "$CFG" -q -s 16 "$H:$MEM/zero-$z" "$NULLDEV")
		TOOL=lanecp
		;;
	*) lanecp_cmd "$MEM/zero-$z" "$NULLDEV" -s 16 ;;
	esac
}
case_rss() {
	local z c a b t mx cr sr
	local -a zs
	out "## (e) Peak memory at -s 16 (TLS, default block size): ${RSS_SIZES// / vs } zero-filled tmpfs source, push and pull (loopback)"
	out
	out "Client: GNU time's max RSS of the lanecp process (controller + local agent: the source in a push,"
	out "the sink in a pull). Server: the remote agent's (lanecp --agent) max RSS from GNU time in the sshd"
	out "ForceCommand wrapper, or a larger sampled sshd session process. push: file -> host:null device;"
	out "pull: host:file -> local null device; file: push to a file with --no-fsync (to save time; the"
	out "buffers do not depend on it), deleted after each run. Target (issue 23): at most 64 MiB at each end."
	out
	for z in $RSS_SIZES; do
		zero_file "$z" "$MEM/zero-$z"
		cat "$MEM/zero-$z" >/dev/null	# page-cached, like case (a)
	done
	run_case rss set_rss "${RSS_CFGS[@]}"
	out "| size | direction | runs | MB/s | client RSS MiB (max) | server RSS MiB (max) | ≤ 64 MiB each end |"
	out "|---|---|---|---:|---:|---:|---|"
	for c in "${RSS_CFGS[@]}"; do
		z=${c#lanecp-s16-}; z=${z%-*}
		case ${c##*-} in null) t=push ;; pull) t=pull ;; *) t="push (file)" ;; esac
		cr=$(col rss "$c" cli_rss_kb | maxof); sr=$(col rss "$c" srv_rss_kb | maxof)
		mx=$(printf '%s\n' "$cr" "$sr" | maxof)
		case $(ge "$RSS_LIMIT_KB" "$mx") in 1) a=pass ;; 0) a="**miss**" ;; *) a=- ;; esac
		out "| $z | $t | $(nruns rss "$c") | $(fmt "$(med rss "$c" MBps)" 0) | $(mib "$cr") | $(mib "$sr") ($(awk -F, -v k="$c" 'NR > 1 && $6 == "rss" && $7 == k { print $21; exit }' "$CSV")) | $a |"
	done
	out
	failures rss
	read -r -a zs <<<"$RSS_SIZES"
	for t in null pull file; do
		local ca cb sa sb all=()
		for z in "${zs[@]}"; do
			c=lanecp-s16-$z-$t
			[[ " ${RSS_CFGS[*]} " == *" $c "* ]] || continue
			all+=("$(col rss "$c" cli_rss_kb | maxof)" "$(col rss "$c" srv_rss_kb | maxof)")
		done
		((${#all[@]})) || continue
		case $t in null) a=push ;; pull) a=pull ;; *) a="push to a file" ;; esac
		mx=$(printf '%s\n' "${all[@]}" | maxof)
		target "peak RSS at -s 16 ≤ 64 MiB at each end, issue 23 ($a, ${RSS_SIZES// /, })" \
		    "max $(mib "$mx") MiB" "$(ge "$RSS_LIMIT_KB" "$mx")"
		a=lanecp-s16-${zs[0]}-$t; b=lanecp-s16-${zs[${#zs[@]} - 1]}-$t
		ca=$(col rss "$a" cli_rss_kb | maxof); cb=$(col rss "$b" cli_rss_kb | maxof)
		sa=$(col rss "$a" srv_rss_kb | maxof); sb=$(col rss "$b" srv_rss_kb | maxof)
		target "peak RSS flat in file size ($t, ${zs[${#zs[@]} - 1]} ÷ ${zs[0]}, ≤ 1.25)" \
		    "client $(ratio "$cb" "$ca"), server $(ratio "$sb" "$sa")" \
		    "$(awk -v a="$(ratio "$cb" "$ca")" -v b="$(ratio "$sb" "$sa")" 'BEGIN { print (a != "-" && b != "-" && a <= 1.25 && b <= 1.25) ? 1 : 0 }')"
	done
	for z in $RSS_SIZES; do rm -f "$MEM/zero-$z"; done
}

# ---------------------------------------------------------------- case d: emulated WAN
# The namespaces: bench/wan.sh's pair, lc-wan-a and lc-wan-b, or
# $BENCH_WAN_NS-a and -b with BENCH_WAN_NS set (given to wan.sh as its
# WAN_NS; its state then lives in /run/lanecp-wan-$BENCH_WAN_NS), so that a
# WAN case need not wait for someone else's emulated WAN to go down.  Two
# emulated WANs on one machine share its CPUs: numbers taken so are noisy.
# (WAN_NS itself is this script's list of WAN stream counts, never passed
# on.)
WAN_PFX=${BENCH_WAN_NS:-lc-wan}
wan_sh() {
	if [[ -n ${BENCH_WAN_NS-} ]]; then
		env WANEM="$WANEM" WAN_NS="$BENCH_WAN_NS" "$HERE/wan.sh" "$@"
	else
		env -u WAN_NS WANEM="$WANEM" "$HERE/wan.sh" "$@"
	fi
}
WAN_UP=
WAN_SSHD_PID=
wan_down() {
	stop_samplers
	kill_tree "$RUN_PID"
	stop_pid "$WAN_SSHD_PID"; WAN_SSHD_PID=""
	stop_pid "$IPERF_PID"; IPERF_PID=
	if [[ -n $WAN_UP ]]; then
		wan_sh down >/dev/null 2>&1
		WAN_UP=
	fi
}
wan_sshd_start() {
	local cfg=$W/sshd_wan_config log=$W/sshd_wan.log port=2222 i
	sed -e "s/^ListenAddress .*/ListenAddress 10.77.0.2/" -e "s/^Port .*/Port $port/" \
	    -e "s|^PidFile .*|PidFile $W/sshd_wan.pid|" "$LC_SSHD_CONFIG" >"$cfg"
	: >"$log"
	(cg_join server; exec ip netns exec "$WAN_PFX-b" "$(command -v sshd || echo /usr/sbin/sshd)" -D -f "$cfg" -E "$log" </dev/null) &
	WAN_SSHD_PID=$!
	BG_PIDS+=("$WAN_SSHD_PID")
	SRV_RESIDENT+="$WAN_SSHD_PID "
	SRV_LISTENERS+="$WAN_SSHD_PID "
	for ((i = 0; i < 100; i++)); do
		grep -q "Server listening on 10.77.0.2 port $port" "$log" && break
		kill -0 "$WAN_SSHD_PID" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "Server listening on 10.77.0.2 port $port" "$log" || { cat "$log" >&2; die "sshd in lc-wan-b did not start"; }
	grep -q '^\[10.77.0.2\]' "$LC_KNOWN_HOSTS" ||
		printf '[10.77.0.2]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$LC_HOST_KEY")" >>"$LC_KNOWN_HOSTS"
	local save=$LC_SSH_HOST
	LC_SSH_HOST=lcwan
	lc_ssh_config "$W/ssh_config_wan" HostName=10.77.0.2 Port=$port
	LC_SSH_HOST=$save
}
set_wan() {
	local src=$MEM/zero-wan c=$1
	local -a ns=(ip netns exec "$WAN_PFX-a")
	BYTES=0
	TLIMIT=$WAN_T
	RXPID=$WAN_SSHD_PID
	case $c in
	lanecp-s*)
		STREAMS=${c#lanecp-s}
		CMD=("${ns[@]}" "$LANECP" -F "$W/ssh_config_wan" -q -s "$STREAMS" "$src" "lcwan:$NULLDEV")
		TOOL=lanecp ;;
	iperf3-P*)
		STREAMS=${c#iperf3-P}
		CMD=("${ns[@]}" iperf3 -c 10.77.0.2 -p "$IPERF_PORT" -P "$STREAMS" -t "$WAN_T")
		TOOL=iperf3
		TLIMIT=$((WAN_T + 15)) ;;
	scp-gcm)
		STREAMS=1
		CMD=("${ns[@]}" scp -q -F "$W/ssh_config_wan" -c aes128-gcm@openssh.com "$src" "lcwan:$NULLDEV")
		TOOL=scp ;;
	esac
}
case_wan() {
	local prof=$1 rate s l i lst ist png data
	case $prof in lfn1g) rate=1000 ;; wan200m) rate=200 ;; esac
	out "## (d) Emulated WAN: $prof ($("$HERE/wan.sh" profiles | awk -v p="$prof" '$1 == p { $1 = ""; sub(/^ +/, ""); print }'))"
	out
	out "Client in lc-wan-a, sshd and iperf3 -s in lc-wan-b (10.77.0.2), through bench/wanem."
	out "Each run lasts ${WAN_T} s (lanecp and scp copy a ${WAN_SPARSE} zero-filled tmpfs file to /dev/null and are stopped"
	out "by SIGTERM at ${WAN_T} s; iperf3 runs -t ${WAN_T}). Throughput: IP bytes received on lc-wan-b's"
	out "link (the bytes wanem rates the link by) over the client's wall time, SSH/TLS setup and slow"
	out "start included; \"steady\" leaves out the first 3 s. Goodput is lower by the TCP/IP"
	out "headers ($([[ $prof == wan200m ]] && echo "3.5 % at MTU 1500" || echo "0.6 % at MTU 9000")) and TLS/SSH framing (under 0.5 %)."
	out
	[[ -x $WANEM ]] || die "wanem not found at $WANEM (set WANEM=)"
	if wan_sh status >/dev/null 2>&1; then
		die "an emulated WAN is already up (bench/wan.sh status): someone else may be using it; not touching it"
	fi
	WAN_UP=1
	lc_on_exit wan_down
	wan_sh up "$prof" >&2 || die "bench/wan.sh up $prof failed"
	zero_file "$WAN_SPARSE" "$MEM/zero-wan"
	cat "$MEM/zero-wan" >/dev/null
	wan_sshd_start
	iperf_start "$WAN_PFX-b" 10.77.0.2
	local -a cfgs=()
	for s in $WAN_NS; do cfgs+=("lanecp-s$s" "iperf3-P$s"); done
	cfgs+=(scp-gcm)
	local wcase=wan-$prof
	RXPID=$WAN_SSHD_PID
	run_case "$wcase" set_wan "${cfgs[@]}"
	RXPID=
	wan_down
	rm -f "$MEM/zero-wan"
	local sc scs
	sc=$(med "$wcase" scp-gcm wire_Mbps); scs=$(med "$wcase" scp-gcm steady_Mbps)
	out "Mbit/s, medians (runs: $RUNS; link rate $rate Mbit/s of IP bytes):"
	out
	out "| streams | lanecp | lanecp steady | % of link | iperf3 -P N | iperf3 steady | lanecp ÷ iperf3 | lanecp ÷ scp | CPU s lanecp / iperf3 |"
	out "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	data=$W/wan-$prof.dat
	: >"$data"
	for s in $WAN_NS; do
		l=$(med "$wcase" "lanecp-s$s" wire_Mbps); lst=$(med "$wcase" "lanecp-s$s" steady_Mbps)
		i=$(med "$wcase" "iperf3-P$s" wire_Mbps); ist=$(med "$wcase" "iperf3-P$s" steady_Mbps)
		local lcell
		lcell=$(fmt "$l" 0)
		[[ $l == - ]] && lcell="failed ($(nruns "$wcase" "lanecp-s$s"))"
		out "| $s | $lcell | $(fmt "$lst" 0) | $(awk -v a="$l" -v r="$rate" 'BEGIN { if (a == "-") print "-"; else printf "%.0f %%", 100 * a / r }') | $(fmt "$i" 0) | $(fmt "$ist" 0) | $(ratio "$l" "$i") | $(ratio "$l" "$sc") | $(fmt "$(med "$wcase" "lanecp-s$s" cpu_s)" 2) / $(fmt "$(med "$wcase" "iperf3-P$s" cpu_s)" 2) |"
		echo "$s $l $i $sc $rate $lst $ist" >>"$data"
	done
	FAILED_S=$(for s in $WAN_NS; do [[ $(med "$wcase" "lanecp-s$s" wire_Mbps) == - ]] && printf '%s ' "$s"; done)
	out "| scp (1 stream, aes128-gcm) | $(fmt "$sc" 0) | $(fmt "$scs" 0) | $(awk -v a="$sc" -v r="$rate" 'BEGIN { if (a == "-") print "-"; else printf "%.0f %%", 100 * a / r }') | | | | 1.00 | $(fmt "$(med "$wcase" scp-gcm cpu_s)" 2) |"
	out
	failures "$wcase"
	if [[ $prof == lfn1g ]]; then
		l=$(med "$wcase" lanecp-s16 wire_Mbps); lst=$(med "$wcase" lanecp-s16 steady_Mbps)
		if [[ $l != - ]]; then
			target "lfn1g: lanecp -s 16 ≥ 85% of the link rate" \
			    "$(fmt "$l" 0) Mbit/s = $(awk -v a="$l" 'BEGIN { printf "%.0f %%", a / 10 }') (steady $(awk -v a="$lst" 'BEGIN { if (a == "-") print "-"; else printf "%.0f %%", a / 10 }'))" "$(ge "$l" 850)"
			target "lfn1g: lanecp -s 16 ≥ 5x scp" "$(fmt "$l" 0) vs $(fmt "$sc" 0) Mbit/s = $(ratio "$l" "$sc")x" "$(ge "$(ratio "$l" "$sc")" 5)"
		fi
	fi
	# The plot.
	png=$RESULTS/wan-$prof-$STAMP.png
	local scpv=${sc/#-/NaN}
	gnuplot <<EOF 2>"$W/gnuplot.err" || log "gnuplot failed: $(cat "$W/gnuplot.err")"
set terminal pngcairo size 900,560 font "sans,11"
set output "$png"
set title "Emulated WAN '$prof': $rate Mbit/s, $(case $prof in lfn1g) echo "50 ms RTT, 0.1% loss" ;; wan200m) echo "100 ms RTT, 0.05% loss" ;; esac) ($NPROC-CPU VM, median of $RUNS x ${WAN_T} s)"
set xlabel "parallel TCP streams (lanecp -s N, iperf3 -P N)"
set ylabel "Mbit/s (IP bytes on the link)"
set logscale x 2
set xrange [0.8:40]
set yrange [0:$((rate * 11 / 10))]
set key top left
set grid
set datafile missing "-"
scp = $scpv
link = $rate
$(for s in $FAILED_S; do printf 'set label "lanecp -s %s:\\nall runs failed" at %s,%s center tc rgb "#1f5fbf"\n' "$s" "$s" "$((rate / 8))"; done)
plot "$data" using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f5fbf" title "lanecp (TLS), whole run", \\
     "$data" using 1:6 with linespoints lw 1 pt 6 dt 2 lc rgb "#1f5fbf" title "lanecp, after the first 3 s", \\
     "$data" using 1:3 with linespoints lw 2 pt 5 lc rgb "#d95f02" title "iperf3 -P N (raw TCP), whole run", \\
     "$data" using 1:7 with linespoints lw 1 pt 4 dt 2 lc rgb "#d95f02" title "iperf3, after the first 3 s", \\
     scp with lines lw 2 dt 3 lc rgb "#1b9e77" title "scp -c aes128-gcm (1 stream)", \\
     link with lines lw 1 lc rgb "black" title "link rate"
EOF
	if [[ -s $png ]]; then
		cp "$png" "$HERE/wan-$prof.png"
		out "Plot: \`$(basename "$RESULTS")/$(basename "$png")\` (copied to \`bench/wan-$prof.png\`)."
		out
	fi
}

# ---------------------------------------------------------------- trees (issue 11)
# shellcheck source=tree.sh
. "$HERE/tree.sh"
# shellcheck source=paths.sh
. "$HERE/paths.sh"
# shellcheck source=ramp.sh
. "$HERE/ramp.sh"
# shellcheck source=startup.sh
. "$HERE/startup.sh"

# ---------------------------------------------------------------- main
SUITE_T0=$SECONDS
want mem && case_mem
want file && case_file
want streams && case_streams
want rss && case_rss
want aead && case_aead
want pipe && case_pipe
want compress && case_compress
want wan-lfn1g && case_wan lfn1g
want wan-wan200m && case_wan wan200m
want paths && case_paths
want relay && case_relay
want ramp-lfn1g && case_ramp lfn1g
want ramp-wan200m && case_ramp wan200m
want startup && case_startup
want tree-10k && case_tree_10k
want tree-1k && case_tree_1k
want tree-mixed && case_tree_mixed
want tree-one && case_tree_one
want tree-noop && case_tree_noop
want tree-rss && case_tree_rss
want tree-lfn1g && case_tree_lfn1g
want tree-wan200m && case_tree_wan200m
want tree-clean1g && case_tree_clean1g
want tree-mixed-lfn1g && case_tree_mixed_lfn1g
want shard-lfn1g && case_shard_lfn1g

if ((${#TARGETS[@]})); then
	out "## Targets (issue 4; trees: issue 11; data paths: issue 12; ramp: issue 13 part 2)"
	out
	out "| target | measured (medians) | verdict |"
	out "|---|---|---|"
	for t in "${TARGETS[@]}"; do out "$t"; done
	out
fi
out "Suite time: $(((SECONDS - SUITE_T0) / 60)) min $(((SECONDS - SUITE_T0) % 60)) s. Per-run data: \`$(basename "$RESULTS")/$(basename "$CSV")\`."
log "done: $MD"
