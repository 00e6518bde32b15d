# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # sourced by run.sh: DESC, VERIFY... are its
# lanecp benchmark: tree cases (issue 11).  Sourced by bench/run.sh, which
# provides the sshd, cgroups, measure/run_case, the CSV and the tables'
# helpers; run them with
#
#   bench/run.sh --case tree             all tree cases (5 runs each; estimated 15-20 min)
#   bench/run.sh --case tree-10k -n 7    one of them
#   bench/run.sh --quick --case tree     smaller trees, 1 run (a smoke test)
#
# Cases (all loopback, push, the source page-cached, `sync` before each run,
# untimed; the tools interleaved round-robin as everywhere in run.sh):
#   tree-10k    10,000 x 4 KiB files in 100 directories
#   tree-1k     1,000 x 4 KiB files in 10 directories
#   tree-mixed  2 x TREE_BIG (default 256M; --tree-big SIZE) + 5,000 small files
#       each:   rsync -a (ssh), tar -c | ssh tar -x, scp -r, lanecp -r,
#               lanecp -r --no-fsync
#   tree-one    one 4 KiB file end to end: scp vs lanecp
#   tree-noop   the re-run on an unchanged 10,000-file tree: rsync -a vs
#               lanecp -r -p -u (the seeding copies, untimed, are rsync -a
#               and lanecp -r -p: -u compares mtimes, so they must be kept)
#   tree-rss    peak RSS of both ends, lanecp -r on 1,000 vs 100,000 files
#               of 1 KiB (rsync -a alongside for reference), 1 run each
#               unless -n is given
# lanecp rows whose runs all fail (lanecp -r does not exist yet) print FAIL;
# the other tools are measured all the same.

# Sizes (full / quick).
if ((QUICK)); then
	TREE_N10K=2000 TREE_N1K=1000 TREE_MIXED_N=1000 TREE_BIG=${TREE_BIG:-32M}
	TREE_RSS_NS="1000 10000"
	TREE_RUNS=${RUNS_SET:-1}
else
	TREE_N10K=10000 TREE_N1K=1000 TREE_MIXED_N=5000 TREE_BIG=${TREE_BIG:-256M}
	TREE_RSS_NS="1000 100000"
	TREE_RUNS=${RUNS_SET:-5}
fi
TREE_RSS_RUNS=${RUNS_SET:-1}

TREE_CFGS=(rsync-a tar-ssh scp-r lanecp-r lanecp-r-nofsync)
DESC[rsync-a]="rsync -a (ssh)"
DESC[tar-ssh]="tar -c \| ssh tar -x"
DESC[scp-r]="scp -r"
DESC[lanecp-r]="lanecp -r (TLS, durable)"
DESC[lanecp-r-nofsync]="lanecp -r --no-fsync"
DESC[scp-one]="scp"
DESC[lanecp-one]="lanecp (TLS, durable)"
DESC[lanecp-one-nofsync]="lanecp --no-fsync"
DESC[rsync-noop]="rsync -a, unchanged tree"
DESC[lanecp-noop]="lanecp -r -p -u, unchanged tree"

# gen_tree DIR N SIZE NDIRS: N files of SIZE bytes (random) in NDIRS
# directories; one random block reused with a per-file header, so that
# 100,000 files take seconds, and no two files are the same.
gen_tree() {
	python3 - "$@" <<'EOF'
import os, sys
root, n, size, ndirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
block = os.urandom(max(size, 1))
for d in range(ndirs):
    os.makedirs(os.path.join(root, 'd%03d' % d), exist_ok=True)
for i in range(n):
    head = b'%d\n' % i
    data = (head + block)[:size] if size >= len(head) else block[:size]
    with open(os.path.join(root, 'd%03d' % (i % ndirs), 'f%06d' % i), 'wb') as f:
        f.write(data)
EOF
}

tree_warm() { find "$1" -type f -exec cat {} + >/dev/null; }
tree_files() { find "$1" -type f | wc -l; }
tree_size() { du -sb "$1" | cut -f1; }

TREE_T=$DST/tree	# every timed copy makes this directory
# Before each run: the source read (cached), then sync.  (run.sh's
# warm_pages, which the file case needs, made no difference to the tree
# runs here: their cost is file creation, see bench/README.md.)
tree_pre() {
	rm -rf "$TREE_T"
	tree_warm "$TREE_SRC"
	sync
}
tree_post() {
	rm -rf "$TREE_T"
	sync
}

# set_tree CONFIG: a copy of $TREE_SRC to $TREE_T (made by the copy).
set_tree() {
	local s=$TREE_SRC t=$TREE_T
	BYTES=$TREE_BYTES
	STREAMS=1
	case $1 in
	rsync-a) TOOL=rsync; CMD=(rsync -a -e "ssh -F $CFG" "$s/" "$H:$t/") ;;
	tar-ssh)
		TOOL=tar
		CMD=(bash -c "tar -C '$s' -cf - . | ssh -F '$CFG' '$H' 'mkdir -p $t && tar -C $t -xf -'")
		;;
	scp-r) TOOL=scp; CMD=(scp -q -r -F "$CFG" "$s" "$H:$t") ;;
	lanecp-r) lanecp_cmd "$s/" "$t/" -r; STREAMS=4 ;;
	lanecp-r-nofsync) lanecp_cmd "$s/" "$t/" -r --no-fsync; STREAMS=4 ;;
	*) die "unknown tree config $1" ;;
	esac
	PRE=tree_pre POST=tree_post VERIFY=$TREE_SRC VERIFY_TARGET=$t
}

# tree_table CASE CONFIG...: seconds (median, min-max), files/s, CPU, RSS,
# and each tool's time over rsync's, tar's and scp's (when measured).
tree_table() {
	local case=$1 k m lo hi r t s
	shift
	r=$(med "$case" rsync-a seconds); t=$(med "$case" tar-ssh seconds); s=$(med "$case" scp-r seconds)
	out "| tool | runs | seconds (median) | min-max | files/s | CPU s (client+server) | client RSS MiB | server RSS MiB | ÷ rsync | ÷ tar | ÷ scp |"
	out "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
	for k in "$@"; do
		m=$(med "$case" "$k" seconds)
		if [[ $m == - ]]; then
			out "| ${DESC[$k]:-$k} | $(nruns "$case" "$k") | FAIL | - | - | - | - | - | - | - | - |"
			continue
		fi
		lo=$(col "$case" "$k" seconds | minof); hi=$(col "$case" "$k" seconds | maxof)
		out "| ${DESC[$k]:-$k} | $(nruns "$case" "$k") | $(fmt "$m" 3) | $(fmt "$lo" 3)-$(fmt "$hi" 3) | $(fmt "$(calc "$TREE_NFILES / $m")" 0) | $(cpu_cell "$case" "$k") | $(rss_cell "$case" "$k") | $(ratio "$m" "$r") | $(ratio "$m" "$t") | $(ratio "$m" "$s") |"
	done
	out
}
lf() {	# a median, or FAIL
	if [[ $1 == - || -z $1 ]]; then echo FAIL; else fmt "$1" "${2:-3}"; fi
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "") print "-"; else print (a + 0 <= b + 0) ? 1 : 0 }'; }

# tree_run CASE TITLE N SIZE NDIRS [BIG]: generate, run, tabulate.
tree_run() {
	local case=$1 title=$2 n=$3 size=$4 ndirs=$5 big=${6-} i saved=$RUNS
	out "## Tree: $title (loopback)"
	out
	out "Push of a page-cached tree to a directory the copy makes, \`sync\` before each run"
	out "(untimed), the target deleted after it. Median of $TREE_RUNS runs, round-robin."
	out "lanecp fsyncs by default; rsync, tar and scp do not. The first run of each tool is"
	out "checked with diff -r, later runs by the number of files."
	out
	TREE_SRC=$DATA/$case
	rm -rf "$TREE_SRC"
	log "generating $title"
	gen_tree "$TREE_SRC" "$n" "$size" "$ndirs" || die "cannot generate $TREE_SRC"
	if [[ -n $big ]]; then
		for i in 1 2; do
			head -c "$(bytes_of "$big")" /dev/urandom >"$TREE_SRC/big$i" || die "cannot write $TREE_SRC/big$i"
		done
	fi
	TREE_BYTES=$(tree_size "$TREE_SRC")
	TREE_NFILES=$(tree_files "$TREE_SRC")
	RUNS=$TREE_RUNS
	run_case "$case" set_tree "${TREE_CFGS[@]}"
	RUNS=$saved
	tree_table "$case" "${TREE_CFGS[@]}"
	failures "$case"
	rm -rf "$TREE_SRC"
}

tree_targets_time() {	# CASE WHAT: lanecp's time against rsync/tar/scp
	local l r t s
	l=$(med "$1" lanecp-r seconds); r=$(med "$1" rsync-a seconds)
	t=$(med "$1" tar-ssh seconds); s=$(med "$1" scp-r seconds)
	target "$2: lanecp -r ≤ 0.6x rsync -a (issue 11)" \
	    "$(lf "$l") vs $(fmt "$r" 3) s = $(ratio "$l" "$r")x" "$(le "$(ratio "$l" "$r")" 0.6)"
	[[ $1 == tree-10k ]] || return 0
	target "$2: lanecp -r ≤ 1.0x tar -c \| ssh tar -x (issue 11)" \
	    "$(lf "$l") vs $(fmt "$t" 3) s = $(ratio "$l" "$t")x" "$(le "$(ratio "$l" "$t")" 1.0)"
	target "$2: lanecp -r ≤ 0.15x scp -r (issue 11)" \
	    "$(lf "$l") vs $(fmt "$s" 3) s = $(ratio "$l" "$s")x" "$(le "$(ratio "$l" "$s")" 0.15)"
}

case_tree_10k() {
	tree_run tree-10k "$TREE_N10K x 4 KiB files in 100 directories" "$TREE_N10K" 4096 100
	tree_targets_time tree-10k "$TREE_N10K x 4 KiB"
}
case_tree_1k() {
	tree_run tree-1k "$TREE_N1K x 4 KiB files in 10 directories" "$TREE_N1K" 4096 10
	tree_targets_time tree-1k "$TREE_N1K x 4 KiB"
}
case_tree_mixed() {
	tree_run tree-mixed "2 x $TREE_BIG + $TREE_MIXED_N x 4 KiB files in 50 directories" \
	    "$TREE_MIXED_N" 4096 50 "$TREE_BIG"
	local l r
	l=$(med tree-mixed lanecp-r MBps); r=$(med tree-mixed rsync-a MBps)
	target "mixed tree (2 x $TREE_BIG + $TREE_MIXED_N small): lanecp -r ≥ 2x rsync's throughput (issue 11)" \
	    "$(lf "$l" 0) vs $(fmt "$r" 0) MB/s = $(ratio "$l" "$r")x" "$(ge "$(ratio "$l" "$r")" 2)"
}

# One 4 KiB file end to end (start-up cost): scp vs lanecp.
set_one() {
	BYTES=4096 STREAMS=1
	case $1 in
	scp-one) TOOL=scp; CMD=(scp -q -F "$CFG" "$ONE_SRC" "$H:$DST/one") ;;
	lanecp-one) lanecp_cmd "$ONE_SRC" "$DST/one"; STREAMS=4 ;;
	lanecp-one-nofsync) lanecp_cmd "$ONE_SRC" "$DST/one" --no-fsync; STREAMS=4 ;;
	esac
	PRE=one_pre POST=one_post VERIFY=$ONE_SRC VERIFY_TARGET=$DST/one
}
one_pre() { rm -f "$DST/one"; sync; }
one_post() { rm -f "$DST/one"; }
case_tree_one() {
	local cfgs=(scp-one lanecp-one lanecp-one-nofsync) k m lo hi s saved=$RUNS
	out "## Tree: one 4 KiB file end to end (loopback)"
	out
	out "Start-up cost: connection, authentication, the remote agent, one small file. Median of $TREE_RUNS runs."
	out
	ONE_SRC=$DATA/one-4k
	head -c 4096 /dev/urandom >"$ONE_SRC"
	RUNS=$TREE_RUNS
	run_case tree-one set_one "${cfgs[@]}"
	RUNS=$saved
	s=$(med tree-one scp-one seconds)
	out "| tool | runs | seconds (median) | min-max | CPU s (client+server) | client RSS MiB | server RSS MiB | ÷ scp |"
	out "|---|---|---:|---|---:|---:|---:|---:|"
	for k in "${cfgs[@]}"; do
		m=$(med tree-one "$k" seconds)
		if [[ $m == - ]]; then out "| ${DESC[$k]} | $(nruns tree-one "$k") | FAIL | - | - | - | - | - |"; continue; fi
		lo=$(col tree-one "$k" seconds | minof); hi=$(col tree-one "$k" seconds | maxof)
		out "| ${DESC[$k]} | $(nruns tree-one "$k") | $(fmt "$m" 3) | $(fmt "$lo" 3)-$(fmt "$hi" 3) | $(cpu_cell tree-one "$k") | $(rss_cell tree-one "$k") | $(ratio "$m" "$s") |"
	done
	out
	failures tree-one
	m=$(med tree-one lanecp-one seconds)
	target "one 4 KiB file: lanecp ≤ 0.5x scp (issue 11)" \
	    "$(lf "$m") vs $(fmt "$s" 3) s = $(ratio "$m" "$s")x" "$(le "$(ratio "$m" "$s")" 0.5)"
	rm -f "$ONE_SRC"
}

# The no-op re-run: each tool's own target, seeded once (untimed), then
# copied again unchanged.
NOOP_OK=()
set_noop() {
	local s=$TREE_SRC
	BYTES=$TREE_BYTES STREAMS=1
	case $1 in
	rsync-noop) TOOL=rsync; CMD=(rsync -a -e "ssh -F $CFG" "$s/" "$H:$DST/noop-rsync/") ;;
	lanecp-noop) lanecp_cmd "$s/" "$DST/noop-lanecp/" -r -p -u; STREAMS=4 ;;
	esac
	PRE=noop_pre
}
noop_pre() { tree_warm "$TREE_SRC"; sync; }
case_tree_noop() {
	local saved=$RUNS l r
	out "## Tree: re-run on an unchanged $TREE_N10K-file tree (loopback)"
	out
	out "Each tool's target is seeded once (untimed: rsync -a, lanecp -r -p), then the same copy"
	out "runs again on the unchanged tree: rsync -a vs lanecp -r -p -u. Median of $TREE_RUNS runs."
	out
	TREE_SRC=$DATA/tree-noop
	rm -rf "$TREE_SRC" "$DST/noop-rsync" "$DST/noop-lanecp"
	gen_tree "$TREE_SRC" "$TREE_N10K" 4096 100 || die "cannot generate $TREE_SRC"
	TREE_BYTES=$(tree_size "$TREE_SRC")
	TREE_NFILES=$(tree_files "$TREE_SRC")
	log "seeding the no-op targets (untimed)"
	rsync -a -e "ssh -F $CFG" "$TREE_SRC/" "$H:$DST/noop-rsync/" ||
		log "  rsync -a seed failed"
	"$LANECP" -F "$CFG" -q -r -p "$TREE_SRC/" "$H:$DST/noop-lanecp/" 2>"$W/seed.err" ||
		log "  lanecp -r -p seed failed: $(head -n 1 "$W/seed.err")"
	RUNS=$TREE_RUNS
	run_case tree-noop set_noop rsync-noop lanecp-noop
	RUNS=$saved
	r=$(med tree-noop rsync-noop seconds)
	out "| tool | runs | seconds (median) | min-max | CPU s (client+server) | client RSS MiB | server RSS MiB | ÷ rsync |"
	out "|---|---|---:|---|---:|---:|---:|---:|"
	for k in rsync-noop lanecp-noop; do
		m=$(med tree-noop "$k" seconds)
		if [[ $m == - ]]; then out "| ${DESC[$k]} | $(nruns tree-noop "$k") | FAIL | - | - | - | - | - |"; continue; fi
		lo=$(col tree-noop "$k" seconds | minof); hi=$(col tree-noop "$k" seconds | maxof)
		out "| ${DESC[$k]} | $(nruns tree-noop "$k") | $(fmt "$m" 3) | $(fmt "$lo" 3)-$(fmt "$hi" 3) | $(cpu_cell tree-noop "$k") | $(rss_cell tree-noop "$k") | $(ratio "$m" "$r") |"
	done
	out
	failures tree-noop
	l=$(med tree-noop lanecp-noop seconds)
	target "re-run on an unchanged $TREE_N10K-file tree: lanecp -r -p -u ≤ 0.6x rsync -a (issue 11)" \
	    "$(lf "$l") vs $(fmt "$r" 3) s = $(ratio "$l" "$r")x" "$(le "$(ratio "$l" "$r")" 0.6)"
	rm -rf "$TREE_SRC" "$DST/noop-rsync" "$DST/noop-lanecp"
}

# Peak RSS of both ends against the number of files.
set_trss() {	# CONFIG = lanecp-rN or rsync-aN
	local n=${1##*-[ra]}
	TREE_SRC=$DATA/tree-rss-$n
	BYTES=$(tree_size "$TREE_SRC") STREAMS=1
	TREE_BYTES=$BYTES
	case $1 in
	rsync-a*) TOOL=rsync; CMD=(rsync -a -e "ssh -F $CFG" "$TREE_SRC/" "$H:$TREE_T/") ;;
	lanecp-r*) lanecp_cmd "$TREE_SRC/" "$TREE_T/" -r; STREAMS=4 ;;
	esac
	PRE=tree_pre POST=trss_post TREE_CFG=$1
}
# The agent's own peak RSS (GNU time in the ForceCommand wrapper; the
# server column of measure is the largest server-side process, often the
# sshd session): kept per config in $W/tree-agent-rss.
trss_post() {
	local f v m=0
	for f in "$W"/srvtime/*.t; do
		[[ -e $f ]] || continue
		v=$(tail -n 1 "$f")
		[[ $v =~ ^[0-9]+$ ]] && ((v > m)) && m=$v
	done
	echo "$TREE_CFG $m" >>"$W/tree-agent-rss"
	tree_post
}
agent_rss() {	# CONFIG: max kB over its runs, or -
	awk -v k="$1" '$1 == k && $2 > m { m = $2 } END { print m ? m : "-" }' "$W/tree-agent-rss" 2>/dev/null || echo -
}
case_tree_rss() {
	local n saved=$RUNS cfgs=() k c1 c2 s1 s2 lo hi
	out "## Tree: peak RSS against the number of files (loopback)"
	out
	out "Files of 1 KiB in 100 directories, pushed. Client: GNU time's max RSS (lanecp with its local"
	out "agent thread; rsync's client). Server: the largest server-side process (often the sshd"
	out "session). Agent: the remote end alone (lanecp --agent, rsync --server), from GNU time in the"
	out "sshd's ForceCommand wrapper; the flatness target uses client and agent. Max of $TREE_RSS_RUNS run(s)."
	out
	for n in $TREE_RSS_NS; do
		log "generating $n files of 1 KiB"
		gen_tree "$DATA/tree-rss-$n" "$n" 1024 100 || die "cannot generate the rss tree"
		cfgs+=("lanecp-r$n" "rsync-a$n")
		DESC[lanecp-r$n]="lanecp -r, $n files"
		DESC[rsync-a$n]="rsync -a, $n files"
	done
	RUNS=$TREE_RSS_RUNS
	run_case tree-rss set_trss "${cfgs[@]}"
	RUNS=$saved
	out "| tool | runs | seconds (median) | client RSS MiB | server RSS MiB (largest process) | agent RSS MiB |"
	out "|---|---|---:|---:|---:|---:|"
	for k in "${cfgs[@]}"; do
		m=$(med tree-rss "$k" seconds)
		if [[ $m == - ]]; then out "| ${DESC[$k]} | $(nruns tree-rss "$k") | FAIL | - | - | - |"; continue; fi
		out "| ${DESC[$k]} | $(nruns tree-rss "$k") | $(fmt "$m" 3) | $(rss_cell tree-rss "$k") | $(mib "$(agent_rss "$k")") |"
	done
	out
	failures tree-rss
	lo=${TREE_RSS_NS%% *} hi=${TREE_RSS_NS##* }
	c1=$(col tree-rss "lanecp-r$lo" cli_rss_kb | maxof); c2=$(col tree-rss "lanecp-r$hi" cli_rss_kb | maxof)
	s1=$(agent_rss "lanecp-r$lo"); s2=$(agent_rss "lanecp-r$hi")
	target "peak RSS flat in the number of files: lanecp -r, $hi vs $lo files, ≤ 1.25x at both ends (issue 11)" \
	    "client $(mib "$c2") vs $(mib "$c1") MiB = $(ratio "$c2" "$c1")x, agent $(mib "$s2") vs $(mib "$s1") MiB = $(ratio "$s2" "$s1")x" \
	    "$(awk -v a="$(ratio "$c2" "$c1")" -v b="$(ratio "$s2" "$s1")" 'BEGIN { if (a == "-" || b == "-") print "-"; else print (a <= 1.25 && b <= 1.25) ? 1 : 0 }')"
	for n in $TREE_RSS_NS; do rm -rf "$DATA/tree-rss-$n"; done
}

# ---------------------------------------------------------------- tree-lfn1g, tree-wan200m (issue 23)
# The tree-10k tree ($TREE_N10K x 4 KiB in 100 directories) pushed over
# bench/wan.sh's lfn1g (or wan200m) pair (client in $WAN_PFX-a, sshd in $WAN_PFX-b),
# tmpfs to tmpfs (/dev/shm: both namespaces share it): lanecp -r -s 16,
# rsync -a and tar -c | ssh tar -x (both over ssh -c aes128-gcm), $TREE_WAN_RUNS
# runs interleaved (default 3; --quick: 1).  TREE_WAN_PCAP=FILE keeps a
# tcpdump (headers, both directions, of lcwb in $WAN_PFX-b) of every run
# and writes the runs' t0/t1 to FILE.runs: bench/treewait.py reads them.
# A link sampler (ramp.sh's, lcwb's received bytes every 50 ms) runs for
# the whole case: per run the first data byte and the link's use after it
# ("busy after SSH setup": IP bytes from the first data byte to the exit
# over that time and the link rate), and a plot of link Mbit/s over time of
# the median lanecp run and the rsync and tar runs of its round
# (results/CASE-STAMP.png, copied to bench/CASE.png).
# tree-mixed-lfn1g: the same with TREE_WAN_MIXED_N x 4 KiB files (default
# 5,000) in 50 directories plus 2 files of TREE_WAN_BIG_SIZE (default
# 256M; --quick: 1,000 and 32M).
TREE_WAN_RUNS=${RUNS_SET:-3}
((QUICK)) && TREE_WAN_RUNS=${RUNS_SET:-1}
TREE_WAN_CASE=tree-lfn1g TREE_WAN_BIG='' TREE_WAN_MBIT=1000
if ((QUICK)); then
	TREE_WAN_MIXED_N=${TREE_WAN_MIXED_N:-1000} TREE_WAN_BIGSZ=${TREE_WAN_BIG_SIZE:-32M}
else
	TREE_WAN_MIXED_N=${TREE_WAN_MIXED_N:-5000} TREE_WAN_BIGSZ=${TREE_WAN_BIG_SIZE:-256M}
fi
TREE_WAN_CFGS=(lanecp-r-s16 rsync-a-gcm tar-ssh-gcm)
# TREE_WAN_B=/path/to/other/lanecp adds a row for that build (an A/B in
# the same interleaved run; it is its own remote agent, -T).
# TREE_WAN_LANECP_ONLY=1 leaves the ssh tools out (an A/B of two builds
# where rsync and tar take most of the time: their ratios show "-").
[[ -n ${TREE_WAN_LANECP_ONLY-} ]] && TREE_WAN_CFGS=(lanecp-r-s16)
[[ -n ${TREE_WAN_B-} ]] && TREE_WAN_CFGS+=(lanecp-b-s16)
# TREE_WAN_FLOOR=1 (bound23) adds, interleaved in the same rounds, the
# floor a copy of this tree cannot beat on the path: `ssh lcwan true`
# (the SSH setup alone) and bench/tcpfloor.py send (16 cold TCP flows
# opened at once carrying the tree's bytes, plain TCP, until the server
# process has read them all; BYTES = TREE_WAN_FLOOR_BYTES, default the
# tree's du -sb).  bench/treewait.py reads its copy phase from the
# TREE_WAN_PCAP capture.  (Not iperf3 -n: it counts bytes written into
# the client's socket buffers, and its server resets the data
# connections at the end with bytes still in flight.)  And lanecp with
# -T "$LANECP" (the agent run by its path, as when lanecp is on the
# remote PATH: no start script checking and hashing the cached agent).
[[ -n ${TREE_WAN_FLOOR-} ]] && TREE_WAN_CFGS+=(ssh-true tcp-p16 lanecp-T-s16)
DESC[lanecp-T-s16]="lanecp -r -s 16 -T (agent by path)"
DESC[ssh-true]="ssh lcwan true (aes128-gcm)"
DESC[tcp-p16]="16 cold TCP flows, the tree's bytes (tcpfloor.py)"
DESC[lanecp-b-s16]="lanecp -r -s 16, build B (${TREE_WAN_B-})"
DESC[lanecp-r-s16]="lanecp -r -s 16 (TLS, durable)"
DESC[rsync-a-gcm]="rsync -a (ssh, aes128-gcm)"
DESC[tar-ssh-gcm]="tar -c \| ssh tar -x (aes128-gcm)"
TREE_WAN_CAP_PID=

set_tree_wan() {
	local s=$TREE_SRC t=$TREE_T ssh="ssh -F $W/ssh_config_wan -c aes128-gcm@openssh.com"
	local -a ns=(ip netns exec "$WAN_PFX-a")
	BYTES=$TREE_BYTES STREAMS=1
	case $1 in
	lanecp-r-s16)
		TOOL=lanecp STREAMS=16
		CMD=("${ns[@]}" "$LANECP" -F "$W/ssh_config_wan" -q -r -s 16 "$s/" "lcwan:$t/")
		# an A/B: both builds their own agent, started the same way
		[[ -n ${TREE_WAN_B-} ]] && CMD=("${ns[@]}" "$LANECP" -F "$W/ssh_config_wan" -T "$LANECP" -q -r -s 16 "$s/" "lcwan:$t/")
		;;
	lanecp-T-s16)
		TOOL=lanecp STREAMS=16
		CMD=("${ns[@]}" "$LANECP" -F "$W/ssh_config_wan" -T "$LANECP" -q -r -s 16 "$s/" "lcwan:$t/")
		;;
	lanecp-b-s16)
		TOOL=lanecp STREAMS=16
		CMD=("${ns[@]}" "$TREE_WAN_B" -F "$W/ssh_config_wan" -T "$TREE_WAN_B" -q -r -s 16 "$s/" "lcwan:$t/")
		;;
	rsync-a-gcm) TOOL=rsync; CMD=("${ns[@]}" rsync -a -e "$ssh" "$s/" "lcwan:$t/") ;;
	ssh-true)
		TOOL=ssh CMD=("${ns[@]}" ssh -F "$W/ssh_config_wan" -c aes128-gcm@openssh.com lcwan true)
		PRE=tree_pre POST=tree_wan_post
		return 0
		;;
	tcp-p16)
		TOOL=tcpfloor STREAMS=16 BYTES=${TREE_WAN_FLOOR_BYTES:-$TREE_BYTES}
		CMD=("${ns[@]}" python3 "$HERE/tcpfloor.py" send 10.77.0.2 "$TREE_FLOOR_PORT" 16 "$BYTES")
		PRE=tree_pre POST=tree_wan_post
		return 0
		;;
	tar-ssh-gcm)
		TOOL=tar
		CMD=("${ns[@]}" bash -c "tar -C '$s' -cf - . | $ssh lcwan 'mkdir -p $t && tar -C $t -xf -'")
		;;
	*) die "unknown tree-wan config $1" ;;
	esac
	PRE=tree_pre POST=tree_wan_post VERIFY=$s VERIFY_TARGET=$t
}
tree_wan_post() {	# measure's locals: case cfg run rc t0 t1
	local fd lb busy=-
	echo "$cfg $run $rc $t0 $t1" >>"$W/tree-wan.runs"
	read -r fd lb < <(python3 "$W/ramp.py" run "$RAMP_SAMPLES" "$t0" "$t1")
	# the link's use from the first data byte to the exit, % of its rate
	[[ $fd != - ]] && busy=$(awk -v b="$(python3 "$W/ramp.py" window "$RAMP_SAMPLES" "$(calc "$t0 + $fd")" "$(calc "$t1 - $t0 - $fd")")" \
	    -v d="$(calc "$t1 - $t0 - $fd")" -v r="$TREE_WAN_MBIT" 'BEGIN { printf "%.1f", (d > 0 ? 100 * b * 8 / d / (r * 1e6) : 0) }')
	echo "$case $cfg $run $rc $t0 $t1 ${fd:--} ${lb:--} $busy" >>"$TREE_WAN_LOG"
	log "  $cfg run $run: $(fmt "$(calc "$t1 - $t0")" 2) s, first data byte at ${fd:--} s, link busy after it $busy %"
	tree_post
}
# Values of TREE_WAN_LOG for CASE CONFIG (successful runs): an awk
# expression over its fields ($5 t0, $6 t1, $7 first data s, $8 link
# bytes, $9 busy % after the first data byte).
tree_wan_vals() {
	awk -v c="$1" -v k="$2" '$1 == c && $2 == k && $4 == 0 && $7 != "-" { print '"$3"' }' "$TREE_WAN_LOG"
}
tree_wan_down() {
	[[ -n $TREE_WAN_CAP_PID ]] && stop_pid "$TREE_WAN_CAP_PID"
	TREE_WAN_CAP_PID=
	[[ -n $TREE_FLOOR_PID ]] && stop_pid "$TREE_FLOOR_PID"
	TREE_FLOOR_PID=
	return 0
}

# tree_wan_dirs TAG: for a case over an emulated path, check that wanem
# is built and that no one else's emulated WAN is up, then make the source
# and target directories in /dev/shm (TREE_SRC, TREE_DST; the copy goes to
# TREE_T, a new directory in TREE_DST), removed at exit.
tree_wan_dirs() {
	local tag=$1
	[[ -x $WANEM ]] || die "wanem not found at $WANEM (set WANEM=)"
	if wan_sh status >/dev/null 2>&1; then
		die "an emulated WAN $WAN_PFX is already up (bench/wan.sh status): someone else may be using it; not touching it"
	fi
	TREE_SRC=$(mktemp -d "/dev/shm/lanecp-$tag-src.XXXXXX") || die "mktemp /dev/shm failed"
	TREE_DST=$(mktemp -d "/dev/shm/lanecp-$tag-dst.XXXXXX") || die "mktemp /dev/shm failed"
	lc_on_exit "rm -rf '$TREE_SRC' '$TREE_DST'"
	chmod 0755 "$TREE_SRC" "$TREE_DST"
	TREE_T=$TREE_DST/tree
}

# tree_floor_start: bench/tcpfloor.py serve on 10.77.0.2 in $WAN_PFX-b
# (TREE_FLOOR_PORT), stopped with the sshd (a server-side resident).
TREE_FLOOR_PID='' TREE_FLOOR_PORT=''
tree_floor_start() {
	TREE_FLOOR_PORT=$(lc_free_port)
	(cg_join server; exec ip netns exec "$WAN_PFX-b" python3 "$HERE/tcpfloor.py" serve 10.77.0.2 "$TREE_FLOOR_PORT" \
	    </dev/null >>"$W/tcpfloor.out" 2>&1) &
	TREE_FLOOR_PID=$!
	BG_PIDS+=("$TREE_FLOOR_PID")
	SRV_RESIDENT+="$TREE_FLOOR_PID "
	wait_listen "$TREE_FLOOR_PID" "$TREE_FLOOR_PORT" "tcpfloor.py serve"
}

# tree_wan_up PROFILE: bring up bench/wan.sh's PROFILE pair and the sshd
# in $WAN_PFX-b, make the first connection untimed (known_hosts,
# page-cached binaries: TREE_SRC's first file to TREE_DST/warmup, then
# removed) and wait until the server is idle.
tree_wan_up() {
	local prof=$1
	wan_sh up "$prof" >&2 || die "bench/wan.sh up $prof failed"
	wan_sshd_start
	[[ -n ${TREE_WAN_FLOOR-} ]] && tree_floor_start
	ip netns exec "$WAN_PFX-a" "$LANECP" -F "$W/ssh_config_wan" -q "$TREE_SRC/d000/f000000" "lcwan:$TREE_DST/warmup" \
	    </dev/null >/dev/null 2>"$W/warmup.err" ||
		die "lanecp to $WAN_PFX-b failed (untimed warm-up): $(cat "$W/warmup.err")"
	rm -f "$TREE_DST/warmup"
	server_idle
}

# case_tree_wan PROFILE: the case TREE_WAN_CASE over PROFILE (lfn1g or
# wan200m), with the two big files when TREE_WAN_BIG is set.
case_tree_wan() {
	local prof=$1 saved=$RUNS saved_t=$TREE_T k m lo hi r t l i d tc=$TREE_WAN_CASE what
	local n=$TREE_N10K nd=100
	if [[ -n $TREE_WAN_BIG ]]; then
		n=$TREE_WAN_MIXED_N nd=50
		what="2 x $TREE_WAN_BIG + $n x 4 KiB files in $nd directories"
	else
		what="$n x 4 KiB files in $nd directories"
	fi
	case $prof in lfn1g | clean1g) TREE_WAN_MBIT=1000 ;; wan200m) TREE_WAN_MBIT=200 ;; *) die "no link rate for $prof" ;; esac
	out "## Tree over $prof (issue 23): $what ($("$HERE/wan.sh" profiles | awk -v p="$prof" '$1 == p { $1 = ""; sub(/^ +/, ""); print }'))"
	out
	out "Client in $WAN_PFX-a, sshd in $WAN_PFX-b, tmpfs to tmpfs (/dev/shm), a push into a new directory; the"
	out "ssh tools with \`-c aes128-gcm@openssh.com\`, lanecp with its defaults (TLS, fsync) and \`-s 16\`. Wall time of the"
	out "client process, fork to exit (SSH setup included). Median of $TREE_WAN_RUNS runs, round-robin; the first run"
	out "of each tool is checked with diff -r, later runs by the number of files. First data byte and link busy: from"
	out "lcwb's received bytes sampled every 50 ms (as the ramp case): the first 50 ms with > 1 MB/s over the idle"
	out "background, and the IP bytes from then to the exit over that time, % of the link rate (\"after SSH setup\")."
	out
	command -v python3 >/dev/null || die "the $tc case needs python3"
	tree_wan_dirs tw
	d=$TREE_DST
	log "generating $what in /dev/shm"
	gen_tree "$TREE_SRC" "$n" 4096 "$nd" || die "cannot generate $TREE_SRC"
	if [[ -n $TREE_WAN_BIG ]]; then
		for i in 1 2; do
			head -c "$(bytes_of "$TREE_WAN_BIG")" /dev/urandom >"$TREE_SRC/big$i" || die "cannot write $TREE_SRC/big$i"
		done
	fi
	TREE_BYTES=$(tree_size "$TREE_SRC")
	TREE_NFILES=$(tree_files "$TREE_SRC")
	WAN_UP=1
	lc_on_exit wan_down
	lc_on_exit tree_wan_down
	tree_wan_up "$prof"
	: >"$W/tree-wan.runs"
	TREE_WAN_LOG=$RESULTS/$STAMP-$tc.txt
	echo "# case config run rc t0 t1 first_data_s link_bytes busy_pct_after_first_data" >"$TREE_WAN_LOG"
	ramp_py
	ramp_sampler_start "$tc"
	if [[ -n ${TREE_WAN_PCAP-} ]]; then
		: >"$W/tcpdump.err"
		ip netns exec "$WAN_PFX-b" tcpdump -i lcwb -n -Z root -s 96 -B 16384 -U \
		    -w "$TREE_WAN_PCAP" tcp </dev/null 2>"$W/tcpdump.err" &
		TREE_WAN_CAP_PID=$!
		BG_PIDS+=("$TREE_WAN_CAP_PID")
		for ((i = 0; i < 50; i++)); do
			grep -q 'listening on' "$W/tcpdump.err" && break
			sleep 0.1
		done
		grep -q 'listening on' "$W/tcpdump.err" || die "tcpdump did not start: $(cat "$W/tcpdump.err")"
	fi
	RUNS=$TREE_WAN_RUNS
	run_case "$tc" set_tree_wan "${TREE_WAN_CFGS[@]}"
	RUNS=$saved
	sleep 0.5	# the last run's tail into the samples
	ramp_sampler_stop
	gzip -c "$RAMP_SAMPLES" >"$RESULTS/$STAMP-$tc.samples.gz"
	if [[ -n $TREE_WAN_CAP_PID ]]; then
		sleep 0.3	# the last packets into the capture
		tree_wan_down
		cp "$W/tree-wan.runs" "$TREE_WAN_PCAP.runs"
	fi
	wan_down
	r=$(med "$tc" rsync-a-gcm seconds); t=$(med "$tc" tar-ssh-gcm seconds)
	out "| tool | runs | seconds (median) | min-max | files/s | first data byte s | link busy after it % | CPU s (client+server) | client RSS MiB | server RSS MiB | ÷ rsync | ÷ tar |"
	out "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for k in "${TREE_WAN_CFGS[@]}"; do
		m=$(med "$tc" "$k" seconds)
		if [[ $m == - ]]; then
			out "| ${DESC[$k]} | $(nruns "$tc" "$k") | FAIL | - | - | - | - | - | - | - | - | - |"
			continue
		fi
		lo=$(col "$tc" "$k" seconds | minof); hi=$(col "$tc" "$k" seconds | maxof)
		out "| ${DESC[$k]} | $(nruns "$tc" "$k") | $(fmt "$m" 3) | $(fmt "$lo" 3)-$(fmt "$hi" 3) | $(fmt "$(calc "$TREE_NFILES / $m")" 0) | $(tree_wan_vals "$tc" "$k" '$7' | mm 2) | $(tree_wan_vals "$tc" "$k" '$9' | mm 0) | $(cpu_cell "$tc" "$k") | $(rss_cell "$tc" "$k") | $(ratio "$m" "$r") | $(ratio "$m" "$t") |"
	done
	out
	failures "$tc"
	l=$(med "$tc" lanecp-r-s16 seconds)
	target "$prof, $what: lanecp -r ≤ 0.5x rsync -a (issue 23)" \
	    "$(lf "$l") vs $(fmt "$r" 3) s = $(ratio "$l" "$r")x" "$(le "$(ratio "$l" "$r")" 0.5)"
	if [[ -n $TREE_WAN_BIG ]]; then
		m=$(tree_wan_vals "$tc" lanecp-r-s16 '$9' | median)
		target "$prof, $what: the link ≥ 70 % busy after SSH setup (issue 23)" \
		    "$(fmt "$m" 0) % (first data byte to exit, median)" "$(ge "$m" 70)"
	else
		target "$prof, $what: lanecp -r ≤ 0.7x tar -c \| ssh tar -x (issue 23)" \
		    "$(lf "$l") vs $(fmt "$t" 3) s = $(ratio "$l" "$t")x" "$(le "$(ratio "$l" "$t")" 0.7)"
	fi
	tree_wan_plot "$tc" "$what" "$prof"
	rm -rf "$TREE_SRC" "$d"
	TREE_T=$saved_t
}
case_tree_lfn1g() { TREE_WAN_CASE=tree-lfn1g TREE_WAN_BIG='' case_tree_wan lfn1g; }
case_tree_clean1g() { TREE_WAN_CASE=tree-clean1g TREE_WAN_BIG='' case_tree_wan clean1g; }
case_tree_wan200m() { TREE_WAN_CASE=tree-wan200m TREE_WAN_BIG='' case_tree_wan wan200m; }
case_tree_mixed_lfn1g() { TREE_WAN_CASE=tree-mixed-lfn1g TREE_WAN_BIG=$TREE_WAN_BIGSZ case_tree_wan lfn1g; }

# tree_wan_plot CASE WHAT: link Mbit/s over time (RAMP_BUCKET buckets)
# of the lanecp run with the median wall time and the other tools' runs of
# the same round, each from its own fork.
tree_wan_plot() {
	local tc=$1 what=$2 prof=$3 pr k t0 t1 fd col n=0 tmax=0 png data=$W/$1
	local -a plots=() labels=()
	pr=$(tree_wan_vals "$tc" lanecp-r-s16 '$6 - $5, $3' | sort -g | awk '{ a[NR] = $2 } END { if (NR) print a[int((NR + 1) / 2)] }')
	[[ -n $pr ]] || { out "No plot: no successful lanecp run."; out; return 0; }
	for k in "${TREE_WAN_CFGS[@]}"; do
		t0=''
		read -r t0 t1 fd < <(awk -v c="$tc" -v k="$k" -v r="$pr" '$1 == c && $2 == k && $3 == r && $4 == 0 { print $5, $6, $7 }' "$TREE_WAN_LOG")
		[[ -n $t0 ]] || continue
		case $k in lanecp*) col="#1f5fbf" ;; rsync*) col="#d95f02" ;; *) col="#1b9e77" ;; esac
		link_plot_run "$data-$k.dat" "$t0" "$t1" "$fd" "$col" "$([[ $k == lanecp* ]] && echo 2 || echo 1)" "${DESC[$k]//\\/}"
	done
	png=$RESULTS/$tc-$STAMP.png
	if link_plot "$png" "$TREE_WAN_MBIT" \
	    "$what, $prof: run $pr of $TREE_WAN_RUNS (lanecp median) and the others of that round" \
	    "seconds since the client process started (dashed: first data byte on the link; bar at the bottom: exit)"; then
		cp "$png" "$HERE/$tc.png"
		out "Plot: \`$(basename "$RESULTS")/$(basename "$png")\` (copied to \`bench/$tc.png\`): link Mbit/s per ${RAMP_BUCKET} s since each process started. Per-run figures: \`$(basename "$RESULTS")/$(basename "$TREE_WAN_LOG")\`; the 50 ms samples: \`$(basename "$RESULTS")/$STAMP-$tc.samples.gz\`."
		out
	fi
}

# ---------------------------------------------------------------- shard-lfn1g (issue 25 part 2)
# One tree pushed over bench/wan.sh's lfn1g pair by N = 1, 2 and 4 lanecp
# --shard processes at once (client in $WAN_PFX-a, sshd in $WAN_PFX-b,
# tmpfs to tmpfs), each -r -s 16: the same path for all, so this shows the
# ceiling of one path, not N data movers' links.  The tree: 4 x
# SHARD_WAN_BIG (default 96M; --quick: 16M) and SHARD_WAN_N (default
# 2,000; --quick: 500) x 64 KiB files in 20 directories.  The wall time is
# that of the last shard to finish (the configuration's one command runs
# the N and waits for all); SHARD_WAN_RUNS runs interleaved (default 5).
SHARD_WAN_RUNS=${RUNS_SET:-5}
if ((QUICK)); then
	SHARD_WAN_RUNS=${RUNS_SET:-1} SHARD_WAN_BIG=${SHARD_WAN_BIG:-16M} SHARD_WAN_N=${SHARD_WAN_N:-500}
else
	SHARD_WAN_BIG=${SHARD_WAN_BIG:-96M} SHARD_WAN_N=${SHARD_WAN_N:-2000}
fi
SHARD_WAN_CFGS=(lanecp-shard1 lanecp-shard2 lanecp-shard4)
DESC[lanecp-shard1]="lanecp -r -s 16 (one process)"
DESC[lanecp-shard2]="2 x lanecp -r -s 16 --shard I/2, at once"
DESC[lanecp-shard4]="4 x lanecp -r -s 16 --shard I/4, at once"

set_shard_wan() {
	local n=${1#lanecp-shard} i cmd=
	for ((i = 1; i <= n; i++)); do
		if ((n == 1)); then
			cmd+="'$LANECP' -F '$W/ssh_config_wan' -q -r -s 16 '$TREE_SRC/' 'lcwan:$TREE_T/' & "
		else
			cmd+="'$LANECP' -F '$W/ssh_config_wan' -q -r -s 16 --shard $i/$n '$TREE_SRC/' 'lcwan:$TREE_T/' & "
		fi
	done
	TOOL=lanecp STREAMS=$((16 * n)) BYTES=$TREE_BYTES
	# every shard must succeed: wait for each by its pid
	CMD=(ip netns exec "$WAN_PFX-a" bash -c "mkdir -p '$TREE_T'; rc=0; $cmd for p in \$(jobs -p); do wait \$p || rc=1; done; exit \$rc")
	PRE=tree_pre POST=tree_post VERIFY=$TREE_SRC VERIFY_TARGET=$TREE_T
}

case_shard_lfn1g() {
	local saved=$RUNS saved_t=$TREE_T k m lo hi one d what i
	what="4 x $SHARD_WAN_BIG + $SHARD_WAN_N x 64 KiB files in 20 directories"
	out "## Shards over lfn1g (issue 25 part 2): $what ($("$HERE/wan.sh" profiles | awk '$1 == "lfn1g" { $1 = ""; sub(/^ +/, ""); print }'))"
	out
	out "N lanecp --shard processes started at once, all on the same emulated path (client in $WAN_PFX-a, sshd in"
	out "$WAN_PFX-b, tmpfs to tmpfs, a push into a new directory), each -r -s 16 with its defaults (TLS, fsync): the"
	out "ceiling of one path, not N hosts' links. Wall time until the last shard exits (SSH setup included)."
	out "Median of $SHARD_WAN_RUNS runs, round-robin; the first run of each is checked with diff -r, later runs by"
	out "the number of files."
	out
	tree_wan_dirs sh
	d=$TREE_DST
	log "generating $what in /dev/shm"
	gen_tree "$TREE_SRC" "$SHARD_WAN_N" 65536 20 || die "cannot generate $TREE_SRC"
	for i in 1 2 3 4; do
		head -c "$(bytes_of "$SHARD_WAN_BIG")" /dev/urandom >"$TREE_SRC/big$i" || die "cannot write $TREE_SRC/big$i"
	done
	TREE_BYTES=$(tree_size "$TREE_SRC")
	TREE_NFILES=$(tree_files "$TREE_SRC")
	WAN_UP=1
	lc_on_exit wan_down
	tree_wan_up lfn1g
	RUNS=$SHARD_WAN_RUNS
	run_case shard-lfn1g set_shard_wan "${SHARD_WAN_CFGS[@]}"
	RUNS=$saved
	wan_down
	one=$(med shard-lfn1g lanecp-shard1 seconds)
	out "| configuration | runs | seconds (median) | min-max | MB/s | CPU s (client+server) | ÷ one process |"
	out "|---|---|---:|---|---:|---:|---:|"
	for k in "${SHARD_WAN_CFGS[@]}"; do
		m=$(med shard-lfn1g "$k" seconds)
		if [[ $m == - ]]; then
			out "| ${DESC[$k]} | $(nruns shard-lfn1g "$k") | FAIL | - | - | - | - |"
			continue
		fi
		lo=$(col shard-lfn1g "$k" seconds | minof); hi=$(col shard-lfn1g "$k" seconds | maxof)
		out "| ${DESC[$k]} | $(nruns shard-lfn1g "$k") | $(fmt "$m" 3) | $(fmt "$lo" 3)-$(fmt "$hi" 3) | $(fmt "$(calc "$TREE_BYTES / $m / 1e6")" 1) | $(cpu_cell shard-lfn1g "$k") | $(ratio "$m" "$one") |"
	done
	out
	failures shard-lfn1g
	rm -rf "$TREE_SRC" "$d"
	TREE_T=$saved_t
}
