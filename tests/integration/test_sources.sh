#!/usr/bin/env bash
# Several sources to one target directory, like scp (issue #11, first
# part): push and pull, existing and missing target directories, and the
# refusals (target not a directory, missing parent, two sources with one
# name, -E ALG=HEX for several files, an unreadable source).
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/local/sub" "$d/remote"
head -c $((3 << 20)) /dev/urandom >"$d/local/a"	# several blocks
head -c 1 /dev/urandom >"$d/local/b"
: >"$d/local/c"					# empty
head -c 70000 /dev/urandom >"$d/local/sub/a"

# same DIR NAME...: DIR/NAME is byte for byte local/NAME
same() {
	local dir=$1 n
	shift
	for n in "$@"; do
		cmp "$d/local/$n" "$dir/$n" || lc_fail "$dir/$n differs"
	done
}
# only DIR NAME...: DIR holds exactly these names (no part files)
only() {
	local dir=$1 got want
	shift
	got=$(ls -A "$dir" | sort | tr '\n' ' ')
	want=
	(($#)) && want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	[[ $got == "$want" ]] || lc_fail "$dir holds '$got', want '$want'"
}

lc_note "push three files into an existing directory"
mkdir "$d/remote/in"
lc_lanecp --json "$d/local/a" "$d/local/b" "$d/local/c" \
	"$H:$d/remote/in/" >"$d/json"
same "$d/remote/in" a b c
only "$d/remote/in" a b c
python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["files"] == 3 and j["ok"], j' \
	<"$d/json" || lc_fail "--json does not count three files"

lc_note "a missing target directory is made when its parent exists"
lc_lanecp "$d/local/a" "$d/local/b" "$H:$d/remote/new"
same "$d/remote/new" a b
only "$d/remote/new" a b
lc_lanecp "$d/local/a" "$H:$d/remote/new1/"
same "$d/remote/new1" a

lc_note "pull three files"
mkdir "$d/back"
lc_lanecp "$H:$d/local/a" "$H:$d/local/b" "$H:$d/local/c" "$d/back"
same "$d/back" a b c
only "$d/back" a b c

lc_note "existing files need -f, each"
lc_lanecp_expect 6 "$(lc_re "$d/remote/in/a"): file exists" \
	"$d/local/a" "$d/local/b" "$H:$d/remote/in/"
lc_lanecp -f "$d/local/a" "$d/local/b" "$H:$d/remote/in/"
same "$d/remote/in" a b

lc_note "refusals: nothing is written"
echo old >"$d/remote/file"
lc_lanecp_expect 2 "with several sources or -r the target must be a directory: $(lc_re "$d/remote/file")" \
	-f "$d/local/a" "$d/local/b" "$H:$d/remote/file"
[[ $(cat "$d/remote/file") == old ]] || lc_fail "file target changed"
lc_lanecp_expect 6 "$(lc_re "$d/remote/no/deeper"): no such directory" \
	"$d/local/a" "$d/local/b" "$H:$d/remote/no/deeper"
[[ ! -e $d/remote/no ]] || lc_fail "a missing parent was made"
mkdir "$d/remote/dup"
lc_lanecp_expect 2 "$(lc_re "$d/local/a") and $(lc_re "$d/local/sub/a") would both be copied to \"a\"" \
	"$d/local/a" "$d/local/sub/a" "$H:$d/remote/dup/"
only "$d/remote/dup"
sum=$(sha256sum "$d/local/a" | cut -c1-64)
lc_lanecp_expect 2 "-E ALG=HEX checks one file; 2 sources were given" \
	-E "sha256=$sum" "$d/local/a" "$d/local/b" "$H:$d/remote/dup/"
lc_note "several arguments: the message says what is wrong"
# a stray last argument naming a local file (pull, and mixed hosts)
lc_lanecp_expect 2 "with several sources the target must be a directory: $(lc_re "$d/local/b")\$" \
	"$H:$d/local/a" "$H:$d/local/c" "$d/local/b"
lc_lanecp_expect 2 "with several sources the target must be a directory: $(lc_re "$d/local/b")\$" \
	"$d/local/a" "$H:$d/local/c" "$d/local/b"
# a remote file as the target of several sources (push): its sink says so
lc_lanecp_expect 2 "with several sources or -r the target must be a directory: $(lc_re "$d/remote/file")\$" \
	"$d/local/a" "$d/local/b" "$H:$d/remote/file"
[[ $(cat "$d/remote/file") == old ]] || lc_fail "file target changed"
# sources on two hosts, the target a directory (or remote)
lc_lanecp_expect 2 "$(lc_re "$H:$d/local/a") and $(lc_re "$d/local/b") are on different hosts: several sources must be on one host \(the last argument, $(lc_re "$d/back/"), is the target\)" \
	"$H:$d/local/a" "$d/local/b" "$d/back/"
lc_lanecp_expect 2 "$(lc_re "$d/local/a") and $(lc_re "$H:$d/local/b") are on different hosts" \
	"$d/local/a" "$H:$d/local/b" "$H:$d/remote/"
for f in "$LC_ERR"; do
	[[ $(grep -c . "$f") == 1 ]] || { lc__show "$f"; lc_fail "not one line"; }
done
lc_log_lacks "same host" "$LC_ERR"
lc_lanecp_expect 5 "$(lc_re "$d/local/nope"): No such file or directory" \
	"$d/local/a" "$d/local/nope" "$d/local/b" "$H:$d/remote/dup/"
only "$d/remote/dup"

echo PASS
