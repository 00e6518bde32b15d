#!/usr/bin/env bash
# Issue 13 part 3 on the emulated wan200m link (200 Mbit/s, 100 ms RTT,
# 0.05 % loss; bench/wan.sh): a compressible file (bench/gen_logs.py, web
# access logs) and an incompressible one (random), each copied with and
# without -c, lanecp -s 16, memory to memory (tmpfs source in /dev/shm,
# the remote /dev/null as target), interleaved round-robin (each round
# starting one configuration later).  Prints every run and a markdown
# table of medians (min-max) with the two ratios the issue asks for:
# text: time without -c / time with -c (target >= 2x); random: time with
# -c / time without (target <= 1.05).  Root only (network namespaces).
#
#   bench/compress_wan.sh [SIZE_MiB] [ROUNDS]     (default 1024 3)
#   LANECP=/path/to/lanecp WANEM=/path/to/wanem  (default: build-bench/)
#
# Everything it starts (namespaces, wanem, sshd, files) is removed on exit.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
mib=${1:-1024} rounds=${2:-3}
export LANECP=${LANECP:-$REPO/build-bench/cmd/lanecp}
export WANEM=${WANEM:-$REPO/build-bench/bench/wanem}
[[ -x $LANECP && -x $WANEM ]] || { echo "compress_wan.sh: build lanecp and wanem first (bench/run.sh builds build-bench/), or set LANECP and WANEM" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "compress_wan.sh: needs root (network namespaces)" >&2; exit 2; }
# shellcheck source=../tests/integration/lib.sh
. "$REPO/tests/integration/lib.sh"
if "$HERE/wan.sh" status >/dev/null 2>&1; then
	echo "compress_wan.sh: an emulated WAN is already up (bench/wan.sh status); not touching it" >&2
	exit 1
fi
"$HERE/wan.sh" up wan200m >/dev/null 2>&1 || { echo "compress_wan.sh: bench/wan.sh up wan200m failed" >&2; exit 1; }
lc_on_exit "'$HERE/wan.sh' down >/dev/null 2>&1"
LC_SSHD_NETNS=lc-wan-b LC_SSHD_ADDR=10.77.0.2 lc_sshd_start
src=$(mktemp -d /dev/shm/lanecp-cz.XXXXXX)
lc_on_exit "rm -rf '$src'"
echo "generating ${mib} MiB of logs and ${mib} MiB of random data in $src" >&2
python3 "$HERE/gen_logs.py" "${mib}m" "$src/text" || exit 1
head -c $((mib << 20)) /dev/urandom >"$src/rand"
res=$src/res
: >"$res"
cfgs=("text none" "text -c" "rand none" "rand -c")
for ((r = 0; r < rounds; r++)); do
	for ((i = 0; i < ${#cfgs[@]}; i++)); do
		read -r f c <<<"${cfgs[$(((i + r) % ${#cfgs[@]}))]}"
		args=()
		[[ $c == -c ]] && args=(-c)
		sync
		if ! ip netns exec lc-wan-a "$LANECP" -F "$LC_SSH_CONFIG" -q --json -s 16 \
		    "${args[@]}" "$src/$f" "$LC_SSH_HOST:/dev/null" >"$src/out" 2>"$src/err"; then
			echo "run failed: $f $c: $(cat "$src/err")" >&2
			continue
		fi
		python3 - "$src/out" "$f" "$c" "$((r + 1))" >>"$res" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
cb = j.get("compressed_bytes", j["bytes"])
print(sys.argv[2], sys.argv[3], sys.argv[4], j["seconds"],
      j["bytes"] / j["seconds"] / 1e6, cb / j["bytes"])
PYEOF
		tail -1 "$res" >&2
	done
done
echo
echo "wan200m (200 Mbit/s, 100 ms RTT, 0.05 % loss), lanecp -s 16, ${mib} MiB, $rounds rounds, tmpfs -> /dev/null:"
echo
python3 "$(dirname "$0")/compress_table.py" "$res"
