#!/usr/bin/env bash
# No remote install (push.h): a remote host without lanecp on its PATH
# gets lanecp's own agent over the SSH connection, into a per-user cache
# that is checked (0700, ours, every parent safe from other users) and
# verified by SHA-256 before each run; a cache another user could swap is
# never used (the agent goes to a private temporary directory), shown
# with a second local user who tries; --no-push, LANECP_NO_PUSH and -T
# keep the push from happening.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

# a remote PATH without lanecp: only an empty dir before the system's
nobin=$(mktemp -d "${TMPDIR:-/tmp}/lanecp-nobin.XXXXXX")
lc_on_exit "rm -rf '$nobin'"
# the push key's authorized_keys line sets XDG_CACHE_HOME (environment=),
# so the remote cache is in the test dir, not in the real home (other
# keys set TMPDIR too)
LC_SSHD_OPTIONS="PermitUserEnvironment XDG_CACHE_HOME,TMPDIR"
lc_sshd_start "$nobin"

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
tools=$LC_TOOLS_DIR
agent=$(dirname "$LANECP")/lanecp-agent
[[ -x $agent ]] || lc_fail "no lanecp-agent next to $LANECP"
mkdir -p "$d/remote" "$d/local" "$d/cache"
head -c 3000000 /dev/urandom >"$d/local/f"
echo small >"$d/remote/r"

ssh-keygen -q -t ed25519 -N '' -f "$d/push_key" </dev/null
printf 'environment="XDG_CACHE_HOME=%s" %s\n' "$d/cache" \
	"$(cat "$d/push_key.pub")" >>"$d/authorized_keys"
lc_ssh_config "$d/push_config" IdentityFile="$d/push_key"
cfg=$d/push_config

if "$tools/lc_sshexec" -F "$cfg" "$H" 'command -v lanecp' >"$d/which" 2>&1; then
	lc_skip "the remote's system PATH has lanecp: $(cat "$d/which")"
	exit 0
fi
"$tools/lc_sshexec" -F "$cfg" "$H" 'echo "$XDG_CACHE_HOME"' >"$d/xdg"
[[ $(cat "$d/xdg") == "$d/cache" ]] ||
	lc_fail "XDG_CACHE_HOME not set for the push key: $(cat "$d/xdg")"

# the cache in the test dir is used only if no other user could swap it
# (push.h): each directory up to / ours or root's, not writable by group
# or others unless sticky
c=$(cd -P "$d" && pwd -P)
while :; do
	read -r m o < <(stat -c '%A %u' "$c")
	if [[ ($o != "$(id -u)" && $o != 0) ||
	    ($m != d????-??-?* && $m != d????????[tT]*) ]]; then
		lc_skip "$c ($m, uid $o) could be written by another user: the agent cache in $d would never be used (set TMPDIR)"
		exit 0
	fi
	[[ $c == / ]] && break
	c=${c%/*}
	c=${c:-/}
done

run() { "$LANECP" -F "$cfg" "$@" 2>"$d/err"; }
expect() {
	local want=$1 pat=$2 rc=0
	shift 2
	run "$@" || rc=$?
	[[ $rc == "$want" ]] || { lc__show "$d/err"; lc_fail "exit $rc, expected $want: $*"; }
	lc_log_has "$pat" "$d/err"
}
# the one version directory under the cache
vdir() {
	local v=("$d"/cache/lanecp/*/)
	[[ ${#v[@]} == 1 && -d ${v[0]} ]] || lc_fail "cache dirs: ${v[*]}"
	printf '%s' "${v[0]%/}"
}
mode() { stat -c %a "$1"; }

lc_note "first copy (push direction) pushes the agent, -v says so"
run -v -f "$d/local/f" "$H:$d/remote/f" || { lc__show "$d/err"; lc_fail "first copy"; }
cmp "$d/local/f" "$d/remote/f" || lc_fail "first copy: data differs"
v=$(vdir)
cached=$v/lanecp
size=$(stat -c %s "$agent")
lc_log_has "pushed agent to [^ ]*:$(lc_re "$cached") \\($size bytes\\)" "$d/err"
cmp "$agent" "$cached" || lc_fail "the cached agent is not lanecp-agent"
[[ $(basename "$v") == *-$(sha256sum <"$agent" | cut -c1-16) ]] ||
	lc_fail "cache dir $v is not named after the agent's sha256"
[[ $(mode "$d/cache/lanecp") == 700 && $(mode "$v") == 700 ]] ||
	lc_fail "cache dir modes: $(mode "$d/cache/lanecp") $(mode "$v")"
[[ $(mode "$cached") == 700 ]] || lc_fail "agent mode $(mode "$cached")"
ls -A "$v" >"$d/ls"
[[ $(cat "$d/ls") == lanecp ]] || lc_fail "left over in $v: $(cat "$d/ls")"
before=$(stat -c '%i %Y %s' "$cached")

lc_note "second copy (pull direction) reuses the cached agent, no push"
run -v -f "$H:$d/remote/r" "$d/local/r" || { lc__show "$d/err"; lc_fail "pull"; }
cmp "$d/remote/r" "$d/local/r" || lc_fail "pull: data differs"
lc_log_has "using cached agent [^ ]*:$(lc_re "$cached")\$" "$d/err"
lc_log_lacks "pushed agent" "$d/err"
[[ $(stat -c '%i %Y %s' "$cached") == "$before" ]] ||
	lc_fail "the cached agent was rewritten: $before -> $(stat -c '%i %Y %s' "$cached")"

lc_note "a tampered cached agent is detected and replaced"
printf '#!/bin/sh\necho tampered >&2; exit 9\n' >"$cached"
run -v -f "$d/local/f" "$H:$d/remote/f2" || { lc__show "$d/err"; lc_fail "tampered"; }
cmp "$d/local/f" "$d/remote/f2" || lc_fail "tampered: data differs"
lc_log_has "cached agent does not match its SHA-256.*replacing it" "$d/err"
lc_log_has "pushed agent to [^ ]*:$(lc_re "$cached") \\($size bytes\\)" "$d/err"
lc_log_lacks "tampered" "$d/err"
cmp "$agent" "$cached" || lc_fail "the tampered agent was not replaced"

lc_note "host to host: both ends remote, both without lanecp"
rm -rf "$d/cache/lanecp"
run -v -f "$H:$d/remote/f" "$H:$d/remote/f3" || { lc__show "$d/err"; lc_fail "host to host"; }
cmp "$d/local/f" "$d/remote/f3" || lc_fail "host to host: data differs"
lc_log_has "pushed agent to" "$d/err"
cmp "$agent" "$(vdir)/lanecp" || lc_fail "host to host: cached agent differs"

lc_note "a remote of another system is refused, nothing is written"
rm -rf "$d/cache/lanecp"
rc=0
LANECP_ARCH="Linux sparc64" run -f "$d/local/f" "$H:$d/remote/f4" || rc=$?
[[ $rc == 6 ]] || { lc__show "$d/err"; lc_fail "other arch: exit $rc, expected 6"; }
lc_log_has "its system \\(Linux [^)]*\\) is not this lanecp's \\(Linux sparc64\\).*-T PATH" "$d/err"
[[ ! -e $d/remote/f4 ]] || lc_fail "other arch: the target was written"
[[ -z $(find "$d/cache/lanecp" -type f) ]] || lc_fail "other arch: an agent was written"

lc_note "--no-push, LANECP_NO_PUSH and -T never push"
rm -rf "$d/cache/lanecp"
expect 13 "cannot run the remote agent 'lanecp' \\(exit 127[^)]*\\).*-T PATH.*--no-push" \
	--no-push -f "$d/local/f" "$H:$d/remote/f5"
LANECP_NO_PUSH=1 expect 13 "cannot run the remote agent 'lanecp' \\(exit 127[^)]*\\).*LANECP_NO_PUSH" \
	-f "$d/local/f" "$H:$d/remote/f5"
LANECP_NO_PUSH=maybe expect 2 "LANECP_NO_PUSH=maybe: want 1" \
	-f "$d/local/f" "$H:$d/remote/f5"
expect 13 "cannot run the remote agent 'lanecp' \\(exit 127[^)]*\\)[:;] install lanecp there" \
	-T lanecp -f "$d/local/f" "$H:$d/remote/f5"
[[ ! -e $d/remote/f5 ]] || lc_fail "no push: the target was written"
[[ ! -e $d/cache/lanecp ]] || lc_fail "no push: the cache was made"
# LANECP_NO_PUSH=0 is off: the push happens
LANECP_NO_PUSH=0 run -f "$d/local/f" "$H:$d/remote/f5" || { lc__show "$d/err"; lc_fail "LANECP_NO_PUSH=0"; }
cmp "$agent" "$(vdir)/lanecp" || lc_fail "LANECP_NO_PUSH=0: no agent pushed"

# private OUT NAME DIR: the copy that wrote $d/err (to OUT) pushed the
# agent to a private temporary directory, gone now, because DIR was not
# safe, and did not use the cache
private() {
	local tmp
	lc_log_has "cannot cache the agent: $(lc_re "$3") is not safe.*private temporary directory" "$d/err"
	lc_log_has "pushed agent to [^ ]*:/[^ ]*/lanecp \\($size bytes, private, removed\\)" "$d/err"
	lc_log_lacks "using cached agent" "$d/err"
	tmp=$(sed -n 's/.*pushed agent to [^ ]*:\(\/[^ ]*\)\/lanecp (.*/\1/p' "$d/err")
	[[ -n $tmp && ! -e $tmp ]] || lc_fail "$2: the private directory '$tmp' is still there"
	cmp "$d/local/f" "$1" || lc_fail "$2: data differs"
}

lc_note "a cache dir writable by group or others is not used (private push, warned)"
v=$(vdir)
before=$(stat -c '%i %Y %s' "$v/lanecp")
chmod g+w "$d/cache/lanecp"
run -v -f "$d/local/f" "$H:$d/remote/f6" || { lc__show "$d/err"; lc_fail "g+w cache"; }
private "$d/remote/f6" "g+w cache" "$d/cache/lanecp"
chmod 700 "$d/cache/lanecp"
chmod o+w "$v"
run -v -f "$d/local/f" "$H:$d/remote/f6b" || { lc__show "$d/err"; lc_fail "o+w cache"; }
private "$d/remote/f6b" "o+w cache" "$v"
chmod 700 "$v"
[[ $(stat -c '%i %Y %s' "$v/lanecp") == "$before" ]] ||
	lc_fail "unsafe cache: the cached agent was touched"
run -v -f "$d/local/f" "$H:$d/remote/f6c" || { lc__show "$d/err"; lc_fail "after chmod 700"; }
cmp "$d/local/f" "$d/remote/f6c" || lc_fail "after chmod 700: data differs"
lc_log_has "using cached agent" "$d/err"

# xkey NAME VAR=VALUE...: a key whose sessions have these variables set,
# and its client config $d/config_NAME
xkey() {
	local name=$1 opts= kv
	shift
	for kv; do
		opts+="${opts:+,}environment=\"$kv\""
	done
	ssh-keygen -q -t ed25519 -N '' -f "$d/key_$name" </dev/null
	printf '%s %s\n' "$opts" "$(cat "$d/key_$name.pub")" >>"$d/authorized_keys"
	lc_ssh_config "$d/config_$name" IdentityFile="$d/key_$name"
}

lc_note "no safe cache and no safe private directory: refused in one line, nothing left"
mkdir "$d/open"
chmod 777 "$d/open"
xkey open XDG_CACHE_HOME="$d/open/cache" TMPDIR="$d/open"
rc=0
"$LANECP" -F "$d/config_open" -f "$d/local/f" "$H:$d/remote/f6d" 2>"$d/err" || rc=$?
[[ $rc == 6 ]] || { lc__show "$d/err"; lc_fail "no safe directory: exit $rc, expected 6"; }
lc_log_has "cannot cache the agent: $(lc_re "$d/open") is not safe \(.*\), and mktemp -d made no safe private directory either: install lanecp there, or use -T PATH or --no-push" "$d/err"
[[ $(wc -l <"$d/err") == 1 ]] || { lc__show "$d/err"; lc_fail "no safe directory: more than one line"; }
[[ -z $(ls -A "$d/open") ]] || lc_fail "no safe directory: left in $d/open: $(ls -A "$d/open")"
[[ ! -e $d/remote/f6d ]] || lc_fail "no safe directory: the target was written"

lc_note "a symlinked cache dir is not used"
mv "$v" "$d/elsewhere"
ln -s "$d/elsewhere" "$v"
run -v -f "$d/local/f" "$H:$d/remote/f7" || { lc__show "$d/err"; lc_fail "symlinked cache"; }
private "$d/remote/f7" "symlinked cache" "$v"
rm "$v"
mv "$d/elsewhere" "$v"

# The issue's attack by a second local user (a uid without an account:
# setpriv needs none), at the exact moment instead of a race: an "ls"
# first on the remote PATH does the other user's move right after the
# boot script's "ls -ldn" of the cache's version directory, when armed
# ($nobin/arm: that directory, then R and F).  The move: rename the
# victim's directory R away, put their own tree in its place with a FIFO
# at F, where the agent was; feed the agent's real bytes to the hash
# through it and put their own program at F before the hash sees the
# end.  Their program marks that it ran, then runs the real agent, so
# that the copy succeeds as if nothing happened.
two_users() {
	local ou=42420 X ver
	while getent passwd "$ou" >/dev/null || getent group "$ou" >/dev/null; do
		ou=$((ou + 1))
	done
	X=$(mktemp -d "${TMPDIR:-/tmp}/lanecp-push2.XXXXXX")
	lc_on_exit "[[ -s '$X/stash/feeder' ]] && kill -KILL \$(cat '$X/stash/feeder'); rm -rf '$X' '$nobin/ls' '$nobin/arm'"
	X=$(cd "$X" && pwd -P)
	chmod 755 "$X"
	ver=$(basename "$v")
	mkdir -m 1777 "$X/stash"
	cp "$agent" "$X/stash/genuine"
	chmod 755 "$X/stash/genuine"
	printf '#!/bin/sh\nid -u >%s/stash/ran\nexec %s/stash/genuine "$@"\n' \
		"$X" "$X" >"$X/stash/evil"
	chmod 755 "$X/stash/evil"
	chown "$ou:$ou" "$X/stash/evil"
	cat >"$X/attack" <<-ATTACK
	#!/bin/sh
	exec setpriv --reuid=$ou --regid=$ou --clear-groups -- /bin/sh -c '
	mv "\$1" "\$1.victim" || exit 0
	mkdir -p "\${2%/*}" && mkfifo "\$2" || exit 0
	( cat $X/stash/genuine; mv -f $X/stash/evil "\$2" ) >"\$2" 2>/dev/null </dev/null &
	echo \$! >$X/stash/feeder' sh "\$@"
	ATTACK
	cat >"$nobin/ls" <<-LS
	#!/bin/sh
	$(command -v ls) "\$@"
	rc=\$?
	if [ "\$1" = -ldn ] && [ -f $nobin/arm ] && [ "\$2" = "\$(head -n 1 $nobin/arm)" ]; then
	set -- \$(tail -n +2 $nobin/arm)
	rm -f $nobin/arm
	/bin/sh $X/attack "\$@" </dev/null >/dev/null 2>&1
	fi
	exit \$rc
	LS
	chmod 755 "$X/attack" "$nobin/ls"

	# seed DIR: the victim's cache in DIR, as an earlier copy left it
	seed() {
		mkdir -p "$1/lanecp/$ver"
		cp "$agent" "$1/lanecp/$ver/lanecp"
		chmod 700 "$1/lanecp" "$1/lanecp/$ver" "$1/lanecp/$ver/lanecp"
	}
	# swapped NAME BASE R: a copy with XDG_CACHE_HOME=BASE while the
	# other user tries to swap R; their program must not run
	swapped() {
		local f=$d/remote/two_$1
		printf '%s\n%s\n%s\n' "$2/lanecp/$ver" "$3" \
			"$2/lanecp/$ver/lanecp" >"$nobin/arm"
		"$LANECP" -F "$d/config_$1" -v -f "$d/local/f" "$H:$f" 2>"$d/err" ||
			{ lc__show "$d/err"; lc_fail "$1: the copy failed"; }
		[[ ! -e $X/stash/ran ]] ||
			lc_fail "$1: the other user's program ran as uid $(cat "$X/stash/ran"): the cache was swapped between check and exec"
		cmp "$d/local/f" "$f" || lc_fail "$1: data differs"
	}

	lc_note "two users: the cache's parent is writable by all (not sticky), like a shared scratch"
	mkdir "$X/shared"
	chmod 777 "$X/shared"
	mkdir -m 700 "$X/shared/cache"
	seed "$X/shared/cache"
	xkey shared XDG_CACHE_HOME="$X/shared/cache"
	swapped shared "$X/shared/cache" "$X/shared/cache"
	private "$d/remote/two_shared" "shared parent" "$X/shared"
	cmp "$agent" "$X/shared/cache/lanecp/$ver/lanecp" ||
		lc_fail "shared parent: the cache was touched"
	rm -f "$nobin/arm"

	lc_note "two users: the cache's base belongs to the other user (made first)"
	mkdir -m 755 "$X/theirs"
	seed "$X/theirs"
	chown "$ou:$ou" "$X/theirs"
	xkey theirs XDG_CACHE_HOME="$X/theirs"
	swapped theirs "$X/theirs" "$X/theirs/lanecp"
	private "$d/remote/two_theirs" "their base" "$X/theirs"
	rm -f "$nobin/arm"

	lc_note "two users: a sticky parent owned by root, like /tmp: cached, and their move fails"
	mkdir "$X/sticky"
	chmod 1777 "$X/sticky"
	xkey sticky XDG_CACHE_HOME="$X/sticky/cache"
	"$LANECP" -F "$d/config_sticky" -v -f "$d/local/f" "$H:$d/remote/two_sticky0" 2>"$d/err" ||
		{ lc__show "$d/err"; lc_fail "sticky: first copy"; }
	lc_log_has "pushed agent to [^ ]*:$(lc_re "$X/sticky/cache/lanecp/$ver/lanecp") \\($size bytes\\)" "$d/err"
	swapped sticky "$X/sticky/cache" "$X/sticky/cache"
	[[ ! -e $nobin/arm ]] || lc_fail "sticky: the other user's move was never tried"
	lc_log_has "using cached agent [^ ]*:$(lc_re "$X/sticky/cache/lanecp/$ver/lanecp")\$" "$d/err"
	lc_log_lacks "pushed agent|cannot cache" "$d/err"
	rm -f "$nobin/ls"
}

lc_note "a cache another local user could swap is never used: they try (two users)"
if [[ $(id -u) != 0 ]] || ! command -v setpriv >/dev/null; then
	lc_skip "two users: needs root and setpriv to act as a second user"
else
	two_users
fi

lc_note "PATH's lanecp still comes first"
ln -s "$LANECP" "$nobin/lanecp"
rm -rf "$d/cache/lanecp"
run -v -f "$d/local/f" "$H:$d/remote/f8" || { lc__show "$d/err"; lc_fail "PATH lanecp"; }
cmp "$d/local/f" "$d/remote/f8" || lc_fail "PATH lanecp: data differs"
lc_log_lacks "pushed agent|cached agent" "$d/err"
[[ ! -e $d/cache/lanecp ]] || lc_fail "PATH lanecp: the cache was made"
