#!/usr/bin/env bash
# -c: zlib per block.  A log-like file (bench/gen_logs.py) and random data,
# push and pull, at -c and -c9: identical copies; for the text fewer bytes
# on the wire (--json compressed_bytes) than file bytes, for random data
# the same (every block raw).  A tree with -r, -c with -e, -c with -a
# after a cut copy, every data path (direct, -z, --relay, --via-ssh);
# -v names the level; a bad level is a usage error naming it.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"

# --json field
jf() {
	python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' \
	    "$2" <"$1"
}

python3 "$LC_SRC_DIR/bench/gen_logs.py" 24m "$d/local/log"
python3 "$LC_SRC_DIR/bench/gen_logs.py" --kind sql 3m "$d/local/dump.sql"
head -c $((16 << 20)) /dev/urandom >"$d/local/rand"

# copy SRC DST WHAT WANT(small|same) ARGS...: checks and wire bytes
check() {
	local src=$1 dst=$2 what=$3 want=$4 bytes wire
	cmp "$src" "$dst" || lc_fail "$what: copy differs"
	bytes=$(jf "$d/out" bytes)
	wire=$(jf "$d/out" compressed_bytes)
	echo "$what: $bytes bytes, $wire on the wire" >&2
	((wire <= bytes)) || lc_fail "$what: $wire wire bytes > $bytes"
	case $want in
	small) ((wire * 2 < bytes)) ||
		lc_fail "$what: compressible, but $wire of $bytes on the wire" ;;
	same) ((wire == bytes)) ||
		lc_fail "$what: random data, but $wire of $bytes on the wire" ;;
	esac
}

lc_note "push and pull, text and random, -c and -c9"
for lv in -c -c9; do
	for f in log rand; do
		want=small
		[[ $f == rand ]] && want=same
		rm -f "$d/remote/$f" "$d/local/$f.back"
		lc_lanecp --json -s 4 "$lv" "$d/local/$f" "$H:$d/remote/$f" \
		    >"$d/out"
		check "$d/local/$f" "$d/remote/$f" "push $lv $f" $want
		[[ $(jf "$d/out" compression) == "${lv#-c}" ||
		    ($lv == -c && $(jf "$d/out" compression) == 1) ]] ||
			lc_fail "--json compression: $(jf "$d/out" compression)"
		lc_lanecp --json -s 3 "$lv" "$H:$d/remote/$f" \
		    "$d/local/$f.back" >"$d/out"
		check "$d/local/$f" "$d/local/$f.back" "pull $lv $f" $want
	done
done

lc_note "without -c: compressed_bytes equals bytes, compression 0"
rm -f "$d/remote/log"
lc_lanecp --json "$d/local/log" "$H:$d/remote/log" >"$d/out"
check "$d/local/log" "$d/remote/log" "no -c" same
[[ $(jf "$d/out" compression) == 0 ]] || lc_fail "compression not 0"

lc_note "-v says the level"
rm -f "$d/remote/log"
lc_lanecp -v --compress=6 "$d/local/log" "$H:$d/remote/log"
lc_log_has "compression level 6" "$LC_ERR"
cmp "$d/local/log" "$d/remote/log"

lc_note "a mixed file: text, random, text blocks (-B 256k)"
cat "$d/local/dump.sql" "$d/local/rand" "$d/local/dump.sql" >"$d/local/mix"
rm -f "$d/remote/mix"
lc_lanecp --json -B 256k -c -e "$d/local/mix" "$H:$d/remote/mix" >"$d/out"
check "$d/local/mix" "$d/remote/mix" "mixed -e" any
wire=$(jf "$d/out" compressed_bytes)
((wire < (16 << 20) + (3 << 20))) || lc_fail "mixed: $wire on the wire"

lc_note "a tree with -r, -c, -e"
mkdir -p "$d/local/tree/a/b" "$d/local/tree/c"
head -c 100000 "$d/local/log" >"$d/local/tree/a/small.log"
head -c 3000 "$d/local/rand" >"$d/local/tree/a/b/r.bin"
cp "$d/local/dump.sql" "$d/local/tree/c/"
: >"$d/local/tree/c/empty"
for i in $(seq 1 40); do
	head -c $((i * 997)) "$d/local/log" >"$d/local/tree/c/f$i.txt"
done
rm -rf "$d/remote/tree"
lc_lanecp --json -r -c -e "$d/local/tree" "$H:$d/remote/" >"$d/out"
diff -r "$d/local/tree" "$d/remote/tree" || lc_fail "tree differs"
check "$d/local/tree/c/dump.sql" "$d/remote/tree/c/dump.sql" "tree" small

lc_note "-c on every data path"
for p in --direct -z --relay --via-ssh; do
	rm -f "$d/remote/log.$p"
	lc_lanecp --json -s 2 -c $p "$d/local/log" "$H:$d/remote/log.$p" \
	    >"$d/out"
	check "$d/local/log" "$d/remote/log.$p" "path $p" small
	want=${p#--}
	[[ $p == -z ]] && want=reverse
	[[ $p == --via-ssh ]] && want=ssh
	[[ $(jf "$d/out" path) == "$want" ]] ||
		lc_fail "$p: path $(jf "$d/out" path)"
done

lc_note "-a: resume a partial copy with -c"
rm -f "$d/remote/log"
head -c $((10 << 20)) "$d/local/log" >"$d/remote/.log.lanecp-part"
lc_lanecp --json -a -c -e "$d/local/log" "$H:$d/remote/log" >"$d/out"
cmp "$d/local/log" "$d/remote/log" || lc_fail "resume: copy differs"
(($(jf "$d/out" resumed_bytes) > 0)) || lc_fail "resume: nothing kept"

lc_note "bad levels are usage errors naming the level"
for bad in -c0 -c10 --compress=x --compress=; do
	lc_expect_exit 2 "$LANECP" "$bad" "$d/local/log" "$H:$d/remote/x" \
	    2>"$d/err"
	lc_log_has "compression level" "$d/err"
done
lc_expect_exit 2 "$LANECP" -c12 "$d/local/log" "$H:$d/remote/x" 2>"$d/err"
lc_log_has "^lanecp: -c 12: compression level" "$d/err"
echo "PASS"
