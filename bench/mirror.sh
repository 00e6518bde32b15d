#!/usr/bin/env bash
# The nightly mirror (issue 24): a tree of N small files (default
# 100,000 of 1-8 KiB in 100 directories) mirrored to two replicas over
# the throwaway sshd on 127.0.0.1, one by
#   lanecp -r -p -u --delete --exclude '*.tmp'
# and one by
#   rsync -a --delete --exclude '*.tmp'
# Then, each round (-n R, default 3): 1 % of the files change at the
# source (half rewritten, a quarter deleted, a quarter new), and both
# tools bring their replica up to date, in alternating order.  Reported
# per tool: the median wall time and bytes sent (lanecp: --json "bytes",
# the file payload, without its control messages; rsync: --stats "Total bytes sent", its whole stream);
# after the last round, diff -r of both replicas against the source.
#
#   bench/mirror.sh [-n R] [-f N]
#
# The tree is made and both replicas seeded outside the shared lock
# (niced, untimed); only the timed rounds take /tmp/lanecp-bench.lock.
#
# LANECP_EXTRA: more lanecp options (e.g. --no-fsync), word-split.
# LANECP: the lanecp to measure (default build-bench/cmd/lanecp, then
# b/cmd/lanecp); LC_BENCH_TMP: where the trees go (default /var/tmp).
set -euo pipefail
LC_SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
export LC_SRC_DIR
RUNS=3 NFILES=100000
while getopts n:f: o; do
	case $o in
	n) RUNS=$OPTARG ;;
	f) NFILES=$OPTARG ;;
	*) echo "usage: $0 [-n runs] [-f files]" >&2; exit 2 ;;
	esac
done
. "$LC_SRC_DIR/bench/lib.sh"
lc_bench_lanecp
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start
CFG=$LC_SSH_CONFIG H=$LC_SSH_HOST
T=$(mktemp -d "${LC_BENCH_TMP:-/var/tmp}/lc-mirror.XXXXXX")
lc_on_exit rm -rf "$T"

nice python3 - "$T/src" "$NFILES" <<'EOF'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(24)
for i in range(n):
    d = os.path.join(root, 'd%03d' % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'f%06d' % i), 'wb') as f:
        f.write(os.urandom(random.randint(1024, 8192)))
EOF
echo "scratch" >"$T/src/d000/x.tmp"

lanecp_run() {	# seconds and bytes sent, one line
	local t0 t1
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$LANECP" -F "$CFG" -q -r -p -u --delete --exclude '*.tmp' --json ${LANECP_EXTRA-} \
	    "$T/src/" "$H:$T/lanecp/" >"$T/l.json"
	t1=$(date +%s.%N)
	python3 -c 'import json,sys; print(float(sys.argv[2]) - float(sys.argv[1]), json.load(open(sys.argv[3]))["bytes"])' \
	    "$t0" "$t1" "$T/l.json"
}
rsync_run() {
	local t0 t1
	t0=$(date +%s.%N)
	rsync -a --delete --exclude '*.tmp' --stats -e "ssh -F $CFG" \
	    "$T/src/" "$H:$T/rsync/" >"$T/r.stats"
	t1=$(date +%s.%N)
	echo "$(echo "$t1 - $t0" | bc -l)" \
	    "$(sed -n 's/^Total bytes sent: \([0-9,]*\).*/\1/p' "$T/r.stats" | tr -d ,)"
}

echo "seeding both replicas ($NFILES files, untimed)"
nice bash -c "$(declare -f lanecp_run rsync_run); T=$T CFG=$CFG H=$H \
    LANECP=$LANECP LANECP_EXTRA='${LANECP_EXTRA-}'; lanecp_run >/dev/null; rsync_run >/dev/null"
: >"$T/rows"
exec 9>/tmp/lanecp-bench.lock
flock 9
echo "lock taken $(date -u +%T)"
for ((r = 1; r <= RUNS; r++)); do
	python3 - "$T/src" "$r" <<'EOF'
import os, random, sys
root, r = sys.argv[1], int(sys.argv[2])
random.seed(1000 + r)
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
               if not f.endswith('.tmp'))
pick = random.sample(files, max(4, len(files) // 100))
q = len(pick) // 4
for p in pick[:2 * q]:                      # half rewritten
    with open(p, 'wb') as f:
        f.write(os.urandom(random.randint(1024, 8192)))
for p in pick[2 * q:3 * q]:                 # a quarter deleted
    os.unlink(p)
for i, p in enumerate(pick[3 * q:]):        # a quarter new
    with open(p + '.new%d' % r, 'wb') as f:
        f.write(os.urandom(random.randint(1024, 8192)))
EOF
	sync
	if ((r % 2)); then order="lanecp rsync"; else order="rsync lanecp"; fi
	for tool in $order; do
		echo "$tool $("${tool}_run")" >>"$T/rows"
	done
done
flock -u 9
echo "lock released $(date -u +%T)"
# untimed, once: both replicas are the source (the excluded file aside)
for tool in lanecp rsync; do
	diff -r -x '*.tmp' "$T/src" "$T/$tool" >/dev/null ||
		lc_fail "the $tool replica differs from the source"
	echo "$tool replica: same as the source (diff -r)"
done
echo
echo "| tool | median s | median bytes sent | runs |"
echo "|---|---:|---:|---:|"
for tool in lanecp rsync; do
	awk -v t="$tool" '$1 == t { print $2, $3 }' "$T/rows" | sort -n |
	    awk -v t="$tool" '{ s[NR] = $1; b[NR] = $2 } END {
		m = int((NR + 1) / 2); printf "| %s | %.2f | %d | %d |\n", t, s[m], b[m], NR }'
done
echo
echo "every run (tool, seconds, bytes sent):"
cat "$T/rows"
