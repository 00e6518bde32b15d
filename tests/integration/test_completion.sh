#!/usr/bin/env bash
#
# Bash completion (completion/lanecp.bash), sourced in this non-interactive
# bash: each case sets COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT as
# bash would (split at ':' and '=', COMP_WORDBREAKS), calls _lanecp and
# checks COMPREPLY.
#   - every long option of --help is offered, and whether an option takes
#     the next word as its argument agrees with cmd/options.c's table;
#   - option arguments: files for FILE, the algorithms for -E, hosts for -J,
#     an operand's names for --also TARGET, nothing for numbers;
#     --opt=value;
#   - local files (escaped, directories with /), hosts from the -F config
#     and its known_hosts, user@host;
#   - host:path listed by the fixture sshd over ssh, with the -F of the
#     line being completed (without it the host is unknown: nothing).
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

command -v ssh >/dev/null || { echo "SKIP: no ssh client"; exit 77; }
lc_sshd_start
T=$LC_SSHD_DIR
H=$LC_SSH_HOST
CFG=$LC_SSH_CONFIG
# a home of our own: no developer's ~/.ssh/config or known_hosts leaks in
export HOME=$T/home
mkdir -p "$HOME"
# shellcheck source=../../completion/lanecp.bash
. "$LC_SRC_DIR/completion/lanecp.bash"
[[ $(complete -p lanecp) == "complete -F _lanecp lanecp" ]] ||
	lc_fail "the completion is not registered for lanecp: $(complete -p lanecp)"

# comp WORD...: complete the last WORD, or with CW=N the Nth (words as
# bash splits them: "host" ":" "/path"); the replies, one per line, go to
# $T/reply.
comp() {
	local l='' w p='' i=0 point=0 cw=${CW:-$(($# - 1))}
	for w in "$@"; do
		[[ -n $l && $w != [:=]* && $p != *[:=] ]] && l+=" "
		l+=$w
		p=$w
		((i++ == cw)) && point=${#l}
	done
	COMP_WORDS=("$@")
	COMP_CWORD=$cw
	COMP_LINE=$l
	COMP_POINT=$point
	COMPREPLY=()
	_lanecp
	if [[ ${#COMPREPLY[@]} -gt 0 ]]; then
		printf '%s\n' "${COMPREPLY[@]}" | sort >"$T/reply"
	else
		: >"$T/reply"
	fi
	COMP_WORDS=()
}
# want LINE...: the replies are exactly these
want() {
	printf '%s\n' "$@" | sort >"$T/want"
	[[ $# -gt 0 ]] || : >"$T/want"
	if ! cmp -s "$T/want" "$T/reply"; then
		lc__show "$T/want"
		lc__show "$T/reply"
		lc_fail "completion of: ${COMP_LINE-}"
	fi
}
has() {
	grep -qxF -- "$1" "$T/reply" || {
		lc__show "$T/reply"
		lc_fail "completion lacks '$1'"
	}
}
lacks() {
	! grep -qxF -- "$1" "$T/reply" || {
		lc__show "$T/reply"
		lc_fail "completion offers '$1'"
	}
}

L=$LANECP
"$L" --help >"$T/help"

lc_note "every long option of --help is offered after --"
mapfile -t longs < <(grep -oE '^ +(-[A-Za-z0-9](\[[^]]*\])?, +)?--[a-z0-9][a-z0-9-]*' \
	"$T/help" | grep -oE -- '--[a-z0-9-]+$')
[[ ${#longs[@]} -gt 20 ]] || lc_fail "found only ${#longs[@]} long options in --help"
comp "$L" --
for o in "${longs[@]}"; do
	has "$o "
done
[[ $(wc -l <"$T/reply") == "${#longs[@]}" ]] || lc_fail "offers more than --help has"
comp "$L" --ssh-c
want "--ssh-config "
comp "$L" -
has "-s "
has "-F "
has "--streams "

# directory for local files; no host starts with "zz"
mkdir -p "$T/w/zz dir" "$T/w/zzsub"
: >"$T/w/zz file"
: >"$T/w/zz'quote"
cd "$T/w"

lc_note "whether an option takes the next word agrees with cmd/options.c"
# rows "{"name", 'x' or 0, NULL or "ARG", ... [, .optional = 1]}": after an
# option without an argument (or with an optional one) the next word is a
# source, and host names are offered; after one with an argument, never
# "host:" (but after --also, whose TARGET is one).
sed -n '/^const struct lc_opt lc_opts\[\] = {/,/^};/p' \
	"$LC_SRC_DIR/cmd/options.c" | tr '\n\t' '  ' |
	grep -oE '\{ ?"[a-z0-9-]+", [^}]*\}' >"$T/rows"
[[ $(wc -l <"$T/rows") == "${#longs[@]}" ]] ||
	lc_fail "cmd/options.c has $(wc -l <"$T/rows") option rows, --help ${#longs[@]}"
n=0
while IFS= read -r row; do
	[[ $row =~ ^\{\ ?\"([a-z0-9-]+)\",\ [^,]+,\ +(NULL|\"[^\"]*\"),.*\}$ ]] ||
		lc_fail "cannot parse option row: $row"
	name=${BASH_REMATCH[1]} arg=${BASH_REMATCH[2]} optional=0
	[[ $row == *".optional = 1"* ]] && optional=1
	comp "$L" -F "$CFG" "--$name" lct
	# (--also TARGET is a target: hosts too)
	if [[ $arg == NULL || $optional == 1 || $arg == '"TARGET"' ]]; then
		has "$H:"
	else
		lacks "$H:"
	fi
	n=$((n + 1))
done <"$T/rows"
[[ $n -gt 20 ]] || lc_fail "checked only $n options"

lc_note "option arguments"
comp "$L" -F "$CFG" -s ''
want
comp "$L" -F "$CFG" --shard a
want "auto "
comp "$L" -F "$CFG" --shard=''
want "auto "
comp "$L" -F "$CFG" --shard 1
want
comp "$L" --window zz
want
comp "$L" -F zz
want "zz\\ dir/" "zz\\ file " "zz\\'quote " "zzsub/"
comp "$L" --ssh-config = zz
want "zz\\ dir/" "zz\\ file " "zz\\'quote " "zzsub/"
comp "$L" -rF zz
want "zz\\ dir/" "zz\\ file " "zz\\'quote " "zzsub/"
comp "$L" -l "zz\\ f"
want "zz\\ file "
comp "$L" -E ''
want "sha256 " "crc32 " "adler32 "
for a in sha256 crc32 adler32; do
	grep -Eq -- "--checksum .*$a" "$T/help" || lc_fail "-E offers $a, --help does not name it"
done
comp "$L" --checksum = cr
want "crc32 "
comp "$L" -F "$CFG" -J lct
want "$H "
comp "$L" -F "$CFG" -J "gw,lct"
want "gw,$H "

lc_note "local files and hosts"
comp "$L" -F "$CFG" zz
want "zz\\ dir/" "zz\\ file " "zz\\'quote " "zzsub/"
comp "$L" -F "$CFG" "zz\\ d"
want "zz\\ dir/"
comp "$L" -F "$CFG" zzsub/
want
comp "$L" -F "$CFG" lc
want "$H:"
# known_hosts (the config's UserKnownHostsFile) has [127.0.0.1]:PORT
comp "$L" -F "$CFG" 127.0.0
want "127.0.0.1:"
comp "$L" --ssh-config = "$CFG" "me@lct"
want "me@$H:"
# a wildcard Host and a hashed known_hosts entry are not host names
{
	cat "$CFG"
	printf 'Host *.example wild?\n  User x\nHost alias1 alias2\n  HostName 127.0.0.1\n'
} >"$T/cfg2"
printf '|1|c2FsdHNhbHRzYWx0c2FsdHNhbHQ=|aGFzaGhhc2hoYXNoaGFzaGhhc2g= ssh-ed25519 AAAA\n' \
	>>"$LC_KNOWN_HOSTS"
comp "$L" -F "$T/cfg2" ''
has "$H:"
has "alias1:"
has "alias2:"
has "127.0.0.1:"
grep -qE '[*?|]' "$T/reply" && { lc__show "$T/reply"; lc_fail "a pattern or hash offered as a host"; }
# no -F: ~/.ssh/config (our empty home has none)
comp "$L" lct
want

lc_note "host:path over ssh, with the -F of the command line"
R=$T/remote
mkdir -p "$R/a dir" "$R/asub/deep"
: >"$R/a file"
: >"$R/a'q"
: >"$R/b"
: >"$R/.hidden"
comp "$L" -F "$CFG" "$H" : "$R/a"
want "$R/a\\ dir/" "$R/a\\ file " "$R/a\\'q " "$R/asub/"
comp "$L" -F "$CFG" "$H" : "$R/a\\ f"
want "$R/a\\ file "
comp "$L" -F "$CFG" "$H" : "$R/asub/"
want "$R/asub/deep/"
comp "$L" -F "$CFG" "$H" : "$R/."
want "$R/.hidden "
comp "$L" -F "$CFG" "$H" : "$R/nothing"
want
# user@host, --ssh-config=FILE, and the word to complete before it
CW=3 comp "$L" "$LC_USER@$H" : "$R/b" --ssh-config = "$CFG"
want "$R/b "
comp "$L" --ssh-config = "$CFG" "$LC_USER@$H" : "$R/b"
want "$R/b "
# --also TARGET: as the last argument, a host or its names
comp "$L" -F "$CFG" "$R/b" "$H" : "$R/" --also lct
want "$H:"
comp "$L" -F "$CFG" "$R/b" "$H" : "$R/" --also "$H" : "$R/asu"
want "$R/asub/"
# remote to remote: the second argument completes too
comp "$L" -F "$CFG" "$H" : "$R/b" "$H" : "$R/asu"
want "$R/asub/"
# right after the colon (COMP_WORDS' last word is ":") readline replaces
# the empty text after it: the replies are the bare names of the login
# directory (whatever the fixture user's home holds)
printf 'x\n' >"$R/.probe"
comp "$L" -F "$CFG" "$H" : "$R/.pr"
want "$R/.probe "
comp "$L" -F "$CFG" "$H" :
if grep -E '^(:|/|'"$H"')' "$T/reply"; then
	lc_fail "a reply after host: keeps the host or colon"
fi
# the same right after "=": the files of the current directory, bare
comp "$L" --ssh-config = ''
want "zz\\ dir/" "zz\\ file " "zz\\'quote " "zzsub/"
# without -F the host is not known to ssh: nothing, and no hang (BatchMode)
comp "$L" "$H" : "$R/a"
want

lc_note "host names and file names that hold shell code complete as text, never run"
# compgen -W expands the words it is given as the shell would: a Host
# line, an Include file, the -F file or a known_hosts entry with $(...) or
# backticks must not run anything on TAB.  Every would-be command creates
# a marker file, under $T/mark or (a file name cannot hold a /) named mk.*
# in the directory it would run in; none may appear.  (No blank inside: a
# Host line splits there.)
M=$T/mark
mkdir -p "$M"
rhome=$(getent passwd "$LC_USER" | cut -d: -f6)
# no_marker WHAT: fail if any marker exists
no_marker() {
	local found
	found=$({ find "$M" -mindepth 1
		find "$T/w2" "$rhome" -maxdepth 1 -name 'mk.*'; } 2>/dev/null || true)
	if [[ -n $found ]]; then
		printf '%s\n' "$found" >&2
		lc_fail "completion ($1) ran a command embedded in a name"
	fi
}
cat >"$T/evil_inc" <<EOF
Host inc-\$(>$M/inc)x incbq-\`>$M/incbq\`x
EOF
cat >"$T/evil_kh" <<EOF
kh-\$(>$M/kh)x ssh-ed25519 AAAA
[khp-\`>$M/khp\`x]:2222,khplain ssh-ed25519 AAAA
@cert-authority ca-\$(>$M/ca)x ssh-ed25519 AAAA
EOF
cat >"$T/evil_cfg" <<EOF
Host build-\$(>$M/host)x bq-\`>$M/hostbq\`x var-\${HOME}x plain-evil
  HostName 127.0.0.1
Include $T/evil_inc
UserKnownHostsFile $T/evil_kh
EOF
mkdir -p "$HOME/.ssh" "$T/w2"
cp "$T/evil_cfg" "$HOME/.ssh/config"
cd "$T/w2"
# local names with the same tricks, a glob, quotes and a blank
for f in 'f$(>mk.file)x' 'f`>mk.filebq`x' 'f*' 'f[ab]' 'f"dq' 'f x' 'f${HOME}'; do
	: >"$T/w2/$f"
done
# evil_checks HOW [-F FILE...]: the poisoned names are offered escaped,
# plain names still complete, and no marker appears
evil_checks() {
	local how=$1
	shift
	comp "$L" "$@" ''
	no_marker "$how"
	has 'build-\$\(\>'"$M"'/host\)x:'
	has 'bq-\`\>'"$M"'/hostbq\`x:'
	has 'var-\$\{HOME\}x:'
	has 'plain-evil:'
	has 'inc-\$\(\>'"$M"'/inc\)x:'
	has 'incbq-\`\>'"$M"'/incbq\`x:'
	has 'kh-\$\(\>'"$M"'/kh\)x:'
	has 'khp-\`\>'"$M"'/khp\`x:'
	has 'khplain:'
	has 'f\$\(\>mk.file\)x '
	has 'f\`\>mk.filebq\`x '
	has 'f\* '
	has 'f\[ab\] '
	has 'f\"dq '
	has 'f\ x '
	has 'f\$\{HOME\} '
	comp "$L" "$@" pla
	want 'plain-evil:'
	comp "$L" "$@" 'me@bui'
	want 'me@build-\$\(\>'"$M"'/host\)x:'
	comp "$L" "$@" khp
	want 'khp-\`\>'"$M"'/khp\`x:' 'khplain:'
	comp "$L" "$@" 'f\$'
	want 'f\$\(\>mk.file\)x ' 'f\$\{HOME\} '
	comp "$L" "$@" -J 'gw,'
	has 'gw,build-\$\(\>'"$M"'/host\)x '
	has 'gw,plain-evil '
	comp "$L" "$@" -J inc
	want 'inc-\$\(\>'"$M"'/inc\)x ' 'incbq-\`\>'"$M"'/incbq\`x '
	comp "$L" "$@" --jump = bq
	want 'bq-\`\>'"$M"'/hostbq\`x '
	no_marker "$how"
}
evil_checks "~/.ssh/config"
rm "$HOME/.ssh/config"
evil_checks "-F" -F "$T/evil_cfg"
evil_checks "--ssh-config=" --ssh-config = "$T/evil_cfg"
# the remote lists names that hold shell code: offered escaped, nothing
# runs (here or on the remote), nor for a typed prefix with $(...)
for f in 'r$(>mk.rem)x' 'r`>mk.rembq`x' 'r*' 'r"dq'; do
	: >"$R/$f"
done
comp "$L" -F "$CFG" "$H" : "$R/r"
no_marker "host:path"
want "$R/"'r\$\(\>mk.rem\)x ' "$R/"'r\`\>mk.rembq\`x ' "$R/"'r\* ' "$R/"'r\"dq '
comp "$L" -F "$CFG" "$H" : "$R/"'r\$\(\>mk.typed\)'
want
comp "$L" -F "$CFG" "$H" : "$R/"'r\`'
want "$R/"'r\`\>mk.rembq\`x '
no_marker "host:path"
cd "$T/w"

echo PASS
