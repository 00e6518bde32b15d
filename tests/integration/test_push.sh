#!/usr/bin/env bash
# No remote install (push.h): a remote host without lanecp on its PATH
# gets lanecp's own agent over the SSH connection, into a per-user cache
# that is checked (0700, ours) and verified by SHA-256 before each run;
# --no-push, LANECP_NO_PUSH and -T keep it from happening.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_need_test_hooks

# a remote PATH without lanecp: only an empty dir before the system's
nobin=$(mktemp -d "${TMPDIR:-/tmp}/lanecp-nobin.XXXXXX")
lc_on_exit "rm -rf '$nobin'"
# the push key's authorized_keys line sets XDG_CACHE_HOME (environment=),
# so the remote cache is in the test dir, not in the real home
LC_SSHD_OPTIONS="PermitUserEnvironment XDG_CACHE_HOME"
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
LANECP_TEST_ARCH="Linux sparc64" run -f "$d/local/f" "$H:$d/remote/f4" || rc=$?
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

lc_note "a cache dir writable by group or others is refused"
v=$(vdir)
chmod g+w "$d/cache/lanecp"
expect 6 "refusing the agent cache $(lc_re "$d/cache/lanecp"): it must be" \
	-f "$d/local/f" "$H:$d/remote/f6"
chmod 700 "$d/cache/lanecp"
chmod o+w "$v"
expect 6 "refusing the agent cache $(lc_re "$v"): it must be" \
	-f "$d/local/f" "$H:$d/remote/f6"
chmod 700 "$v"
[[ ! -e $d/remote/f6 ]] || lc_fail "unsafe cache: the target was written"
run -f "$d/local/f" "$H:$d/remote/f6" || { lc__show "$d/err"; lc_fail "after chmod 700"; }
cmp "$d/local/f" "$d/remote/f6" || lc_fail "after chmod 700: data differs"

lc_note "a symlinked cache dir is refused"
mv "$v" "$d/elsewhere"
ln -s "$d/elsewhere" "$v"
expect 6 "refusing the agent cache $(lc_re "$v"): it must be" \
	-f "$d/local/f" "$H:$d/remote/f7"
rm "$v"
mv "$d/elsewhere" "$v"

lc_note "PATH's lanecp still comes first"
ln -s "$LANECP" "$nobin/lanecp"
rm -rf "$d/cache/lanecp"
run -v -f "$d/local/f" "$H:$d/remote/f8" || { lc__show "$d/err"; lc_fail "PATH lanecp"; }
cmp "$d/local/f" "$d/remote/f8" || lc_fail "PATH lanecp: data differs"
lc_log_lacks "pushed agent|cached agent" "$d/err"
[[ ! -e $d/cache/lanecp ]] || lc_fail "PATH lanecp: the cache was made"
