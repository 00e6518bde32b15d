#!/usr/bin/env bash
# Sparse files keep their holes: a 1 GiB file with 3 MiB of data moves
# about 3 MiB (HOLE frames), push and pull, at -s 1 and 4; the copy is
# identical and takes about as much disk as the source.  A file that ends
# in a hole gets its full length; -e checksums cover the holes.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"

# A file of SIZE MiB with 1 MiB of random data at each MiB offset given.
mk_sparse() {
	local f=$1 size=$2
	shift 2
	rm -f "$f"
	truncate -s "${size}M" "$f"
	for at in "$@"; do
		dd if=/dev/urandom of="$f" bs=1M seek="$at" count=1 \
		    conv=notrunc status=none
	done
}

# Holes are only worth checking where the file system keeps them.
mk_sparse "$d/local/probe" 64 0
if (($(du -k "$d/local/probe" | cut -f1) > 4096)); then
	lc_skip "the file system here does not keep holes"
	exit 0
fi
rm -f "$d/local/probe"

# --json "bytes": payload bytes sent on the data streams
json_sent() {
	python3 -c 'import json, sys; print(json.load(sys.stdin)["bytes"])' \
	    <"$1"
}

# Same content, about the same disk use (within 4 MiB), few bytes sent.
check_copy() {
	local src=$1 dst=$2 out=$3 what=$4 a b sent
	cmp "$src" "$dst" || lc_fail "$what: copy differs"
	a=$(du -k "$src" | cut -f1)
	b=$(du -k "$dst" | cut -f1)
	((b <= a + 4096 && a <= b + 4096)) ||
		lc_fail "$what: copy uses $b KiB on disk, source $a KiB"
	sent=$(json_sent "$out")
	((sent < 64 << 20)) || lc_fail "$what: sent $sent bytes"
	echo "$what: $a KiB -> $b KiB on disk, $sent bytes sent" >&2
}

lc_note "1 GiB with 3 MiB of data (start, middle, end), push and pull"
mk_sparse "$d/local/sp" 1024 0 512 1023
for s in 1 4; do
	rm -f "$d/remote/sp" "$d/local/sp.back"
	lc_lanecp --json -s "$s" "$d/local/sp" "$H:$d/remote/sp" \
	    >"$d/out"
	check_copy "$d/local/sp" "$d/remote/sp" "$d/out" "push -s $s"
	lc_lanecp --json -s "$s" "$H:$d/remote/sp" "$d/local/sp.back" \
	    >"$d/out"
	check_copy "$d/local/sp" "$d/local/sp.back" "$d/out" "pull -s $s"
done

lc_note "a file ending in a hole gets its full length"
mk_sparse "$d/local/tail" 300 10
rm -f "$d/remote/tail"
lc_lanecp --json -s 4 "$d/local/tail" "$H:$d/remote/tail" >"$d/out"
[[ $(stat -c %s "$d/remote/tail") == $((300 << 20)) ]] ||
	lc_fail "trailing hole: size $(stat -c %s "$d/remote/tail")"
check_copy "$d/local/tail" "$d/remote/tail" "$d/out" "trailing hole"

lc_note "all hole"
truncate -s 200M "$d/local/empty"
rm -f "$d/remote/empty"
lc_lanecp --json -s 2 "$d/local/empty" "$H:$d/remote/empty" >"$d/out"
check_copy "$d/local/empty" "$d/remote/empty" "$d/out" "all hole"

lc_note "-e: the checksum covers the holes"
rm -f "$d/remote/sp"
lc_lanecp -e --json -s 4 "$d/local/sp" "$H:$d/remote/sp" >"$d/out"
check_copy "$d/local/sp" "$d/remote/sp" "$d/out" "-e push"
want=$(sha256sum <"$d/local/sp" | cut -d' ' -f1)
grep -q "$want" "$d/out" || {
	cat "$d/out" >&2
	lc_fail "-e: --json does not carry the SHA-256 $want"
}
rm -f "$d/local/sp.back"
lc_lanecp -e -s 3 "$H:$d/remote/sp" "$d/local/sp.back"
cmp "$d/local/sp" "$d/local/sp.back" || lc_fail "-e pull differs"

lc_note "kill -9 mid-copy, then -a resumes the sparse file"
ln -sf "$LANECP" "$d/agent"
rm -f "$d/remote/k" "$d/remote/.k.lanecp-part"
"$LANECP" -F "$LC_SSH_CONFIG" -T "$d/agent" -x 1m -s 2 "$d/local/sp" \
	"$H:$d/remote/k" 2>"$d/k.err" &
pid=$!
# the middle MiB is on disk: the partial file is 513 MiB long
lc_wait_size "$d/remote/.k.lanecp-part" $((513 << 20)) 60
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
lc_wait_no_pids "$d/agent --agent" 60
[[ ! -e $d/remote/k ]] || lc_fail "target exists after kill -9"
part=$(stat -c %s "$d/remote/.k.lanecp-part")
((part >= 513 << 20 && part < 1024 << 20)) || lc_fail "partial size $part"
cmp -n "$part" "$d/remote/.k.lanecp-part" "$d/local/sp" ||
	lc_fail "partial is not a prefix"
lc_lanecp -T "$d/agent" -a --json -s 2 "$d/local/sp" "$H:$d/remote/k" \
    >"$d/out"
check_copy "$d/local/sp" "$d/remote/k" "$d/out" "resumed"
resumed=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["resumed_bytes"])' <"$d/out")
((resumed > 0 && resumed <= part)) || lc_fail "resumed_bytes $resumed"
sent=$(json_sent "$d/out")
((sent <= 2 << 20)) || lc_fail "resume sent $sent bytes"

lc_note "a sparse file to a non-seekable target gets its zeros"
lc_lanecp -s 4 "$d/local/sp" "$H:/dev/null"

echo PASS
