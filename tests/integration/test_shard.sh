#!/usr/bin/env bash
# --shard I/N (issue 25 part 2): N lanecp processes, run at once against the
# throwaway sshd, make exactly one copy of a tree between them.
#
# Cases: N = 1, 2, 4 shards, push and pull, with -p: the union is the tree
# (names, kinds, sizes, bytes, modes and the mtimes of files and of the
# directories every shard makes), and no file is sent twice (the shards'
# --json "files" add up to the tree's regular files, their "bytes" to its
# bytes; each summary names its shard); the large files (16 MiB and more)
# are spread over the shards; a shard run again with -a -u sends nothing;
# --shard auto from Slurm's variables (ids from SLURM_ARRAY_TASK_MIN=1),
# by running docs/examples/lanecp-shards.sbatch as Slurm would, and from
# Kubernetes' JOB_COMPLETION_INDEX with auto/N and LANECP_SHARD_COUNT;
# bad values and missing or inconsistent variables (exit 2, one line naming
# the value); --delete refused; an agent without the shard filter refused
# (exit 7, test hook); a source that lists another shard's file refused by
# the controller (exit 7, test hook).
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
umask 022
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
src=$d/src

# tree_list DIR: one line per entry, sorted: type, name, size of files,
# link targets, mode and mtime (ns) of files and directories.
tree_list() {
	(cd "$1" && {
		find . -mindepth 1 -type d -printf "d %P %m %T@\\n"
		find . -type f -printf "f %P %s %m %T@\\n"
		find . -type l -printf "l %P -> %l\\n"
	} | LC_ALL=C sort)
}

same_tree() {
	if ! diff <(tree_list "$1") <(tree_list "$2") >"$d/tree.diff"; then
		lc__show "$d/tree.diff"
		lc_fail "$2 is not a copy of $1 ($3)"
	fi
	if ! diff -r --no-dereference "$1" "$2" >"$d/tree.diff" 2>&1; then
		lc__show "$d/tree.diff"
		lc_fail "contents of $2 differ from $1 ($3)"
	fi
}

# the tree: 300 small files in nested directories (some empty), a link, and
# five large files (16 MiB is the bound: dealt by size, not by name)
python3 - "$src" <<'EOF'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "empty", "deeper"))
for i in range(300):
    p = os.path.join(root, "d%d" % (i % 7), "s%d" % (i % 3), "f%03d" % i)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(os.urandom(i * 37 % 5000))
os.makedirs(os.path.join(root, "big"))
for k, mib in enumerate((16, 17, 19, 23, 31)):
    with open(os.path.join(root, "big", "L%d" % k), "wb") as f:
        f.write(os.urandom(1 << 16))
        f.truncate(mib << 20)
        f.seek((mib << 20) - 4096)
        f.write(os.urandom(4096))
os.symlink("d0/s0/f000", os.path.join(root, "link"))
os.chmod(os.path.join(root, "d3"), 0o750)
os.chmod(os.path.join(root, "d1", "s1", "f001"), 0o600)
EOF
# distinct directory times, set last (the copy must put them back)
find "$src" -type d -exec touch -d '2020-02-02 02:02:02.123456789' {} +
touch -d '2021-03-03 03:03:03.5' "$src/d2"
nfiles=$(find "$src" -type f | wc -l)
nbytes=$(find "$src" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')

# run_shards DIR N FROM TO: N shard processes at once (-r -p --json);
# their summaries in DIR/json.I, stderr in DIR/err.I.  All must succeed.
run_shards() {
	local dir=$1 n=$2 from=$3 to=$4 i
	local -a pids=()
	mkdir -p "$dir"
	for ((i = 1; i <= n; i++)); do
		"$LANECP" -F "$LC_SSH_CONFIG" -r -p --shard "$i/$n" --json \
		    "$from" "$to" >"$dir/json.$i" 2>"$dir/err.$i" &
		pids+=($!)
	done
	for ((i = 1; i <= n; i++)); do
		if ! wait "${pids[i - 1]}"; then
			lc__show "$dir/err.$i"
			lc_fail "shard $i/$n of $from -> $to failed"
		fi
	done
}

# check_sums DIR N: the summaries add up to the tree, each names its shard,
# and with N > 1 the large files are on more than one shard.
check_sums() {
	python3 - "$1" "$2" "$nfiles" "$nbytes" <<'EOF' || lc_fail "summaries of $1"
import json, sys
d, n, nfiles, nbytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
files = size = 0
bigs = []
for i in range(1, n + 1):
    j = json.load(open("%s/json.%d" % (d, i)))
    assert j["ok"] and j["exit_status"] == 0, j
    assert j["shard"] == {"index": i, "count": n}, j["shard"]
    files += j["files"]
    size += j["bytes_written"]
    bigs.append(j["bytes_written"] >= 16 << 20)
assert files == nfiles, "files: %d over the shards, %d in the tree" % (files, nfiles)
assert size == nbytes, "bytes: %d over the shards, %d in the tree" % (size, nbytes)
# five large files dealt largest first: with 2 or 4 shards, each gets one
assert n == 1 or all(bigs), "a shard without a large file: %s" % bigs
EOF
}

for n in 1 2 4; do
	lc_note "N=$n push"
	mkdir -p "$d/push$n"
	run_shards "$d/r-push$n" "$n" "$src/" "$H:$d/push$n/"
	same_tree "$src" "$d/push$n" "push, $n shards"
	check_sums "$d/r-push$n" "$n"
	lc_note "N=$n pull"
	mkdir -p "$d/pull$n"
	run_shards "$d/r-pull$n" "$n" "$H:$src/" "$d/pull$n/"
	same_tree "$src" "$d/pull$n" "pull, $n shards"
	check_sums "$d/r-pull$n" "$n"
done

lc_note "a shard again with -a -u: nothing sent"
lc_lanecp -r -p -a -u --shard 2/4 --json "$H:$src/" "$d/pull4/" >"$d/again.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["files"] == 0 and j["skipped"] > 0 and j["bytes"] == 0, j' \
	"$d/again.json" || lc_fail "shard 2/4 re-run: $(cat "$d/again.json")"
same_tree "$src" "$d/pull4" "after a re-run"

# a `lanecp` in PATH that talks to the throwaway sshd
mkdir -p "$d/bin"
printf '#!/bin/sh\nexec "%s" -F "%s" "$@"\n' "$LANECP" "$LC_SSH_CONFIG" >"$d/bin/lanecp"
chmod +x "$d/bin/lanecp"

lc_note "the Slurm example: an array 1-3 (SLURM_ARRAY_TASK_MIN=1)"
mkdir -p "$d/slurm" "$d/slurm-run"
pids=()
for id in 1 2 3; do
	(cd "$d/slurm-run" && env -u JOB_COMPLETION_INDEX PATH="$d/bin:$PATH" \
	    SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID=$id \
	    SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 \
	    SLURM_ARRAY_TASK_COUNT=3 \
	    bash "$LC_SRC_DIR/docs/examples/lanecp-shards.sbatch" \
	    "$src/" "$H:$d/slurm/" 2>"$d/slurm-run/err.$id") &
	pids+=($!)
done
for id in 1 2 3; do
	wait "${pids[id - 1]}" || { lc__show "$d/slurm-run/err.$id"; lc_fail "Slurm task $id"; }
	mv "$d/slurm-run/lanecp-shard-$id.json" "$d/slurm-run/json.$id"
done
same_tree "$src" "$d/slurm" "Slurm array"
check_sums "$d/slurm-run" 3

lc_note "Kubernetes: JOB_COMPLETION_INDEX 0-1, with auto/2 and LANECP_SHARD_COUNT"
mkdir -p "$d/k8s" "$d/k8s-run"
JOB_COMPLETION_INDEX=0 lc_lanecp -r -p --shard auto/2 --json "$src/" "$H:$d/k8s/" >"$d/k8s-run/json.1"
JOB_COMPLETION_INDEX=1 LANECP_SHARD_COUNT=2 lc_lanecp -r -p --shard auto --json "$src/" "$H:$d/k8s/" >"$d/k8s-run/json.2"
same_tree "$src" "$d/k8s" "Indexed Job"
check_sums "$d/k8s-run" 2
# the manifest's count and --shard auto/N agree
grep -Eq '^  completions: 4$' "$LC_SRC_DIR/docs/examples/lanecp-shards-job.yaml" &&
	grep -Eq '^ +- auto/4$' "$LC_SRC_DIR/docs/examples/lanecp-shards-job.yaml" ||
	lc_fail "lanecp-shards-job.yaml: completions and auto/N differ"

lc_note "bad values"
for v in 0/4 5/4 x 1/65537 4 1/ /4 auto/0 auto/x; do
	lc_lanecp_expect 2 "--shard $(lc_re "$v")" -r --shard "$v" "$src/" "$H:$d/bad/"
	[[ $(wc -l <"$LC_ERR") == 1 ]] || { lc__show "$LC_ERR"; lc_fail "--shard $v: not one line"; }
done
test ! -e "$d/bad" || lc_fail "a refused run made $d/bad"
lc_lanecp_expect 2 'neither SLURM_ARRAY_TASK_ID' -r --shard auto "$src/" "$H:$d/bad/"
SLURM_ARRAY_TASK_ID=3 lc_lanecp_expect 2 'SLURM_ARRAY_TASK_COUNT is not set' -r --shard auto "$src/" "$H:$d/bad/"
SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
	lc_lanecp_expect 2 'SLURM_ARRAY_TASK_ID=4 is not in' -r --shard auto "$src/" "$H:$d/bad/"
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 \
	lc_lanecp_expect 2 'auto/4: SLURM_ARRAY_TASK_COUNT is 3' -r --shard auto/4 "$src/" "$H:$d/bad/"
JOB_COMPLETION_INDEX=0 lc_lanecp_expect 2 'give --shard auto/N or LANECP_SHARD_COUNT' -r --shard auto "$src/" "$H:$d/bad/"
JOB_COMPLETION_INDEX=2 lc_lanecp_expect 2 'JOB_COMPLETION_INDEX=2 is not a number from 0 to 1' -r --shard auto/2 "$src/" "$H:$d/bad/"
lc_lanecp_expect 2 '--shard and --delete do not go together' -r --delete --shard 1/2 "$src/" "$H:$d/bad/"
lc_lanecp_expect 2 '--shard 1/2 goes with -r' --shard 1/2 "$src/d0/s0/f000" "$H:$d/bad"
test ! -e "$d/bad" || lc_fail "a refused run made $d/bad"

if "$LANECP" --test-hooks >/dev/null 2>&1; then
	lc_note "an agent without the shard filter: refused, nothing copied"
	LANECP_TEST_OLD_SOURCE=noshard lc_lanecp_expect 7 'knows no --shard' \
	    -r --shard 1/2 "$H:$src/" "$d/old/"
	test -z "$(find "$d/old" -type f 2>/dev/null)" || lc_fail "an old agent's shard copied files"
	lc_note "a source that lists another shard's file: refused"
	LANECP_TEST_SHARD_SENT=2/2 lc_lanecp_expect 7 'which is not in shard 1/2' \
	    -r --shard 1/2 "$H:$src/" "$d/liar/"
else
	lc_skip "the test-hook cases (build with -DLC_TEST_HOOKS=ON)"
fi
echo "ok"
