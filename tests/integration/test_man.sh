#!/usr/bin/env bash
#
# The manual (man/lanecp.1) stays true to the code:
#   - every option of `lanecp --help` (long and short) has its own .It
#     entry, and every .It option entry is an option --help knows;
#   - the option table (cmd/options.c) has one row per option of --help;
#   - every value of enum lc_exit (cmd/lanecp.c) is in EXIT STATUS;
#   - every variable the product code reads with getenv() is in
#     ENVIRONMENT, and ENVIRONMENT names no variable the code does not read;
#   - FILES, EXAMPLES and SEE ALSO have what they must, and every option
#     used in an example is one lanecp accepts;
#   - `mandoc -T lint` finds nothing and `man --warnings -l` renders it
#     with no warning (SKIPPED where mandoc or man is not installed;
#     scripts/deps.sh test installs both).
# No sshd needed.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

MAN=$LC_SRC_DIR/man/lanecp.1
CLI=$LC_SRC_DIR/cmd/lanecp.c
OPTS=$LC_SRC_DIR/cmd/options.c
T=$(mktemp -d)
lc_on_exit rm -rf "$T"

"$LANECP" --help >"$T/help"

# section NAME: the lines of .Sh NAME up to the next .Sh
section() {
	awk -v want=".Sh $1" '
		/^\.Sh / { on = ($0 == want); next }
		on { print }' "$MAN"
}

# long and short options from --help ("  -s, --streams N   ...",
# "      --owner   ...", "  -c[N], --compress[=N]   ...")
longs=() shorts=()
while IFS= read -r line; do
	if [[ $line =~ ^\ +(-([A-Za-z0-9])(\[[^]]*\])?,\ +)?--([a-z0-9][a-z0-9-]*) ]]; then
		longs+=("${BASH_REMATCH[4]}")
		[[ -n ${BASH_REMATCH[2]} ]] && shorts+=("${BASH_REMATCH[2]}")
	fi
done <"$T/help"
[[ ${#longs[@]} -gt 20 ]] || { lc__show "$T/help"; lc_fail "found only ${#longs[@]} long options in --help"; }
# the table in cmd/options.c has one row per option: as many as --help shows
rows=$(sed -n '/^const struct lc_opt lc_opts\[\] = {/,/^};/p' "$OPTS" |
	grep -cE '^[[:space:]]*\{ ?"[a-z0-9-]+", ' || true)
[[ $rows == "${#longs[@]}" ]] ||
	lc_fail "cmd/options.c's option table has $rows rows, --help shows ${#longs[@]} long options"

lc_note "every option of --help has an .It entry in the man page"
grep -E '^\.It ' "$MAN" >"$T/items"
for o in "${longs[@]}"; do
	grep -Eq "(^| )Fl Fl $(lc_re "$o")( |\$)" "$T/items" ||
		lc_fail "--$o (in --help) has no .It entry in man/lanecp.1"
done
for o in "${shorts[@]}"; do
	grep -Eq "^\.It Fl $o( |\$)" "$T/items" ||
		lc_fail "-$o (in --help) has no .It entry in man/lanecp.1"
done

lc_note "every option entry of the man page is an option of --help"
# the .It lines of the option lists, not those of EXIT STATUS etc.
grep -oE '^\.It Fl (Fl )?[A-Za-z0-9][a-z0-9-]*' "$T/items" |
	sed 's/^\.It Fl //' >"$T/documented"
while IFS= read -r o; do
	if [[ $o == "Fl "* ]]; then
		o=${o#Fl }
		grep -Eq -- "--$(lc_re "$o")( |\\[|=|\$)" "$T/help" ||
			lc_fail "man/lanecp.1 documents --$o, which --help does not have"
	else
		grep -Eq -- "^ +-$o( |,|\\[)" "$T/help" ||
			lc_fail "man/lanecp.1 documents -$o, which --help does not have"
	fi
done <"$T/documented"

lc_note "every exit status of enum lc_exit is in EXIT STATUS"
codes=$(sed -n '/^enum lc_exit {/,/^};/p' "$CLI" | grep -oE '= [0-9]+' |
	tr -dc '0-9\n')
[[ $(wc -w <<<"$codes") -ge 10 ]] || lc_fail "enum lc_exit not found in $CLI"
section "EXIT STATUS" >"$T/exit"
for c in $codes; do
	grep -Eq "^\.It $c( |\$)" "$T/exit" ||
		lc_fail "exit status $c (enum lc_exit) is not in EXIT STATUS"
done
grep -Eq '^\.It 130 , 143$' "$T/exit" || lc_fail "EXIT STATUS lacks 130, 143"

lc_note "ENVIRONMENT lists exactly the variables the product code reads"
# src/ctl/testhook_ctl.c is left out of product builds
# (src/CMakeLists.txt), so its LANECP_TEST_* variables are not the
# user's business; the hidden settings (lc_setting_uint/str("NAME", ...),
# src/base/settings.h) read LANECP_NAME in every build, so they are.
find "$LC_SRC_DIR/src" "$LC_SRC_DIR/cmd" -name '*.c' ! -name 'testhook*.c' \
	-exec grep -ohE '(secure_)?getenv\("[A-Za-z_][A-Za-z0-9_]*"\)' {} + |
	sed -E 's/.*\("(.*)"\)/\1/' | sort -u >"$T/read"
find "$LC_SRC_DIR/src" -name '*.c' -exec grep -ohE \
	'lc_setting_(uint|str)\("[A-Z0-9_]+"' {} + |
	sed -E 's/.*\("(.*)"/LANECP_\1/' | sort -u >"$T/settings"
[[ $(wc -l <"$T/settings") -ge 5 ]] ||
	lc_fail "found fewer than 5 hidden settings (lc_setting_*) in src/"
sort -u -o "$T/read" "$T/read" "$T/settings"
[[ -s $T/read ]] || lc_fail "found no getenv() in src/ and cmd/"
section ENVIRONMENT | grep -E '^\.It ' | grep -oE 'Ev [A-Za-z_][A-Za-z0-9_]*' |
	sed 's/^Ev //' | sort -u >"$T/env" || true
while IFS= read -r v; do
	grep -qx -- "$v" "$T/env" ||
		lc_fail "the code reads \$$v (getenv) but ENVIRONMENT does not list it"
done <"$T/read"
while IFS= read -r v; do
	grep -qx -- "$v" "$T/read" ||
		lc_fail "ENVIRONMENT lists \$$v, which no getenv() in src/ or cmd/ reads"
done <"$T/env"

lc_note "FILES names the part files, the agent cache, the log and the ssh files"
section FILES >"$T/files"
for want in '\.NAME\.lanecp-part' 'XDG_CACHE_HOME:-(~|\$HOME)/\.cache\}/lanecp/' \
	'Fl l' '~/\.ssh/config' '/etc/ssh/ssh_config' '~/\.ssh/known_hosts' \
	'/etc/ssh/ssh_known_hosts' 'authorized_keys'; do
	grep -Eq -- "$want" "$T/files" || lc_fail "FILES lacks /$want/"
done

lc_note "EXAMPLES has what it must, with options lanecp accepts"
section EXAMPLES >"$T/examples"
for want in '^\.Dl \$ lanecp -s 16 -w 256k [^ ]+ host:/' \
	'^\.Dl \$ lanecp -P 2 host:' \
	'^\.Dl \$ lanecp a:/[^ ]+ b:/' \
	'^\.Dl \$ zfs send pool@snap \| lanecp - host:/backup/snap\.zfs$' \
	'^restrict,command="lanecp --agent --restrict /srv/backup" ssh-' \
	'^[0-9*]+ [0-9*]+ \* \* \* lanecp '; do
	grep -Eq -- "$want" "$T/examples" || lc_fail "EXAMPLES lacks /$want/"
done
# every option on an example's lanecp command line is one of --help's:
# on a .Dl line what follows "lanecp" up to a pipe or redirection (less
# single-quoted words: the commands of -N have options of their own), in
# a literal display (the crontab and authorized_keys lines) every word
# that starts with a dash
{
	grep -E '^\.Dl ' "$T/examples" | sed "s/'[^']*'//g" |
		grep -oE 'lanecp( [^|>]*)?' || true
	awk '/^\.Bd -literal/ { on = 1; next } /^\.Ed/ { on = 0 } on' \
		"$T/examples"
} | tr ' ' '\n' | sed 's/"$//' | grep -E '^-' | sort -u >"$T/used" || true
[[ $(wc -l <"$T/used") -ge 10 ]] || lc_fail "found few options in EXAMPLES"
while IFS= read -r o; do
	case $o in
	-) ;;	# a pipe
	--*) grep -Eq -- "--$(lc_re "${o#--}")( |\$)" "$T/help" ||
		lc_fail "EXAMPLES uses $o, which --help does not have" ;;
	*) for ((i = 1; i < ${#o}; i++)); do
		grep -Eq -- "^ +-${o:i:1}( |,|\\[)" "$T/help" ||
			lc_fail "EXAMPLES uses -${o:i:1} (in $o), which --help does not have"
	   done ;;
	esac
done <"$T/used"

lc_note "SEE ALSO"
section "SEE ALSO" >"$T/seealso"
for want in 'scp 1' 'rsync 1' 'sftp 1' 'ssh 1' 'ssh_config 5' 'sshd 8'; do
	grep -Eq "^\.Xr $want( |\$)" "$T/seealso" || lc_fail "SEE ALSO lacks $want"
done

lc_note "mandoc -T lint finds nothing"
if command -v mandoc >/dev/null; then
	rc=0
	mandoc -T lint "$MAN" >"$T/lint" 2>&1 || rc=$?
	# mandoc also looks each .Xr up in the machine's mandoc.db; what it
	# says about that database (Debian keeps none) is about this
	# machine, not the page, and is the only output let through.
	grep -vE '^mandoc: outdated mandoc\.db lacks [^ ]+ entry, run makewhatis ' \
		"$T/lint" >"$T/lint.page" || true
	if [[ $rc != 0 || -s $T/lint.page ]]; then
		lc__show "$T/lint"
		lc_fail "mandoc -T lint: exit $rc"
	fi
else
	lc_skip "mandoc is not installed (scripts/deps.sh test installs it)"
fi

lc_note "man --warnings -l renders it without a warning"
if command -v man >/dev/null && command -v groff >/dev/null; then
	rc=0
	MANWIDTH=80 man --warnings -l "$MAN" >"$T/rendered" 2>"$T/warn" || rc=$?
	if [[ $rc != 0 || -s $T/warn ]]; then
		lc__show "$T/warn"
		lc_fail "man -l: exit $rc, or warnings"
	fi
	grep -q 'EXIT STATUS' "$T/rendered" || lc_fail "man -l rendered no EXIT STATUS"
else
	lc_skip "man (man-db) or groff is not installed (scripts/deps.sh test installs them)"
fi

echo PASS
