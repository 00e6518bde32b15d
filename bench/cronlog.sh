#!/usr/bin/env bash
# What a nightly job writes (issue 24, item 6): a 21,000-file tree (4 KiB
# files, /dev/shm) copied with -r -p -u -l to a target through the test
# fixture's throwaway sshd on 127.0.0.1 (tests/integration/lib.sh), by two
# lanecp builds.  For each: the lines and bytes the -l log and stderr gain
# from a second run on the unchanged tree, and stderr of -q when the tree
# is copied again without -u (every file exists).  Each binary is also the
# remote agent (-T).  Counts only, nothing timed.
#
# Then (issue 24, counts24) the re-seed again with --json: its size, the
# failures it names and counts, and the controller's peak RSS (GNU time,
# the one measured figure, CRON_RUNS rounds of old and new, default 3:
# run the script under the bench lock); and a
# -r -u run after 210 files changed and 210 were added: its summary line
# (updated apart from copied) and --json's counts.
#
#   flock /tmp/lanecp-bench.lock bench/cronlog.sh OLD/cmd/lanecp NEW/cmd/lanecp
set -euo pipefail
OLD=${1:?usage: bench/cronlog.sh OLD_LANECP NEW_LANECP}
NEW=${2:?usage: bench/cronlog.sh OLD_LANECP NEW_LANECP}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export LC_SRC_DIR=$SRC LANECP=$NEW
. "$SRC/tests/integration/lib.sh"
lc_sshd_start
H=$LC_SSH_HOST
D=$(mktemp -d /dev/shm/lccron.XXXX)
lc_on_exit rm -rf "$D"
python3 - "$D/tree" <<'PY'
import os, sys
for i in range(21000):
    d = os.path.join(sys.argv[1], "d%03d" % (i % 210))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(4096))
PY
printf '%-4s %-28s %8s %10s %8s\n' build run "log+" "log bytes+" "stderr"
for w in old new; do
	bin=$OLD; [[ $w == new ]] && bin=$NEW
	rm -rf "$D/out"; mkdir -p "$D/out"
	L=("$bin" -F "$LC_SSH_CONFIG" -T "$bin")
	"${L[@]}" -r -p -u -l "$D/$w.log" "$D/tree" "$H:$D/out/" 2>/dev/null
	for run in 2 3; do
		l0=$(wc -l <"$D/$w.log"); b0=$(stat -c %s "$D/$w.log")
		"${L[@]}" -r -p -u -l "$D/$w.log" "$D/tree" "$H:$D/out/" 2>"$D/err"
		printf '%-4s %-28s %8d %10d %8d\n' "$w" "-r -p -u -l, unchanged #$run" \
		    $(($(wc -l <"$D/$w.log") - l0)) \
		    $(($(stat -c %s "$D/$w.log") - b0)) "$(wc -l <"$D/err")"
	done
	rc=0
	"${L[@]}" -q -r "$D/tree" "$H:$D/out/" 2>"$D/err" || rc=$?
	printf '%-4s %-28s %8s %10s %8d  (exit %d)\n' "$w" "-q -r again, no -u" - - \
	    "$(wc -l <"$D/err")" "$rc"
	[[ $w == new ]] && tail -n 4 "$D/$w.log" | cut -c 26- && tail -n 3 "$D/err"
done

# --json names every failure; updated apart from copied
jq_py='import json,sys; j=json.load(open(sys.argv[1]))
print("json %d bytes: failed_count %s, failed named %d, truncated %s; files %s, copied %s, updated %s, skipped %s" % (
    len(open(sys.argv[1], "rb").read()), j.get("failed_count"), len(j.get("failed", [])),
    j.get("failed_names_truncated", "-"), j.get("files"), j.get("copied", "-"),
    j.get("updated", "-"), j.get("skipped")))'
echo
# CRON_RUNS (default 3) rounds, old and new interleaved
for ((round = 1; round <= ${CRON_RUNS:-3}; round++)); do
	for w in old new; do
		bin=$OLD; [[ $w == new ]] && bin=$NEW
		L=("$bin" -F "$LC_SSH_CONFIG" -T "$bin")
		rc=0
		/usr/bin/time -f %M -o "$D/rss" "${L[@]}" -q -r --json \
		    "$D/tree" "$H:$D/out/" >"$D/$w.json" 2>"$D/err" || rc=$?
		printf '%-4s %-28s exit %d, controller peak RSS %d KiB, ' \
		    "$w" "-q -r --json again, no -u" "$rc" \
		    "$(tail -n 1 "$D/rss")"
		python3 -c "$jq_py" "$D/$w.json"
	done
done
for w in old new; do
	bin=$OLD; [[ $w == new ]] && bin=$NEW
	L=("$bin" -F "$LC_SSH_CONFIG" -T "$bin")
	rm -rf "$D/out"; mkdir -p "$D/out"
	"${L[@]}" -q -r -p -u "$D/tree" "$H:$D/out/"
	# 1 % changed (a new size and mtime), 1 % new
	for ((i = 0; i < 21000; i += 100)); do
		f=$D/tree/d$(printf %03d $((i % 210)))/f$(printf %05d $i)
		head -c 100 /dev/urandom >"$f"
		head -c 4096 /dev/urandom >"$f.new"
	done
	"${L[@]}" -r -p -u --json "$D/tree" "$H:$D/out/" >"$D/$w.json" 2>"$D/err"
	printf '%-4s %-28s ' "$w" "-r -p -u, 1 % changed, 1 % new"
	python3 -c "$jq_py" "$D/$w.json"
	printf '     %s\n' "$(tail -n 1 "$D/err" | cut -c 1-130)"
	# back as it was for the other build
	find "$D/tree" -name '*.new' -delete
	for ((i = 0; i < 21000; i += 100)); do
		head -c 4096 /dev/urandom \
		    >"$D/tree/d$(printf %03d $((i % 210)))/f$(printf %05d $i)"
	done
done
