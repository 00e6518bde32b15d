#!/usr/bin/env bash
# What a nightly job writes (issue 24, item 6): a 21,000-file tree (4 KiB
# files, /dev/shm) copied with -r -p -u -l to a target through the test
# fixture's throwaway sshd on 127.0.0.1 (tests/integration/lib.sh), by two
# lanecp builds.  For each: the lines and bytes the -l log and stderr gain
# from a second run on the unchanged tree, and stderr of -q when the tree
# is copied again without -u (every file exists).  Each binary is also the
# remote agent (-T).  Counts only, nothing timed.
#
#   bench/cronlog.sh OLD/cmd/lanecp NEW/cmd/lanecp
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
