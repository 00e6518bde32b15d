#!/usr/bin/env bash
# Core copies through a real sshd: push, pull and remote-to-remote, sizes
# around block boundaries and a few hundred MiB at -s 1, 4 and 16, target
# directory vs file name, /dev/null, -f, progress and -v reports.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
big_mb=${LC_TEST_BIG_MB:-300}
mkdir -p "$d/remote" "$d/local"

lc_note "sizes around the block size (-B 64k), push and pull"
bs=65536
for size in 0 1 $((bs - 1)) $bs $((bs + 1)) $((3 * bs + 7)); do
	head -c "$size" /dev/urandom >"$d/local/s$size"
	lc_lanecp -B 64k -s 4 "$d/local/s$size" "$H:$d/remote/s$size"
	cmp "$d/local/s$size" "$d/remote/s$size" ||
		lc_fail "push of $size bytes differs"
	lc_lanecp -B 64k -s 3 "$H:$d/remote/s$size" "$d/local/p$size"
	cmp "$d/local/s$size" "$d/local/p$size" ||
		lc_fail "pull of $size bytes differs"
done

lc_note "$big_mb MiB of random data at -s 1, 4, 16, push and pull"
head -c $((big_mb << 20)) /dev/urandom >"$d/local/big"
for s in 1 4 16; do
	rm -f "$d/remote/big" "$d/local/big.back"
	lc_lanecp -s "$s" "$d/local/big" "$H:$d/remote/big"
	cmp "$d/local/big" "$d/remote/big" || lc_fail "push -s $s differs"
	lc_lanecp -s "$s" "$H:$d/remote/big" "$d/local/big.back"
	cmp "$d/local/big" "$d/local/big.back" || lc_fail "pull -s $s differs"
done
rm -f "$d/local/big.back"

lc_note "remote to remote (both agents remote, data flows between them)"
mkdir -p "$d/r2"
lc_lanecp -s 4 "$H:$d/remote/big" "$H:$d/r2/"
cmp "$d/local/big" "$d/r2/big" || lc_fail "remote-to-remote differs"
rm -f "$d/r2/big" "$d/remote/big"

lc_note "target: existing directory, trailing slash, new name, /dev/null"
head -c 300000 /dev/urandom >"$d/local/f.bin"
lc_lanecp "$d/local/f.bin" "$H:$d/remote"
cmp "$d/local/f.bin" "$d/remote/f.bin" || lc_fail "into directory"
mkdir "$d/remote/sub"
lc_lanecp "$d/local/f.bin" "$H:$d/remote/sub/"
cmp "$d/local/f.bin" "$d/remote/sub/f.bin" || lc_fail "into dir/"
lc_lanecp "$d/local/f.bin" "$H:$d/remote/renamed.bin"
cmp "$d/local/f.bin" "$d/remote/renamed.bin" || lc_fail "new name"
lc_lanecp "$d/local/f.bin" "$H:/dev/null"
lc_lanecp -s 8 "$d/local/big" "$H:/dev/null"
[[ -c /dev/null ]] || lc_fail "/dev/null was replaced"
lc_lanecp "$H:$d/remote/f.bin" "$d/local/sub2.bin"
cmp "$d/local/f.bin" "$d/local/sub2.bin" || lc_fail "pull to new name"
ls -a "$d/remote" "$d/remote/sub" | grep lanecp-part >/dev/null &&
	lc_fail "temporary file left behind"

lc_note "-f replaces an existing target; mode follows the source"
head -c 1000 /dev/urandom >"$d/local/f.bin"
chmod 0640 "$d/local/f.bin"
lc_lanecp -f "$d/local/f.bin" "$H:$d/remote/f.bin"
cmp "$d/local/f.bin" "$d/remote/f.bin" || lc_fail "-f did not replace"
[[ $(stat -c %a "$d/remote/f.bin") == 640 ]] || lc_fail "mode not kept"

lc_note "-T names the remote program; without it the remote PATH is used"
lc_lanecp -f -T "$LANECP" "$d/local/f.bin" "$H:$d/remote/f.bin"

lc_note "-v reports the negotiated settings; -P reports progress"
lc_lanecp -v -s 6 -w 64k -B 256k -f "$d/local/f.bin" "$H:$d/remote/f.bin"
lc_log_has '6 streams to .*window 64\.0 KiB, block 256 KiB' "$LC_ERR"
lc_log_has 'copied 0 files, updated 1, 1000 bytes' "$LC_ERR"
lc_lanecp -P 0.2 -s 2 -f "$d/local/big" "$H:/dev/null"
lc_log_has "of $big_mb\\.0 MiB \\(100%\\).*done" "$LC_ERR"
lc_lanecp -q -f "$d/local/f.bin" "$H:$d/remote/f.bin"
[[ ! -s $LC_ERR ]] || lc_fail "-q printed something"

echo PASS
