#!/usr/bin/env bash
# Stand-in for the wan200m -c case when the WAN namespaces are not
# available: loopback through a throwaway sshd (tests/integration/lib.sh),
# the link emulated by a rate cap (-x, default 25m = 200 Mbit/s; no RTT,
# no loss).  Interleaved rounds of {text, random} x {no -c, -c}; prints
# every run and the medians.  Clearly not the WAN profile.
#   LANECP=build/cmd/lanecp LC_SRC_DIR=. bench/compress_loopback.sh [MiB] [rounds] [rate]
set -euo pipefail
: "${LC_SRC_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${LANECP:?set LANECP to the lanecp binary}"
. "$LC_SRC_DIR/tests/integration/lib.sh"
mib=${1:-128} rounds=${2:-3} rate=${3:-25m}
lc_sshd_start
d=$LC_SSHD_DIR
mkdir -p "$d/r"
python3 "$LC_SRC_DIR/bench/gen_logs.py" "${mib}m" "$d/text"
head -c $((mib << 20)) /dev/urandom >"$d/rand"
res=$d/res
for r in $(seq 1 "$rounds"); do
	for f in text rand; do
		for c in none -c; do
			rm -f "$d/r/$f"
			args=()
			[[ $c == -c ]] && args=(-c)
			lc_lanecp --json -s 4 -x "$rate" "${args[@]}" "$d/$f" \
			    "$LC_SSH_HOST:$d/r/$f" >"$d/out"
			cmp "$d/$f" "$d/r/$f"
			python3 - "$d/out" "$f" "$c" "$r" >>"$res" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], sys.argv[4], j["seconds"],
      j["bytes"] / j["seconds"] / 1e6, j["compressed_bytes"] / j["bytes"])
PY
			tail -1 "$res"
		done
	done
done
python3 "$(dirname "$0")/compress_table.py" "$res"
