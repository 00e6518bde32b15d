#!/usr/bin/env bash
# A/B check for a change that must not cost speed (a refactor): two lanecp
# builds, interleaved run by run (each round starts with the other one),
# on 2 GiB of zeros from tmpfs to host:/dev/null (-s 4) and a 5,000-file
# tree (4 KiB each, 100 directories; AB_PER_DIR=100 makes it run.sh's
# 10,000-file tree-10k) to tmpfs, through the test fixture's throwaway sshd on
# 127.0.0.1 (tests/integration/lib.sh).  Each binary is also the remote
# agent (-T).  Prints "old|new mem|tree SECONDS" per run, then medians.
#
#   bench/ab.sh OLD/cmd/lanecp NEW/cmd/lanecp [RUNS, default 5]
set -euo pipefail
OLD=${1:?usage: bench/ab.sh OLD_LANECP NEW_LANECP [RUNS]}
NEW=${2:?usage: bench/ab.sh OLD_LANECP NEW_LANECP [RUNS]}
RUNS=${3:-5}
PER_DIR=${AB_PER_DIR:-50}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export LC_SRC_DIR=$SRC LANECP=$NEW
. "$SRC/tests/integration/lib.sh"
lc_sshd_start
H=$LC_SSH_HOST
D=$(mktemp -d /dev/shm/lcb.XXXX)
lc_on_exit rm -rf "$D"
head -c 2G /dev/zero >"$D/zero"
# one split per directory: a process per file took minutes on a loaded
# machine, inside the bench lock
for i in $(seq 0 99); do
	mkdir -p "$D/tree/d$i"
	head -c $((4096 * PER_DIR)) /dev/urandom | split -b 4096 -a 3 -d - "$D/tree/d$i/f"
done
now() { date +%s.%N; }
run() { # NAME BIN CASE
	local t0 t1
	rm -rf "$D/out"
	t0=$(now)
	if [[ $3 == mem ]]; then
		"$2" -F "$LC_SSH_CONFIG" -T "$2" -q -s 4 "$D/zero" "$H:/dev/null"
	else
		"$2" -F "$LC_SSH_CONFIG" -T "$2" -q -r "$D/tree" "$H:$D/out"
	fi
	t1=$(now)
	echo "$1 $3 $(echo "$t1 - $t0" | bc)"
}
{
for ((r = 1; r <= RUNS; r++)); do
	if ((r % 2)); then order="old new"; else order="new old"; fi
	for w in $order; do
		bin=$OLD; [[ $w == new ]] && bin=$NEW
		run "$w" "$bin" mem
		run "$w" "$bin" tree
	done
done
} | tee "$D/runs"
for w in old new; do
	for c in mem tree; do
		printf '%s %s median %s s\n' "$w" "$c" "$(awk -v w="$w" -v c="$c" \
			'$1 == w && $2 == c { print $3 }' "$D/runs" | sort -n |
			awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
	done
done
