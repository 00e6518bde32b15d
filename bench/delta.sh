#!/usr/bin/env bash
# lanecp benchmark: -u's delta (issue 24, item 3).  A 1 GiB file of which
# 1 % changed in scattered places is copied over an older copy at the
# target: lanecp -u (the delta), lanecp -u -W (whole file) and rsync -a
# (its delta algorithm: rsync sends whole only for local copies), with
# wall time and bytes sent, round-robin, medians of N runs.
#
#   bench/delta.sh [-n RUNS] [--link lfn1g|loopback] [--size BYTES]
#
# TOOLS (default "lanecp rsync lanecp-W") picks the tools; lanecp-nofsync
# is lanecp -u --no-fsync (what the durable write of the new file costs);
# lanecp-old is lanecp -u with the test hook LANECP_TEST_OLD_SOURCE=1 (a
# test build): the delta as with a source from before FILE_HASHES, one
# FILE_PREFIX of at most 16384 chunks (64 KiB for 1 GiB).
#
# Patterns (seeded, the same every run):
#   regions  100 regions of 100 KiB at random offsets (1 %)
#   pages    2,621 random 4 KiB pages (1 %)
# The files live on the root file system (ext4 here: no reflink, the
# sink seeds with copy_file_range).  Before each run (untimed): the
# target is reset to the old version with an old mtime, the source read
# into the page cache, and `sync`.  lanecp's bytes: --json "bytes" (DATA
# sent by the source) and the SSH control channel is not counted (its
# FILE_HASHES frames carry 16 bytes of hash per chunk: 2 MiB for 1 GiB of
# 8 KiB chunks; add it for the two-way total);
# rsync's: "Total bytes sent" and "received" from --stats (the sender's
# literal data and tokens; received is the receiver's block checksums).
# Link lfn1g: bench/wan.sh's profile (1 Gbit/s, 50 ms RTT, 0.1 % loss),
# namespaces $BENCH_WAN_NS-a/-b (default lc-d24), sshd in -b.  Needs root.
# Hold the shared lock around it: flock /tmp/lanecp-bench.lock bench/delta.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=3 LINK=lfn1g SIZE=$((1 << 30))
while [[ $# -gt 0 ]]; do
	case $1 in
	-n) RUNS=$2; shift 2 ;;
	--link) LINK=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	*) echo "usage: $0 [-n RUNS] [--link lfn1g|loopback] [--size BYTES]" >&2; exit 2 ;;
	esac
done
: "${LANECP:=$HERE/../b/cmd/lanecp}"
export LANECP LC_SRC_DIR=${LC_SRC_DIR:-$HERE/..}
WANEM=${WANEM:-$(dirname "$LANECP")/../bench/wanem}
NS=${BENCH_WAN_NS:-lc-d24}
W=${DELTA_DIR:-/work/tmp/delta-bench.$$}
mkdir -p "$W"
PRE=()
if [[ $LINK == lfn1g ]]; then
	env WANEM="$WANEM" WAN_NS="$NS" "$HERE/wan.sh" up lfn1g >&2
	LC_SSHD_NETNS=$NS-b LC_SSHD_ADDR=10.77.0.2
	PRE=(ip netns exec "$NS-a")
fi
. "$LC_SRC_DIR/tests/integration/lib.sh"
cleanup() {
	rm -rf "$W"
	[[ $LINK != lfn1g ]] || env WANEM="$WANEM" WAN_NS="$NS" "$HERE/wan.sh" down >/dev/null 2>&1 || true
}
lc_on_exit cleanup
lc_sshd_start
H=$LC_SSH_HOST

python3 - "$W" "$SIZE" <<'PY'
import os, random, sys
w, size = sys.argv[1], int(sys.argv[2])
rnd = random.Random(24)
blk = os.urandom(1 << 20)
with open(f"{w}/old", "wb") as f:
    for i in range(size // len(blk)):
        f.write(bytes([i & 0xff]) + blk[1:])	# no two MiB the same
def make(name, regions):
    os.system(f"cp {w}/old {w}/{name}")
    with open(f"{w}/{name}", "r+b") as f:
        for off, n in regions:
            f.seek(off); f.write(os.urandom(n))
K = 1024
make("regions", [(rnd.randrange(0, size - 100 * K), 100 * K) for _ in range(100)])
make("pages", [(rnd.randrange(0, size // (4 * K)) * 4 * K, 4 * K) for _ in range(size // 100 // (4 * K))])
PY

json_get() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())[sys.argv[1]])' "$1"; }
reset() {	# untimed: the target is the old version again
	rm -f "$W/dst"
	cp "$W/old" "$W/dst"
	touch -d '2020-01-01' "$W/dst"
	cat "$W/$1" >/dev/null
	sync
}
RES=$W/res.txt
: >"$RES"
run_one() {	# PATTERN TOOL
	local pat=$1 tool=$2 t0 t1 sent recv
	reset "$pat"
	t0=$(date +%s.%N)
	case $tool in
	lanecp | lanecp-W | lanecp-nofsync | lanecp-old)
		"${PRE[@]}" env $([[ $tool == lanecp-old ]] && echo LANECP_TEST_OLD_SOURCE=1) \
		    "$LANECP" -F "$LC_SSH_CONFIG" -q -u --json \
		    $([[ $tool == lanecp-W ]] && echo -W) \
		    $([[ $tool == lanecp-nofsync ]] && echo --no-fsync) \
		    "$W/$pat" "$H:$W/dst" >"$W/json"
		t1=$(date +%s.%N)
		sent=$(json_get bytes <"$W/json") recv=- ;;
	rsync)
		"${PRE[@]}" rsync -a --stats -e "ssh -F $LC_SSH_CONFIG" "$W/$pat" "$H:$W/dst" >"$W/stats"
		t1=$(date +%s.%N)
		sent=$(awk -F': ' '/^Total bytes sent/ { gsub(",", "", $2); print $2 }' "$W/stats")
		recv=$(awk -F': ' '/^Total bytes received/ { gsub(",", "", $2); print $2 }' "$W/stats") ;;
	esac
	cmp "$W/$pat" "$W/dst" || { echo "$tool $pat: differs" >&2; exit 1; }
	echo "$pat $tool $(echo "$t1 - $t0" | bc) $sent $recv" | tee -a "$RES" >&2
}
for ((r = 0; r < RUNS; r++)); do
	for pat in regions pages; do
		for tool in ${TOOLS:-lanecp rsync lanecp-W}; do run_one "$pat" "$tool"; done
	done
done
echo "link $LINK, $SIZE bytes, medians of $RUNS:"
echo "| pattern | tool | wall s | bytes sent | rsync bytes received |"
echo "|---|---|---:|---:|---:|"
python3 - "$RES" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    pat, tool, t, sent, recv = line.split()
    rows.setdefault((pat, tool), []).append((float(t), sent, recv))
for (pat, tool), v in rows.items():
    t = statistics.median(x[0] for x in v)
    s = statistics.median(int(x[1]) for x in v)
    rc = "" if v[0][2] == "-" else "%d" % statistics.median(int(x[2]) for x in v)
    print(f"| {pat} | {tool} | {t:.2f} | {s:,} | {rc} |")
PY
