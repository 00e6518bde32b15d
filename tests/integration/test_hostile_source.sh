#!/usr/bin/env bash
# A hostile remote source in a pull (scp CVE-2019-6111 class): the source
# announces files that were not asked for, wrong names, ids out of order,
# sizes past the limit, two files for one request, set-id modes, names
# and error text that are not UTF-8.  The controller checks every FILE
# against the request before relaying it: the copy fails with exit 7 and
# one line naming the host and what was wrong, and nothing but (at most)
# the asked-for file appears in the target directory.  Set-id and sticky
# bits are dropped; --json stays valid JSON.
#
# Trees (-r): names with "..", empty or "." components, absolute names,
# names outside the requested root or under a file root, entries in a
# directory never announced or under a symlink, names out of order or
# twice, ids beyond the credit window and FILE_FAIL outside the request are
# refused the same way, with a canary check that nothing outside the
# target changed.  Symlink targets are data: absolute or "../../.." targets
# are made as they are and never followed.  A push through the wrapper
# checks the sink's own refusals (names the controller would never relay,
# links planted in the target).
#
# The evil source is tests/tools/lc_evil_agent wrapping the real agent
# (LC_EVIL_REAL), so everything it does not rewrite is a real copy.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote"
head -c 300000 /dev/urandom >"$d/remote/db.xb"
n=0

# evil VAR=value... -- lanecp-args...: pull through the evil source into
# a fresh directory $t; exit status in $rc, stderr in $d/err.
evil() {
	local -a vars=()
	while [[ $1 != -- ]]; do
		vars+=("$(printf '%q' "$1")")
		shift
	done
	shift
	n=$((n + 1))
	t=$d/t$n
	mkdir "$t"
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" \
		-T "${vars[*]} LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_agent")" \
		"$@" "$H:$d/remote/db.xb" "$t/" >"$d/out" 2>"$d/err" || rc=$?
}

# only the asked-for file (or its part file) may be in $t
only_asked() {
	local f
	for f in "$t"/* "$t"/.[!.]*; do
		[[ -e $f ]] || continue
		case ${f##*/} in
		db.xb | .db.xb.lanecp-part) ;;
		*) ls -la "$t" >&2; lc_fail "$1: $f appeared in the target" ;;
		esac
	done
}

# refused CASE PATTERN VAR=value...: exit 7, one error line matching
# PATTERN, nothing else written.
refused() {
	local what=$1 pat=$2
	shift 2
	evil "$@" --
	[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "$what: exit $rc, expected 7"; }
	lc_log_has "^lanecp: ([^ ]*@)?$(lc_re "$H"): $pat" "$d/err"
	# one line; a data connection the abort cut short in its handshake
	# may add the acceptor's warning (timing), nothing else
	[[ $(grep -cv '^lanecp: accept: dropped data connection' "$d/err") == 1 ]] ||
		{ lc__show "$d/err"; lc_fail "$what: not one line"; }
	only_asked "$what"
}

lc_note "the real agent through the evil wrapper, unchanged: a normal copy"
evil --
[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "plain copy: exit $rc"; }
cmp "$d/remote/db.xb" "$t/db.xb" || lc_fail "plain copy differs"

lc_note "an extra file beside the asked one (.bashrc) is refused, never relayed"
refused extra 'source announced "\.bashrc" which was not asked for \(asked for "db\.xb"\)' \
	LC_EVIL_EXTRA=.bashrc
lc_note "a wrong name"
refused "wrong name" 'source announced "evil\.sh" which was not asked for \(asked for "db\.xb"\)' \
	LC_EVIL_NAME=evil.sh
lc_note "an authorized_keys-style name"
refused "ssh name" 'source announced "\.ssh/authorized_keys" which was not asked for' \
	LC_EVIL_NAME=.ssh/authorized_keys
lc_note "ids out of order and huge"
refused "id 2 first" 'source announced "db\.xb" as file 2, expected file 1' LC_EVIL_ID=2
refused "id 2^31" 'source announced "db\.xb" as file 2147483648, expected file 1' \
	LC_EVIL_ID=2147483648
refused "id UINT32_MAX" 'source announced "db\.xb" as file 4294967295, expected file 1' \
	LC_EVIL_ID=4294967295
lc_note "two FILEs for one request"
refused "two files" 'source announced "db\.xb" twice \(file 2, after file 1\)' \
	LC_EVIL_EXTRA=db.xb
lc_note "a file announced after the request was answered"
refused "late file" 'source announced "\.bashrc" which was not asked for \(every request was already answered\)' \
	LC_EVIL_LATE=.bashrc
lc_note "a listing that does not count what was announced"
refused "listed 2" 'source listed 2 files \([0-9]+ bytes\) for "db\.xb" but announced 1' \
	LC_EVIL_LISTED_FILES=2
lc_note "sizes beyond 2^63 - 1 (the wire decoder's limit)"
for size in 9223372036854775808 18446744073709551614 18446744073709551615; do
	refused "size $size" 'unexpected or malformed FILE from the source agent' \
		LC_EVIL_SIZE=$size
done

lc_note "set-id and sticky bits from the source are not applied"
for mode in 4755 2755 1777 6777; do
	evil LC_EVIL_MODE=$mode -- -f
	[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "mode $mode: exit $rc"; }
	cmp "$d/remote/db.xb" "$t/db.xb" || lc_fail "mode $mode: copy differs"
	got=$(stat -c %a "$t/db.xb")
	[[ ! -u $t/db.xb && ! -g $t/db.xb && ! -k $t/db.xb && ${#got} -le 3 ]] ||
		lc_fail "mode $mode from the source: target has mode $got"
done

lc_note "--json stays valid JSON with a non-UTF-8 name from the source"
json_ok() {
	python3 -c '
import json, sys
doc = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
want = sys.argv[1]
assert doc["ok"] is False, doc
assert want in doc["error"], (want, doc["error"])
' "$1" <"$d/out" || { cat -v "$d/out" >&2; lc_fail "--json output: $2"; }
}
evil LC_EVIL_NAME_HEX=ff01 -- -e --json
[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "name ff01: exit $rc"; }
lc_log_has 'source announced "\\xff\\x01" which was not asked for' "$d/err"
json_ok $'source announced "\ufffd\x01" which was not asked for' "name ff01"
only_asked "name ff01"

lc_note "--json stays valid JSON with a non-UTF-8 error message from the source"
evil LC_EVIL_ERROR_HEX=ff01c0afeda0801b5b324a22 -- --json
[[ $rc == 6 ]] || { lc__show "$d/err"; lc_fail "error text: exit $rc"; }
json_ok $'\ufffd\x01\ufffd\ufffd\ufffd\ufffd\ufffd\x1b[2J"' "error text"

# ---- trees (lanecp -r, protocol 2) ----
# The remote tree $z/src: src/a, src/b, src/d/e, src/link -> a.  Canaries
# outside every target: $z/canary (a file) and $z/canarydir/keep.  Each
# case pulls into a fresh $z/tN; nothing under $z but $tN may change.
z=$d/zone
mkdir -p "$z/src/d" "$z/canarydir"
echo a >"$z/src/a"
head -c 70000 /dev/urandom >"$z/src/b"
echo e >"$z/src/d/e"
ln -s a "$z/src/link"
echo canary >"$z/canary"
echo keep >"$z/canarydir/keep"
cp "$d/remote/db.xb" "$z/one.xb"

# tevil SRC VAR=value... -- lanecp-args...: pull $H:SRC with -r through
# the evil source into a fresh $t (under $z); exit status in $rc.
tevil() {
	local src=$1
	local -a vars=()
	shift
	while [[ $1 != -- ]]; do
		vars+=("$(printf '%q' "$1")")
		shift
	done
	shift
	n=$((n + 1))
	t=$z/t$n
	mkdir "$t"
	touch "$d/stamp"
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" \
		-T "${vars[*]} LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_agent")" \
		-r "$@" "$H:$src" "$t/" >"$d/out" 2>"$d/err" || rc=$?
}

# nothing outside $t changed: the canaries are intact, nothing under $z
# but $t is newer than the case, and none of the given paths exists
outside_clean() {
	local what=$1 p changed
	shift
	[[ $(cat "$z/canary") == canary ]] || lc_fail "$what: canary changed"
	[[ $(ls -A "$z/canarydir") == keep && $(cat "$z/canarydir/keep") == keep ]] ||
		{ ls -la "$z/canarydir" >&2; lc_fail "$what: canarydir changed"; }
	changed=$(find "$z" -path "$t" -prune -o -newer "$d/stamp" -print)
	[[ -z $changed ]] || lc_fail "$what: changed outside the target: $changed"
	for p in "$z/evil" "$d/evil" /etc/evil /evil "$@"; do
		[[ ! -e $p && ! -L $p ]] || lc_fail "$what: $p exists"
	done
}

# only names under $t/ROOT (or ROOT itself, or its part file) in $t
only_under() {
	local what=$1 root=$2 f
	for f in "$t"/* "$t"/.[!.]*; do
		[[ -e $f || -L $f ]] || continue
		case ${f##*/} in
		"$root" | ".$root.lanecp-part") ;;
		*) ls -laR "$t" >&2; lc_fail "$what: $f appeared in the target" ;;
		esac
	done
}

# trefused CASE SRC PATTERN VAR=value... [-- lanecp-args]: exit 7, one
# error line matching PATTERN, nothing outside $t, only SRC's name in $t.
trefused() {
	local what=$1 src=$2 pat=$3
	local -a vars=()
	shift 3
	while [[ $# -gt 0 && $1 != -- ]]; do
		vars+=("$1")
		shift
	done
	[[ $# -gt 0 ]] && shift
	tevil "$src" "${vars[@]}" -- "$@"
	[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "$what: exit $rc, expected 7"; }
	lc_log_has "^lanecp: ([^ ]*@)?$(lc_re "$H"): $pat" "$d/err"
	[[ $(grep -cv '^lanecp: accept: dropped data connection' "$d/err") == 1 ]] ||
		{ lc__show "$d/err"; lc_fail "$what: not one line"; }
	outside_clean "$what"
	only_under "$what" "${src##*/}"
}

lc_note "tree: the real agent through the evil wrapper, unchanged: a normal copy"
tevil "$z/src" --
[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "plain tree: exit $rc"; }
diff -r --no-dereference "$z/src" "$t/src" || lc_fail "plain tree differs"
outside_clean "plain tree"

lc_note "tree: a name with a \"..\" component"
trefused "dotdot" "$z/src" 'source announced "src/\.\./\.\./evil" which was not asked for \(asked for "src"\)' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=src/../../evil
trefused "dotdot last" "$z/src" 'source announced "src/d/\.\." which was not asked for' \
	LC_EVIL_AT=src/d/e LC_EVIL_NAME=src/d/..
lc_note "tree: an absolute name"
trefused "absolute" "$z/src" 'source announced "/etc/evil" which was not asked for \(asked for "src"\)' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=/etc/evil
trefused "absolute root" "$z/src" 'source announced "/" which was not asked for' \
	LC_EVIL_AT=src LC_EVIL_NAME=/
lc_note "tree: a name outside the requested root"
trefused "other root" "$z/src" 'source announced "other/x" which was not asked for \(asked for "src"\)' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=other/x
trefused "root prefix" "$z/src" 'source announced "srcx/a" which was not asked for \(asked for "src"\)' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=srcx/a
trefused "other root first" "$z/src" 'source announced "other" which was not asked for \(asked for "src"\)' \
	LC_EVIL_AT=src LC_EVIL_NAME=other
outside_clean "other root first" "$t/other"
lc_note "tree: a name under a file root"
trefused "under a file" "$z/one.xb" 'source announced "one\.xb/x" which was not asked for \(asked for "one\.xb"\)' \
	LC_EVIL_AT=one.xb LC_EVIL_EXTRA=one.xb/x
lc_note "tree: an entry whose directory was never announced"
trefused "no dir" "$z/src" 'source announced "src/nodir/x" in a directory it did not announce' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=src/nodir/x
outside_clean "no dir" "$t/src/nodir"
trefused "no dir, deep" "$z/src" 'source announced "src/d/e/f" in a directory it did not announce' \
	LC_EVIL_AT=src/d/e LC_EVIL_EXTRA=src/d/e/f
lc_note "tree: a file under a symlink's name (the link points outside)"
trefused "under a link" "$z/src" 'source announced "src/link/keep" in a directory it did not announce' \
	LC_EVIL_AT=src/link "LC_EVIL_LINK=$z/canarydir" LC_EVIL_EXTRA=src/link/keep
trefused "dir under a link" "$z/src" 'source announced "src/link/x" in a directory it did not announce' \
	LC_EVIL_AT=src/link "LC_EVIL_LINK=$z/canarydir" LC_EVIL_EXTRA=src/link/x LC_EVIL_EXTRA_KIND=2
lc_note "tree: names out of order, the same name twice"
trefused "out of order" "$z/src" 'source announced "src/0" out of order \(after "src/a"\)' \
	LC_EVIL_AT=src/b LC_EVIL_NAME=src/0
trefused "twice" "$z/src" 'source announced "src/a" out of order \(after "src/a"\)' \
	LC_EVIL_AT=src/a LC_EVIL_EXTRA=src/a
trefused "dir twice" "$z/src" 'source announced "src/d" out of order \(after "src/d"\)' \
	LC_EVIL_AT=src/d LC_EVIL_EXTRA=src/d LC_EVIL_EXTRA_KIND=2
trefused "root twice" "$z/src" 'source announced "src" twice' \
	LC_EVIL_AT=src LC_EVIL_EXTRA=src LC_EVIL_EXTRA_KIND=2
lc_note "tree: empty and \".\" components"
trefused "empty component" "$z/src" 'source announced "src//x" which was not asked for' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=src//x
trefused "dot component" "$z/src" 'source announced "src/\./x" which was not asked for' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=src/./x
trefused "trailing slash" "$z/src" 'source announced "src/a/" which was not asked for' \
	LC_EVIL_AT=src/a LC_EVIL_NAME=src/a/
# The first credit is 512 ids; the local sink's TARGET_OK widens it to its
# grant (at most 4096) at once, most often before the flood arrives.
lc_note "tree: ids beyond the credit window (513 before TARGET_OK, the grant + 1 after it)"
trefused "flood" "$z/src" 'source announced file [0-9]+ beyond its window \(ids below [0-9]+\)' \
	LC_EVIL_AT=src LC_EVIL_FLOOD=4200
lc_note "tree: FILE_FAIL naming something outside the request"
trefused "fail other" "$z/src" 'source reported "other/x", which was not asked for' \
	LC_EVIL_AT=src LC_EVIL_FAIL=other/x
trefused "fail prefix" "$z/src" 'source reported "srcx", which was not asked for' \
	LC_EVIL_AT=src LC_EVIL_FAIL=srcx
trefused "fail root" "$z/src" 'source reported "src", which was not asked for' \
	LC_EVIL_AT=src LC_EVIL_FAIL=src
trefused "fail dotdot" "$z/src" 'unexpected or malformed FILE_FAIL from the source agent' \
	LC_EVIL_AT=src LC_EVIL_FAIL=src/../../etc/passwd
trefused "fail under a file" "$z/one.xb" 'source reported "one\.xb/x", which was not asked for' \
	LC_EVIL_AT=one.xb LC_EVIL_FAIL=one.xb/x
# without -r a FILE_FAIL is never expected
evil LC_EVIL_FAIL=db.xb/x --
[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "fail without -r: exit $rc"; }
lc_log_has 'unexpected FILE_FAIL from the source' "$d/err"
only_asked "fail without -r"
lc_note "tree: a FILE_FAIL within the request is a partial copy (exit 23)"
# (the terminal line is the source's own text; --json names the path)
tevil "$z/src" LC_EVIL_AT=src LC_EVIL_FAIL=src/zz -- --json
[[ $rc == 23 ]] || { lc__show "$d/err"; lc_fail "fail within: exit $rc, expected 23"; }
lc_log_has "evil: cannot read it" "$d/err"
python3 -c '
import json, sys
doc = json.load(sys.stdin)
f = doc["failed"]
assert len(f) == 1 and f[0]["path"].endswith(":" + sys.argv[1]), f
assert "evil: cannot read it" in f[0]["error"], f
' "$z/src/zz" <"$d/out" || { cat "$d/out" >&2; lc_fail "fail within: --json"; }
cmp "$z/src/b" "$t/src/b" || lc_fail "fail within: src/b differs"
outside_clean "fail within"

lc_note "tree: symlink targets are data: absolute, ../../.., outside; made as is, never followed"
for target in "$z/canarydir" "$z/canary" /etc/evil ../../.. ../../../canary /; do
	tevil "$z/src" LC_EVIL_AT=src/link "LC_EVIL_LINK=$target" --
	[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "link $target: exit $rc"; }
	[[ -L $t/src/link && $(readlink "$t/src/link") == "$target" ]] ||
		lc_fail "link $target: made as $(readlink "$t/src/link" || echo '(none)')"
	cmp "$z/src/b" "$t/src/b" || lc_fail "link $target: src/b differs"
	cmp "$z/src/d/e" "$t/src/d/e" || lc_fail "link $target: src/d/e differs"
	outside_clean "link $target"
	# again over the copy with -f and -u: the link is replaced or kept,
	# never written through
	for opt in -f -u; do
		touch "$d/stamp"
		rc=0
		"$LANECP" -F "$LC_SSH_CONFIG" \
			-T "LC_EVIL_AT=src/link LC_EVIL_LINK=$(printf '%q' "$target") LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_agent")" \
			-r $opt "$H:$z/src" "$t/" >"$d/out" 2>"$d/err" || rc=$?
		[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "link $target $opt: exit $rc"; }
		[[ $(readlink "$t/src/link") == "$target" ]] || lc_fail "link $target $opt: changed"
		outside_clean "link $target $opt"
	done
done
lc_note "tree: links planted in the target where the tree has a file and a dir (-f): replaced, not followed"
n=$((n + 1))
t=$z/t$n
mkdir -p "$t/src"
ln -s "$z/canary" "$t/src/a"
ln -s "$z/canarydir" "$t/src/d"
ln -s "$z/canarydir/keep" "$t/src/b"
touch "$d/stamp"
rc=0
"$LANECP" -F "$LC_SSH_CONFIG" -r -f "$H:$z/src" "$t/" >"$d/out" 2>"$d/err" || rc=$?
[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "planted links: exit $rc"; }
[[ ! -L $t/src/a && ! -L $t/src/b && ! -L $t/src/d && -d $t/src/d ]] ||
	{ ls -laR "$t" >&2; lc_fail "planted links: not replaced"; }
diff -r --no-dereference "$z/src" "$t/src" || lc_fail "planted links: tree differs"
outside_clean "planted links"

# ---- the sink's own checks (a push: the evil wrapper is the sink's
# agent and renames the FILE the controller relays to it) ----
# sunsafe CASE NAME: the real sink refuses NAME, nothing outside $t.
sunsafe() {
	local what=$1 name=$2
	n=$((n + 1))
	t=$z/t$n
	mkdir "$t"
	touch "$d/stamp"
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" \
		-T "LC_EVIL_SINK_AT=src/a LC_EVIL_SINK_NAME=$(printf '%q' "$name") LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_agent")" \
		-r "$z/src" "$H:$t/" >"$d/out" 2>"$d/err" || rc=$?
	[[ $rc == 6 || $rc == 7 ]] || { lc__show "$d/err"; lc_fail "sink $what: exit $rc, expected 6 or 7"; }
	lc_log_has "refusing unsafe file name from peer: $(lc_re "$name")" "$d/err"
	outside_clean "sink $what"
	only_under "sink $what" src
}
lc_note "sink: unsafe names relayed to it are refused by the sink itself"
sunsafe "empty component" src//x
sunsafe "dot component" src/./x
sunsafe "dotdot" src/../../evil
sunsafe "absolute" /etc/evil
sunsafe "trailing slash" src/a/
sunsafe "dot" .
sunsafe "dotdot alone" ..

# spush CASE VAR=value... -- lanecp-args: push $z/src into $t (prepared
# by the caller) through the evil sink wrapper; exit status in $rc.
spush() {
	local what=$1
	local -a vars=()
	shift
	while [[ $1 != -- ]]; do
		vars+=("$(printf '%q' "$1")")
		shift
	done
	shift
	touch "$d/stamp"
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" \
		-T "${vars[*]} LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_agent")" \
		-r "$@" "$z/src" "$H:$t/" >"$d/out" 2>"$d/err" || rc=$?
}
lc_note "sink: a name through a link planted in the target is never followed"
for opt in "" -f; do
	n=$((n + 1))
	t=$z/t$n
	mkdir -p "$t/src"
	ln -s "$z/canarydir" "$t/src/link"
	spush "through a link $opt" LC_EVIL_SINK_AT=src/d/e LC_EVIL_SINK_NAME=src/link/keep -- $opt
	[[ $rc != 0 ]] || { lc__show "$d/err"; lc_fail "sink through a link $opt: exit 0"; }
	lc_log_has 'src/link' "$d/err"
	outside_clean "sink through a link $opt"
	[[ -L $t/src/link ]] || lc_fail "sink through a link $opt: the planted link is gone"
	# the target root itself a link to the outside
	n=$((n + 1))
	t=$z/t$n
	mkdir "$t"
	ln -s "$z/canarydir" "$t/src"
	spush "root link $opt" -- $opt
	if [[ $opt == -f ]]; then
		[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "sink root link -f: exit $rc"; }
		[[ -d $t/src && ! -L $t/src ]] || lc_fail "sink root link -f: not replaced"
		diff -r --no-dereference "$z/src" "$t/src" || lc_fail "sink root link -f: tree differs"
	else
		[[ $rc != 0 ]] || { lc__show "$d/err"; lc_fail "sink root link: exit 0"; }
	fi
	outside_clean "sink root link $opt"
done

echo PASS
