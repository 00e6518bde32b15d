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

echo PASS
