#!/usr/bin/env bash
# Tree copies, lanecp -r (issue #11; the contract is the CLI of the tree
# design): push (local -> $H:) and pull ($H: -> local).
#
# Every case is a function tc_NAME run in a subshell of its own: a failure
# prints "FAIL: [NAME] ..." and the other cases still run; the script fails
# at the end naming every failed case.  LC_TREE_CASES="NAME ..." runs only
# those (e.g. LC_TREE_CASES="symlinks perms" bash test_tree.sh).
#
# Cases: exact trees (empty dirs, 8-deep nesting, names with a space, a
# newline and a non-UTF-8 byte, a few hundred small files, a few 1-5 MiB
# files) push and pull at -s 1 and -s 16; src vs src/ and a missing target
# directory; symlinks (relative, absolute, dangling, out of the tree:
# copied as links, never followed at the sink) and -L; -p (modes and
# nanosecond mtimes of files and directories, a 0555 directory written by a
# sink that cannot override permissions) and the defaults without -p; -u
# (nothing sent, files untouched; one changed file sent; with -p a skipped
# file's new mode, times and with --owner owner applied, said in -v) and
# -O; a FIFO
# skipped with a warning; an unreadable file (exit 23, one line, "failed"
# in --json, the rest copied); sparse files (holes kept); kill -9 of the controller and a resume with
# -a -u that does not send the finished files again; what a nightly -u
# run prints (issue 24: the counts, repeated failures, names); the sink's
# end-of-list mark (issue 23, SINK_NOMORE), and none for an older sink.
#
# Root reads any file, so "unreadable" and "cannot write into a 0555
# directory" use an end without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH
# (setpriv --bounding-set): the local lanecp run under setpriv, or the
# remote agent through a -T wrapper that execs it under setpriv.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
umask 022	# the sshd and so the remote agents inherit it
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
CASE=setup

# ---------------------------------------------------------------- helpers
# An end that cannot bypass file permissions although it runs as root.
NOCAP=()
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null &&
    setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
	NOCAP=(setpriv --bounding-set "-dac_override,-dac_read_search")
	cat >"$d/agent-nocap" <<EOF
#!/bin/sh
exec ${NOCAP[*]} "$LANECP" "\$@"
EOF
	chmod 0755 "$d/agent-nocap"
fi

# lanecp_nocap ARGS...: lc_lanecp with the local end under setpriv.
# lanecp_nocap_expect CODE PATTERN ARGS...: lc_lanecp_expect, the same.
lanecp_nocap() {
	local LANECP=$d/lanecp-nocap
	lc_lanecp "$@"
}
lanecp_nocap_expect() {
	local LANECP=$d/lanecp-nocap
	lc_lanecp_expect "$@"
}
if ((${#NOCAP[@]})); then
	cat >"$d/lanecp-nocap" <<EOF
#!/bin/sh
exec ${NOCAP[*]} "$LANECP" "\$@"
EOF
	chmod 0755 "$d/lanecp-nocap"
fi

# tree_list DIR [FMT]: one record per entry of DIR (DIR itself included, as
# ""), sorted: type, relative name, size of files, target of links, plus
# find's FMT (e.g. '%m %T@') for files and directories.  Records end in NUL
# before the sort (names may hold newlines), in newlines after it.
tree_list() {
	local dir=$1 fmt=${2-}
	{
		find "$dir" -type d -printf "d '%P' $fmt\\0"
		find "$dir" -type f -printf "f '%P' %s $fmt\\0"
		find "$dir" -type l -printf "l '%P' -> '%l'\\0"
		find "$dir" ! -type d ! -type f ! -type l -printf "%y '%P'\\0"
	} | sort -z | tr '\0' '\n'
}

# same_tree A B [FMT]: A and B hold the same names, types, sizes, link
# targets (and FMT), and every regular file has the same bytes.
same_tree() {
	local a=$1 b=$2 fmt=${3-}
	if ! diff <(tree_list "$a" "$fmt") <(tree_list "$b" "$fmt") >"$d/tree.diff"; then
		lc__show "$d/tree.diff"
		lc_fail "$b is not a copy of $a${fmt:+ (with $fmt)}"
	fi
	if ! diff -r --no-dereference "$a" "$b" >"$d/tree.diff" 2>&1; then
		lc__show "$d/tree.diff"
		lc_fail "contents of $b differ from $a"
	fi
}

# jget FILE KEY: a top-level value of the --json object in FILE.
jget() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" ||
		lc_fail "--json has no \"$2\": $(cat "$1")"
}

# tree_bytes DIR: the sum of the sizes of DIR's regular files.
tree_bytes() {
	find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

# mk_tree DIR: the big test tree.
mk_tree() {
	python3 - "$1" <<'EOF'
import os, sys
root = os.fsencode(sys.argv[1])
def P(*parts): return os.path.join(root, *parts)
def w(path, n): 
    with open(path, 'wb') as f: f.write(os.urandom(n))
os.makedirs(root)
os.makedirs(P(b'empty'))
os.makedirs(P(b'a', b'empty too'))
os.makedirs(P(b'deep', b'1', b'2', b'3', b'4', b'5', b'6', b'7', b'8'))
w(P(b'deep', b'1', b'2', b'3', b'4', b'5', b'6', b'7', b'8', b'bottom'), 123)
os.makedirs(P(b'with space'))
w(P(b'with space', b'file name with  spaces '), 1000)
os.makedirs(P(b'new\nline dir'))
w(P(b'new\nline dir', b'new\nline'), 77)
os.makedirs(P(b'bad\xffbyte'))
w(P(b'bad\xffbyte', b'\xfe\xff'), 4096)
w(P(b'-dash'), 5)
w(P(b'zero'), 0)
for i in range(300):              # small files in 12 directories
    d = P(b'small', b'd%02d' % (i % 12))
    os.makedirs(d, exist_ok=True)
    w(os.path.join(d, b'f%03d' % i), (i * 1237) % 9000)
os.makedirs(P(b'big'))
for name, n in ((b'b1', 1 << 20), (b'b3', (3 << 20) + 17), (b'b5', 5 << 20)):
    w(P(b'big', name), n)
EOF
}

# ---------------------------------------------------------------- cases
# Exact tree copies, push and pull, -s 1 and -s 16.
tc_exact() {
	local s left
	mk_tree "$d/exact/src"
	for s in 1 16; do
		lc_note "exact tree, push, -s $s"
		mkdir -p "$d/exact/push$s"
		lc_lanecp -r -s "$s" "$d/exact/src" "$H:$d/exact/push$s/"
		same_tree "$d/exact/src" "$d/exact/push$s/src"
		lc_note "exact tree, pull, -s $s"
		mkdir -p "$d/exact/pull$s"
		lc_lanecp -r -s "$s" "$H:$d/exact/src" "$d/exact/pull$s/"
		same_tree "$d/exact/src" "$d/exact/pull$s/src"
	done
	# no part files or other leftovers anywhere
	left=$(find "$d/exact" -name '*.lanecp-part*')
	[[ -z $left ]] || lc_fail "part files left: $left"
}

# `src` vs `src/`, and the target directory made when its parent exists.
tc_forms() {
	local t=$d/forms
	mkdir -p "$t/src/sub" "$t/push" "$t/pull"
	echo one >"$t/src/one"
	echo two >"$t/src/sub/two"
	lc_note "forms: lanecp -r dir host:/t/ makes /t/dir"
	lc_lanecp -r "$t/src" "$H:$t/push/"
	same_tree "$t/src" "$t/push/src"
	[[ ! -e $t/push/one ]] || lc_fail "dir without / copied its contents"
	lc_note "forms: lanecp -r dir/ host:/t/ copies the contents"
	mkdir "$t/push2"
	lc_lanecp -r "$t/src/" "$H:$t/push2/"
	same_tree "$t/src" "$t/push2"
	lc_note "forms: pull, dir and dir/"
	lc_lanecp -r "$H:$t/src" "$t/pull/"
	same_tree "$t/src" "$t/pull/src"
	mkdir "$t/pull2"
	lc_lanecp -r "$H:$t/src/" "$t/pull2/"
	same_tree "$t/src" "$t/pull2"
	lc_note "forms: a missing target directory is made when its parent exists"
	lc_lanecp -r "$t/src" "$H:$t/new"
	same_tree "$t/src" "$t/new/src"
	lc_lanecp -r "$t/src/" "$H:$t/new2/"
	same_tree "$t/src" "$t/new2"
	lc_lanecp -r "$H:$t/src/" "$t/new3"
	same_tree "$t/src" "$t/new3"
	lc_note "forms: a tree and a file, several sources, to one directory"
	echo three >"$t/three"
	mkdir "$t/several" "$t/severalp"
	lc_lanecp -r "$t/src" "$t/three" "$H:$t/several/"
	same_tree "$t/src" "$t/several/src"
	cmp "$t/three" "$t/several/three" || lc_fail "several sources: three differs"
	lc_lanecp -r "$H:$t/src" "$H:$t/three" "$t/severalp/"
	same_tree "$t/src" "$t/severalp/src"
	cmp "$t/three" "$t/severalp/three" || lc_fail "several sources, pull: three differs"
	lc_note "forms: a missing parent is refused, nothing is made"
	local rc=0
	lc__lanecp_run -r "$t/src" "$H:$t/no/deeper/" || rc=$?
	((rc != 0)) || lc_fail "a target whose parent is missing was accepted"
	[[ ! -e $t/no ]] || lc_fail "a missing parent was made"
}

# Symlinks are copied as links, never followed at the sink; -L follows them
# at the source.
tc_symlinks() {
	local t=$d/sym out=$d/sym/outside before
	mkdir -p "$t/src/data" "$t/src/sub" "$out/dir" "$t/Lout"
	echo outside >"$out/sentinel"
	echo "outside, longer than the source's victim" >"$out/victim"
	head -c 5000 /dev/urandom >"$t/src/data/f"
	ln -s data/f "$t/src/rel"
	ln -s ../data/f "$t/src/sub/rel-up"
	ln -s "$out/sentinel" "$t/src/abs"
	ln -s "$out/dir" "$t/src/absdir"
	ln -s no/such/file "$t/src/dangling"
	ln -s ../../../outside/sentinel "$t/src/sub/escape"
	ln -s ../outside "$t/src/escapedir"
	ln -s "$(printf 'odd\nlink \xff target')" "$t/src/oddlink"
	before=$(tree_list "$out" '%m %T@ %i')
	lc_note "symlinks: push, copied as links with the same targets"
	mkdir "$t/push"
	lc_lanecp -r "$t/src" "$H:$t/push/"
	same_tree "$t/src" "$t/push/src"
	lc_note "symlinks: pull"
	mkdir "$t/pull"
	lc_lanecp -r "$H:$t/src" "$t/pull/"
	same_tree "$t/src" "$t/pull/src"
	[[ $(tree_list "$out" '%m %T@ %i') == "$before" ]] ||
		lc_fail "something was written outside the target: $(ls -la "$out" "$out/dir")"

	lc_note "symlinks: a link at the sink is replaced, not written through"
	echo victim >"$t/src/victim"
	ln -s "$out/victim" "$t/push/src/victim"
	ln -s "$out/dir" "$t/push/src/newdir"
	mkdir "$t/src/newdir"
	echo inside >"$t/src/newdir/file"
	lc_lanecp -r -u "$t/src" "$H:$t/push/"
	same_tree "$t/src" "$t/push/src"
	[[ $(tree_list "$out" '%m %T@ %i') == "$before" ]] ||
		lc_fail "a copy wrote through a link at the sink: $(ls -la "$out" "$out/dir")"
	[[ $(cat "$out/victim") == "outside, longer than the source's victim" ]] ||
		lc_fail "the file a sink link pointed to was changed"

	lc_note "symlinks: -L copies what the links point to"
	mkdir -p "$t/L/src/data"
	cp "$t/src/data/f" "$t/L/src/data/f"
	echo lout >"$t/Lout/file"
	ln -s data/f "$t/L/src/rel"
	ln -s "$out/sentinel" "$t/L/src/abs"
	ln -s ../../Lout "$t/L/src/dirlink"
	mkdir "$t/L/push" "$t/L/pull"
	lc_lanecp -r -L "$t/L/src" "$H:$t/L/push/"
	lc_lanecp -r -L "$H:$t/L/src" "$t/L/pull/"
	local x
	for x in "$t/L/push/src" "$t/L/pull/src"; do
		[[ -f $x/rel && ! -L $x/rel ]] || lc_fail "-L: $x/rel is not a regular file"
		[[ -f $x/abs && ! -L $x/abs ]] || lc_fail "-L: $x/abs is not a regular file"
		[[ -d $x/dirlink && ! -L $x/dirlink ]] || lc_fail "-L: $x/dirlink is not a directory"
		cmp "$t/src/data/f" "$x/rel" || lc_fail "-L: $x/rel differs"
		cmp "$out/sentinel" "$x/abs" || lc_fail "-L: $x/abs differs"
		cmp "$t/Lout/file" "$x/dirlink/file" || lc_fail "-L: $x/dirlink/file differs"
		[[ -z $(find "$x" -type l) ]] || lc_fail "-L: links left in $x"
	done
}

# mk_modes DIR: a tree with set modes and old nanosecond mtimes.
mk_modes() {
	local s=$1
	mkdir -p "$s/d750/ro/inner" "$s/plain" "$s/emptyro"
	echo 640 >"$s/d750/f640"
	printf '#!/bin/sh\n' >"$s/d750/x755"
	head -c 200000 /dev/urandom >"$s/d750/ro/big"
	echo in >"$s/d750/ro/inner/f"
	echo p >"$s/plain/f666"
	chmod 0640 "$s/d750/f640"
	chmod 0755 "$s/d750/x755"
	chmod 0666 "$s/plain/f666"
	chmod 0600 "$s/d750/ro/big" "$s/d750/ro/inner/f"
	chmod 0777 "$s/plain"
	touch -h -d '2001-02-03 04:05:06.123456789' \
		"$s/d750/f640" "$s/d750/x755" "$s/d750/ro/big" "$s/plain/f666"
	touch -d '2002-03-04 05:06:07.000000001' "$s/d750/ro/inner/f"
	# directories last (their mtimes change while they fill), deepest first
	touch -d '2003-01-01 00:00:00.5' "$s/d750/ro/inner" "$s/d750/ro" \
		"$s/d750" "$s/plain" "$s/emptyro" "$s"
	chmod 0555 "$s/d750/ro" "$s/emptyro"
	chmod 0750 "$s/d750"
	chmod 0700 "$s/d750/ro/inner"
}

# -p keeps modes and mtimes (applied after the contents: a 0555 directory
# is filled by a sink that cannot override permissions); without -p the
# times are new and the modes are the source's less the umask.
tc_perms() {
	local t=$d/perms
	mk_modes "$t/src"
	mkdir -p "$t/push" "$t/pull" "$t/pushn" "$t/pulln"
	if ((${#NOCAP[@]})); then
		lc_note "-p: push, the sink agent without CAP_DAC_OVERRIDE"
		lc_lanecp -r -p -T "$d/agent-nocap" "$t/src" "$H:$t/push/"
		lc_note "-p: pull, the local sink without CAP_DAC_OVERRIDE"
		lanecp_nocap -r -p "$H:$t/src" "$t/pull/"
	else
		lc_note "-p: push and pull (as root without setpriv: 0555 proves less)"
		lc_lanecp -r -p "$t/src" "$H:$t/push/"
		lc_lanecp -r -p "$H:$t/src" "$t/pull/"
	fi
	same_tree "$t/src" "$t/push/src" '%m %T@'
	same_tree "$t/src" "$t/pull/src" '%m %T@'

	lc_note "without -p: new times, modes less the umask (022 push, 027 pull)"
	local t0
	t0=$(date +%s)
	lc_lanecp -r "$t/src" "$H:$t/pushn/"
	( umask 027; lc_lanecp -r "$H:$t/src" "$t/pulln/" ) || exit 1
	same_tree "$t/src" "$t/pushn/src"
	same_tree "$t/src" "$t/pulln/src"
	local rel m want mask dir f
	for dir in pushn pulln; do
		mask=022
		[[ $dir == pulln ]] && mask=027
		while IFS= read -r -d '' rel; do
			f=$t/$dir/src/$rel
			m=$(stat -c %a "$t/src/$rel")
			want=$(printf '%o' $((8#$m & ~8#$mask)))
			[[ $(stat -c %a "$f") == "$want" ]] ||
				lc_fail "$dir/src/$rel: mode $(stat -c %a "$f"), want $want (source $m, umask $mask)"
			if [[ -f $f ]] && (($(stat -c %Y "$f") < t0)); then
				lc_fail "$dir/src/$rel: mtime $(stat -c %y "$f") kept without -p"
			fi
		done < <(find "$t/src" -mindepth 1 \( -type f -o -type d \) -printf '%P\0')
	done
}

# -u sends nothing for an unchanged tree and touches no file; a changed
# file (same size, new mtime) is the only one sent.  -O skips existing
# files even when they differ.
tc_update() {
	local t=$d/upd dir src dst inodes sent f base npass=
	mk_tree "$t/src"
	mkdir -p "$t/push" "$t/pull"
	lc_lanecp -r -p "$t/src" "$H:$t/push/"
	lc_lanecp -r -p "$H:$t/src" "$t/pull/"
	for dir in push pull; do
		if [[ $dir == push ]]; then src=$t/src; dst=$H:$t/push/
		else src=$H:$t/src; dst=$t/pull/
		fi
		lc_note "-u: $dir, unchanged tree: nothing sent, nothing touched"
		inodes=$(tree_list "$t/$dir/src" '%i %T@')
		lc_lanecp -r -p -u --json "$src" "$dst" >"$d/u.json"
		sent=$(jget "$d/u.json" bytes)
		[[ $sent == 0 ]] || lc_fail "-u on an unchanged tree ($dir) sent $sent bytes"
		[[ $(tree_list "$t/$dir/src" '%i %T@') == "$inodes" ]] ||
			lc_fail "-u on an unchanged tree ($dir) touched files"
		same_tree "$t/src" "$t/$dir/src" '%m %T@'
	done
	base=$(date +%s)
	for dir in push pull; do
		if [[ $dir == push ]]; then src=$t/src; dst=$H:$t/push/
		else src=$H:$t/src; dst=$t/pull/
		fi
		lc_note "-u: $dir, one file changed (same size, new mtime): only it is sent"
		f=small/d05/f005
		head -c "$(stat -c %s "$t/src/$f")" /dev/urandom >"$t/src/$f.new"
		mv "$t/src/$f.new" "$t/src/$f"
		# an mtime of its own for each pass (push and pull are both 4
		# letters: "- ${#dir}" gave them the same second when both ran
		# within one, and the later -u push took the file for unchanged)
		touch -d "@$((base - 1000 * (${#npass} + 1)))" "$t/src/$f"
		npass+=x
		# the file, and its directory (its mtime changed with -p)
		inodes=$(tree_list "$t/$dir/src" '%i %T@' |
			grep -av -e "'$f'" -e "'${f%/*}'")
		lc_lanecp -r -p -u --json "$src" "$dst" >"$d/u.json"
		sent=$(jget "$d/u.json" bytes)
		[[ $sent == "$(stat -c %s "$t/src/$f")" ]] ||
			lc_fail "-u ($dir) with one changed file of $(stat -c %s "$t/src/$f") bytes sent $sent"
		same_tree "$t/src" "$t/$dir/src" '%m %T@'
		[[ $(tree_list "$t/$dir/src" '%i %T@' |
			grep -av -e "'$f'" -e "'${f%/*}'") == "$inodes" ]] ||
			lc_fail "-u ($dir) touched files that had not changed"
	done

	lc_note "-u without -p: what it copies keeps the mtime, so a second -u sends nothing"
	mkdir -p "$t/nop"
	lc_lanecp -r -u --json "$t/src" "$H:$t/nop/" >"$d/u.json"
	[[ $(jget "$d/u.json" bytes) != 0 ]] || lc_fail "-u into an empty directory sent nothing"
	lc_lanecp -r -u --json "$t/src" "$H:$t/nop/" >"$d/u.json"
	sent=$(jget "$d/u.json" bytes)
	[[ $sent == 0 ]] || lc_fail "a second -u without -p sent $sent bytes"

	# issue 24 item 1: what -u skips for its data still gets its mode
	# and times with -p (rsync -a does), said in -v, nothing sent
	lc_lanecp -r -p -u "$t/src" "$H:$t/push/"	# f005 changed for pull
	chmod 0600 "$t/src/small/d01/f001"
	chmod 0750 "$t/src/small/d02"
	touch -d "@$(stat -c %Y "$t/src/small/d03/f003").25" "$t/src/small/d03/f003"
	for dir in push pull; do
		if [[ $dir == push ]]; then src=$t/src; dst=$H:$t/push/
		else src=$H:$t/src; dst=$t/pull/
		fi
		lc_note "-u -p: $dir, a file made private and a touched one: attributes updated, no data sent"
		inodes=$(tree_list "$t/$dir/src" '%i')
		lc_lanecp -r -p -u -v --json "$src" "$dst" >"$d/u.json"
		sent=$(jget "$d/u.json" bytes)
		[[ $sent == 0 ]] || lc_fail "-u -p ($dir) re-sent $sent bytes for attributes only"
		same_tree "$t/src" "$t/$dir/src" '%m %T@'
		[[ $(tree_list "$t/$dir/src" '%i') == "$inodes" ]] ||
			lc_fail "-u -p ($dir) replaced files whose attributes only changed"
		lc_log_has '^lanecp: src/small/d01/f001: up to date, mode updated$' "$LC_ERR"
		lc_log_has '^lanecp: src/small/d03/f003: up to date, times updated$' "$LC_ERR"
		lc_log_has '^lanecp: src/small/d05/f005: up to date, skipped$' "$LC_ERR"
	done
	chmod 0644 "$t/src/small/d01/f001"

	lc_note "-O: existing files are skipped even when they differ, new ones copied"
	echo "changed, and longer than before" >"$t/src/-dash"
	echo new >"$t/src/small/newfile"
	for dir in push pull; do
		if [[ $dir == push ]]; then src=$t/src; dst=$H:$t/push/
		else src=$H:$t/src; dst=$t/pull/
		fi
		cp -a "$t/$dir/src/-dash" "$d/dash.before"
		lc_lanecp -r -O "$src" "$dst"
		cmp "$d/dash.before" "$t/$dir/src/-dash" || lc_fail "-O ($dir) replaced an existing file"
		cmp "$t/src/small/newfile" "$t/$dir/src/small/newfile" ||
			lc_fail "-O ($dir) did not copy a new file"
	done
}

# --owner keeps owner and group (the sink runs as root here); without it
# the copy belongs to whoever wrote it.  Ids without names (12345) go by
# number; --numeric-ids never maps names.
tc_owner() {
	local t=$d/own dir src dst
	mkdir -p "$t/src/sub" "$t/push" "$t/pull" "$t/plain" "$t/num"
	echo a >"$t/src/sub/nobody"
	echo b >"$t/src/noname"
	ln -s sub/nobody "$t/src/link"
	chown 65534:65534 "$t/src/sub" "$t/src/sub/nobody"
	chown 12345:12346 "$t/src/noname"
	chown -h 65534:12346 "$t/src/link"
	for dir in push pull num; do
		lc_note "owner: $dir"
		case $dir in
		push) lc_lanecp -r --owner "$t/src" "$H:$t/push/" ;;
		pull) lc_lanecp -r --owner "$H:$t/src" "$t/pull/" ;;
		num) lc_lanecp -r --owner --numeric-ids "$t/src" "$H:$t/num/" ;;
		esac
		[[ $(stat -c %u:%g "$t/$dir/src/sub") == 65534:65534 ]] ||
			lc_fail "owner ($dir): sub is $(stat -c %u:%g "$t/$dir/src/sub")"
		[[ $(stat -c %u:%g "$t/$dir/src/sub/nobody") == 65534:65534 ]] ||
			lc_fail "owner ($dir): sub/nobody is $(stat -c %u:%g "$t/$dir/src/sub/nobody")"
		[[ $(stat -c %u:%g "$t/$dir/src/noname") == 12345:12346 ]] ||
			lc_fail "owner ($dir): noname is $(stat -c %u:%g "$t/$dir/src/noname")"
		[[ $(stat -c %u:%g "$t/$dir/src/link") == 65534:12346 ]] ||
			lc_fail "owner ($dir): the link is $(stat -c %u:%g "$t/$dir/src/link")"
	done
	lc_note "owner: -u --owner gives a skipped file its new owner (pull)"
	lc_lanecp -r -p -u --owner "$H:$t/src" "$t/pull/"
	chown 65534:12346 "$t/src/noname"
	lc_lanecp -r -p -u --owner -v "$H:$t/src" "$t/pull/"
	[[ $(stat -c %u:%g "$t/pull/src/noname") == 65534:12346 ]] ||
		lc_fail "-u --owner: skipped noname is $(stat -c %u:%g "$t/pull/src/noname")"
	lc_log_has '^lanecp: src/noname: up to date, owner updated$' "$LC_ERR"
	lc_note "owner: without --owner the copy is root's"
	lc_lanecp -r "$t/src" "$H:$t/plain/"
	[[ $(stat -c %u:%g "$t/plain/src/noname") == 0:0 ]] ||
		lc_fail "without --owner noname is $(stat -c %u:%g "$t/plain/src/noname")"
	lc_lanecp_expect 2 "numeric-ids goes with --owner" -r --numeric-ids \
		"$t/src" "$H:$t/plain2/"
}

# Set-id and sticky bits: kept only with -p by root from a local source
# (push); a remote source's (pull) are dropped, and without -p too.
tc_setid() {
	local t=$d/setid
	mkdir -p "$t/src/gdir" "$t/push" "$t/pull" "$t/nop"
	echo x >"$t/src/suid"
	chmod 4755 "$t/src/suid"
	chmod 2775 "$t/src/gdir"
	lc_note "setid: push with -p keeps them"
	lc_lanecp -r -p "$t/src" "$H:$t/push/"
	[[ $(stat -c %a "$t/push/src/suid") == 4755 ]] ||
		lc_fail "setid: push -p gave suid mode $(stat -c %a "$t/push/src/suid")"
	[[ $(stat -c %a "$t/push/src/gdir") == 2775 ]] ||
		lc_fail "setid: push -p gave gdir mode $(stat -c %a "$t/push/src/gdir")"
	lc_note "setid: pull with -p (a remote source) drops them"
	lc_lanecp -r -p "$H:$t/src" "$t/pull/"
	[[ $(stat -c %a "$t/pull/src/suid") == 755 ]] ||
		lc_fail "setid: pull -p gave suid mode $(stat -c %a "$t/pull/src/suid")"
	[[ $(stat -c %a "$t/pull/src/gdir") == 775 ]] ||
		lc_fail "setid: pull -p gave gdir mode $(stat -c %a "$t/pull/src/gdir")"
	lc_note "setid: push without -p drops them"
	lc_lanecp -r "$t/src" "$H:$t/nop/"
	[[ $(stat -c %a "$t/nop/src/suid") == 755 ]] ||
		lc_fail "setid: push without -p gave suid mode $(stat -c %a "$t/nop/src/suid")"
}

# A FIFO inside the tree is skipped with a warning; the copy succeeds.
tc_fifo() {
	local t=$d/fifo
	mkdir -p "$t/src/sub" "$t/push" "$t/pull" "$t/want/src/sub"
	echo a >"$t/src/a"
	echo b >"$t/src/sub/z"
	cp -a "$t/src/." "$t/want/src/"
	mkfifo "$t/src/sub/pipe"
	lc_note "fifo: push, skipped with a warning"
	lc_lanecp -r "$t/src" "$H:$t/push/"
	lc_log_has "$(lc_re "sub/pipe")" "$LC_ERR"
	same_tree "$t/want/src" "$t/push/src"
	lc_note "fifo: pull"
	lc_lanecp -r "$H:$t/src" "$t/pull/"
	lc_log_has "$(lc_re "sub/pipe")" "$LC_ERR"
	same_tree "$t/want/src" "$t/pull/src"
}

# An unreadable file: exit 23, one line naming it, --json "failed" lists
# it, the rest is copied.
tc_unreadable() {
	local t=$d/unr dir n
	mk_tree "$t/src"
	echo secret >"$t/src/small/d03/locked"
	chmod 000 "$t/src/small/d03/locked"
	mkdir -p "$t/want" "$t/push" "$t/pull"
	cp -a "$t/src" "$t/want/src"
	rm "$t/want/src/small/d03/locked"
	for dir in push pull; do
		lc_note "unreadable file: $dir (the source end without CAP_DAC_*)"
		if [[ $dir == push ]]; then
			lanecp_nocap_expect 23 "$(lc_re "small/d03/locked")" \
				-r --json "$t/src" "$H:$t/push/" >"$d/unr.json"
		else
			lc_lanecp_expect 23 "$(lc_re "small/d03/locked")" \
				-r --json -T "$d/agent-nocap" "$H:$t/src" "$t/pull/" >"$d/unr.json"
		fi
		n=$(grep -c 'locked' "$LC_ERR" || true)
		[[ $n == 1 ]] || { lc__show "$LC_ERR"; lc_fail "$dir: $n lines name the unreadable file, want 1"; }
		same_tree "$t/want/src" "$t/$dir/src"
		python3 - "$d/unr.json" <<'EOF' || lc_fail "$dir: --json \"failed\" does not list the file: $(cat "$d/unr.json")"
import json, sys
j = json.load(open(sys.argv[1]))
f = j["failed"]
assert len(f) == 1, f
assert f[0]["path"].endswith("small/d03/locked") and f[0]["error"], f
assert j["exit_status"] == 23, j
EOF
	done
	lc_note "unreadable file with a partial copy at the sink (-a -u): reported, nothing made"
	printf sec >"$t/push/src/small/d03/.locked.lanecp-part"
	chmod 600 "$t/push/src/small/d03/.locked.lanecp-part"
	lanecp_nocap_expect 23 "$(lc_re "small/d03/locked")" \
		-r -a -u --json "$t/src" "$H:$t/push/" >"$d/unr.json"
	[[ ! -e $t/push/src/small/d03/locked ]] ||
		lc_fail "resume: the unreadable file was made at the sink"
	same_tree "$t/want/src" "$t/push/src"
}

# Sparse files keep their holes (issue 11): the same bytes, about the same
# allocation, and far fewer bytes sent than the file's size.
tc_sparse() {
	local t=$d/sparse dir src dst sent
	mkdir -p "$t/src/sub" "$t/push" "$t/pull"
	truncate -s 64M "$t/src/sub/holes"
	printf 'start' | dd of="$t/src/sub/holes" conv=notrunc status=none
	head -c 100000 /dev/urandom | dd of="$t/src/sub/holes" bs=1M seek=20 conv=notrunc status=none
	printf 'end' | dd of="$t/src/sub/holes" bs=1 seek=$(((64 << 20) - 3)) conv=notrunc status=none
	truncate -s 32M "$t/src/sub/allhole"
	truncate -s 10M "$t/src/tailhole"
	printf 'head' | dd of="$t/src/tailhole" conv=notrunc status=none
	for dir in push pull; do
		if [[ $dir == push ]]; then src=$t/src; dst=$H:$t/push/
		else src=$H:$t/src; dst=$t/pull/
		fi
		lc_note "sparse: $dir, holes kept"
		lc_lanecp -r --json "$src" "$dst" >"$d/sparse.json"
		same_tree "$t/src" "$t/$dir/src"
		for f in sub/holes sub/allhole tailhole; do
			(($(stat -c %b "$t/$dir/src/$f") <= $(stat -c %b "$t/src/$f") + 2048)) ||
				lc_fail "$dir: $f takes $(du -k "$t/$dir/src/$f" | cut -f1) KiB, the source $(du -k "$t/src/$f" | cut -f1) KiB"
		done
		sent=$(jget "$d/sparse.json" bytes)
		((sent < 8 << 20)) || lc_fail "$dir: $sent bytes sent for 100 KiB of data in 106 MiB of holes"
	done
}

# kill -9 of the controller in the middle of a tree, then -a -u: identical,
# and what was finished is not sent again.  Both runs use -p: -u compares
# sizes and mtimes, and without -p a finished target has a new mtime.  -x
# keeps the first run slow enough (36 MiB at 16 MB/s) to be caught half way;
# the kill waits for the event (a big file in place), not for a time.
tc_killed() {
	local t=$d/kill agent=$d/agent-killtree copy i done_bytes total sent f
	mkdir -p "$t/src/big" "$t/src/small" "$t/dst"
	for i in 1 2 3 4 5 6; do
		head -c $((6 << 20)) /dev/urandom >"$t/src/big/f$i"
	done
	for i in $(seq 1 60); do
		head -c $((i * 100)) /dev/urandom >"$t/src/small/s$i"
	done
	total=$(tree_bytes "$t/src")
	ln -sf "$LANECP" "$agent"
	lc_note "kill: push at 16 MB/s, kill -9 once the first big file is in place"
	"$LANECP" -F "$LC_SSH_CONFIG" -r -p -x 16m -T "$agent" \
		"$t/src" "$H:$t/dst/" 2>"$d/kill.log" &
	copy=$!
	for ((i = 0; i < 1200; i++)); do
		compgen -G "$t/dst/src/big/f[1-6]" >/dev/null && break
		kill -0 "$copy" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$copy" 2>/dev/null || true
	wait "$copy" 2>/dev/null || true
	compgen -G "$t/dst/src/big/f[1-6]" >/dev/null ||
		{ lc__show "$d/kill.log"; lc_fail "no big file was finished before the kill"; }
	lc_wait_no_pids "$agent --agent" 60
	# what was finished (and has its final mtime) must not be sent again
	done_bytes=0
	for f in "$t"/dst/src/big/f? "$t"/dst/src/small/s*; do
		[[ -f $f ]] || continue
		cmp -s "$f" "$t/src/${f#"$t"/dst/src/}" || continue
		[[ $(stat -c %Y "$f") == $(stat -c %Y "$t/src/${f#"$t"/dst/src/}") ]] || continue
		done_bytes=$((done_bytes + $(stat -c %s "$f")))
	done
	((done_bytes < total)) || lc_fail "the copy had finished before the kill"
	lc_note "kill: resume with -a -u ($done_bytes of $total bytes were finished)"
	lc_lanecp -r -p -a -u --json "$t/src" "$H:$t/dst/" >"$d/kill.json"
	same_tree "$t/src" "$t/dst/src" '%m %T@'
	sent=$(jget "$d/kill.json" bytes)
	((sent < total)) || lc_fail "the resume sent $sent bytes, the whole tree is $total"
	((sent <= total - done_bytes)) ||
		lc_fail "the resume sent $sent bytes, but only $((total - done_bytes)) were not finished"
	f=$(find "$t/dst" -name '*.lanecp-part*')
	[[ -z $f ]] || lc_fail "part files left after the resume: $f"
}

# Output for cron (issue 24): without -v no per-file lines; a second -u
# run on an unchanged tree adds its start, summary and result lines to the
# -l log and nothing else; a failure repeated over many files is named
# LC_RESULT_FAILED_SHOWN (5) times, then counted ("and N more like it"),
# all of them counted and named in --json (70, more than the 64 it once
# named); names print as valid UTF-8, the rest as \xNN, the same in -v
# lines and in errors, and an error names its path once; a file that
# replaced one (-u, -f) is counted as updated, a new one as copied.
tc_output() {
	local t=$d/out before after
	python3 - "$t/src" <<'EOF'
import os, sys
root = os.fsencode(sys.argv[1])
for i in range(67):
    sub = os.path.join(root, b'd%d' % (i % 4))
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, b'f%02d' % i), 'wb') as f:
        f.write(b'x' * (i * 100))
os.makedirs(os.path.join(root, b'names'))
for name in ('\u00fcber-\u00fc'.encode(), b'nl\nname', b'bad\xffname'):
    with open(os.path.join(root, b'names', name), 'wb') as f:
        f.write(b'n')
EOF
	mkdir -p "$t/dst"
	lc_note "output: a first -u run, no per-file lines without -v"
	lc_lanecp -r -p -u -l "$t/cron.log" "$t/src" "$H:$t/dst/"
	lc_log_has '^lanecp: copied 70 files, updated 0, 221103 bytes \(215\.9 KiB\), skipped 0 up to date, failed 0 in ' "$LC_ERR"
	[[ $(wc -l <"$LC_ERR") == 1 ]] || { lc__show "$LC_ERR"; lc_fail "more than the summary on stderr"; }

	lc_note "output: a second -u run on the unchanged tree adds 3 lines to the log"
	before=$(wc -l <"$t/cron.log")
	lc_lanecp -r -p -u -l "$t/cron.log" "$t/src" "$H:$t/dst/"
	after=$(wc -l <"$t/cron.log")
	((after - before == 3)) || { lc__show "$t/cron.log"; lc_fail "an unchanged -u run added $((after - before)) lines to the log"; }
	tail -n 3 "$t/cron.log" >"$d/cron.tail"
	lc_log_has 'lanecp: start: .* -r -p -u -l ' "$d/cron.tail"
	lc_log_has 'lanecp: copied 0 files, updated 0, 0 bytes, skipped 70 up to date, failed 0 in ' "$d/cron.tail"
	lc_log_has 'lanecp: result: ok, copied 0 files, updated 0, 0 bytes, skipped 70 up to date, failed 0, 0 sent, ' "$d/cron.tail"

	lc_note "output: -v names each file: UTF-8 as it is, the rest \\xNN"
	lc_lanecp -r -v -u "$t/src" "$H:$t/dst/"
	lc_log_has $'names/\u00fcber-\u00fc: up to date, skipped$' "$LC_ERR"
	lc_log_has 'names/nl\\x0aname: up to date, skipped$' "$LC_ERR"
	lc_log_has 'names/bad\\xffname: up to date, skipped$' "$LC_ERR"

	lc_note "output: errors name the path once, in the same style"
	lc_lanecp_expect 23 '^lanecp: 3 files could not be copied' \
		-r "$t/src/names" "$H:$t/dst/src/"
	lc_log_has "^lanecp: $H:$(lc_re "$t")/dst/src/names/"$'\u00fcber-\u00fc: file exists \\(use -f to overwrite\\)$' "$LC_ERR"
	lc_log_has 'names/nl\\x0aname: file exists \(use -f to overwrite\)$' "$LC_ERR"
	lc_log_has 'names/bad\\xffname: file exists \(use -f to overwrite\)$' "$LC_ERR"

	lc_note "output: what failed is named by its kind (symlinks)"
	mkdir -p "$t/lsrc/links" "$t/ldst/lsrc/links/l1/x" "$t/ldst/lsrc/links/l2/y"
	ln -s ../f "$t/lsrc/links/l1"
	ln -s ../f "$t/lsrc/links/l2"
	echo f >"$t/lsrc/f"
	lc_lanecp_expect 23 '^lanecp: 2 symlinks could not be copied' \
		-r -f "$t/lsrc" "$H:$t/ldst/"
	lc_log_has '/ldst/lsrc/links/l1: exists and is a directory$' "$LC_ERR"

	lc_note "output: 70 'file exists': 5 named, then counted; all named in --json"
	lc_lanecp_expect 23 '^lanecp: and 65 more like it: file exists \(use -f to overwrite\)$' \
		-r --json -l "$t/fail.log" "$t/src" "$H:$t/dst/" >"$d/out.json"
	[[ $(grep -c ': file exists' "$LC_ERR") == 6 ]] ||
		{ lc__show "$LC_ERR"; lc_fail "not 5 'file exists' lines and a count"; }
	lc_log_has '^lanecp: copied 0 files, 0 bytes, failed 70 in ' "$LC_ERR"
	lc_log_has '^lanecp: 70 files could not be copied' "$LC_ERR"
	[[ $(grep -c ': file exists' "$t/fail.log") == 6 ]] ||
		{ lc__show "$t/fail.log"; lc_fail "the log: not 5 'file exists' lines and a count"; }
	python3 - "$d/out.json" "$H:$t/dst/src/" <<'EOF' || lc_fail "--json of 70 failures"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["failed_count"] == 70 and len(j["failed"]) == 70, j
assert j["failed_names_truncated"] is False, j
assert j["failed_like"] == [{"error": "file exists (use -f to overwrite)",
                             "count": 70}], j["failed_like"]
# every one named, each once, with its error
names = sorted(f["path"] for f in j["failed"])
want = [sys.argv[2] + "d%d/f%02d" % (i % 4, i) for i in range(67)]
want += [sys.argv[2] + "names/" + n for n in
         ("\u00fcber-\u00fc", "nl\nname", "bad\ufffdname")]
assert names == sorted(want), (set(names) ^ set(want))
assert all(f["error"] == "file exists (use -f to overwrite)"
           for f in j["failed"]), j["failed"]
EOF

	lc_note "output: -u counts a changed file as updated, a new one as copied"
	printf changed >"$t/src/d1/f01"
	echo new >"$t/src/d2/new"
	lc_lanecp -r -u -v --json "$t/src" "$H:$t/dst/" >"$d/upd.json"
	lc_log_has '^lanecp: copied 1 file, updated 1, 11 bytes, skipped 69 up to date, failed 0 in ' "$LC_ERR"
	lc_log_has '^lanecp: src/d1/f01: updated, 7 bytes$' "$LC_ERR"
	lc_log_has '^lanecp: src/d2/new: done, 4 bytes$' "$LC_ERR"
	python3 - "$d/upd.json" <<'EOF' || lc_fail "--json of an update"
import json, sys
j = json.load(open(sys.argv[1]))
assert (j["files"], j["copied"], j["updated"], j["updated_bytes"],
        j["skipped"], j["failed_count"]) == (2, 1, 1, 7, 69, 0), j
EOF
	lc_note "output: -f counts a file it overwrote as updated"
	lc_lanecp -f "$t/src/d3/f03" "$H:$t/dst/src/d3/"
	lc_log_has '^lanecp: copied 0 files, updated 1, 300 bytes, failed 0 in ' "$LC_ERR"
	cmp "$t/src/d3/f03" "$t/dst/src/d3/f03" || lc_fail "-f did not overwrite d3/f03"
}

# The end of the list (issue 23, SINK_NOMORE): the sink gets the mark
# with SRC_NOMORE, push and pull, and the copy is right; a controller that
# takes the sink for an older one (the test hook LANECP_TEST_OLD_SINK=1)
# sends none, and the copy still ends, as before, at the streams' END.
tc_nomore() {
	local t=$d/nomore
	mkdir -p "$t/src/a" "$t/src/b" "$t/push" "$t/pull" "$t/old"
	for i in $(seq 1 40); do
		head -c $((i * 997)) /dev/urandom >"$t/src/$([[ $((i % 2)) == 0 ]] && echo a || echo b)/f$i"
	done
	lc_note "nomore: push"
	lc_lanecp -r -s 4 -vv "$t/src" "$H:$t/push/"
	same_tree "$t/src" "$t/push/src"
	lc_log_has '\[lctest\] agent: .*received SINK_NOMORE' "$LC_ERR"
	lc_note "nomore: pull"
	lc_lanecp -r -s 4 -vv "$H:$t/src" "$t/pull/"
	same_tree "$t/src" "$t/pull/src"
	lc_log_has '^lanecp: \(.*received SINK_NOMORE' "$LC_ERR"
	if ! "$LANECP" --test-hooks >/dev/null 2>&1; then
		lc_note "nomore: an older sink needs a test-hook build; not run"
		return 0
	fi
	lc_note "nomore: a sink taken for an older one gets none"
	LANECP_TEST_OLD_SINK=1 lc_lanecp -r -s 4 -vv "$t/src" "$H:$t/old/"
	same_tree "$t/src" "$t/old/src"
	lc_log_has 'test hook: the sink is taken for one without SINK_NOMORE' "$LC_ERR"
	lc_log_has 'received SRC_NOMORE' "$LC_ERR"
	! grep -q 'SINK_NOMORE (' "$LC_ERR" ||
		{ lc__show "$LC_ERR"; lc_fail "SINK_NOMORE sent to a sink taken for an older one"; }
}

# ---------------------------------------------------------------- main
ALL="exact forms symlinks perms update owner setid fifo unreadable sparse killed output nomore"
FAILED=()
for c in ${LC_TREE_CASES:-$ALL}; do
	declare -F "tc_$c" >/dev/null || { CASE=$c; lc_fail "no such case"; }
	if [[ ${#NOCAP[@]} == 0 && $c == unreadable ]]; then
		lc_skip "tree: unreadable file: needs root and setpriv --bounding-set"
		continue
	fi
	if [[ $(id -u) != 0 && ( $c == owner || $c == setid ) ]]; then
		lc_skip "tree: $c: needs root at both ends"
		continue
	fi
	CASE=$c
	lc_note "case $c"
	set +e
	(set -e; "tc_$c")
	rc=$?
	set -e
	((rc == 0)) || FAILED+=("$c")
done
CASE=end
((${#FAILED[@]} == 0)) || lc_fail "failed cases: ${FAILED[*]}"
echo PASS
