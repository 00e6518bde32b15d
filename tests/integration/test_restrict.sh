#!/usr/bin/env bash
# Path safety: a restricted agent (--restrict DIR as a forced command for
# a cron key) serves only DIR, and a sink never lets names from the peer
# escape the target directory, whatever the other side sends.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
jail=$d/jail
mkdir -p "$jail/sub" "$d/outside" "$d/local"
echo "outside secret" >"$d/outside/secret"
echo "inside" >"$jail/inside.txt"
ln -s "$d/outside" "$jail/dirlink"
ln -s "$d/outside/secret" "$jail/filelink"
head -c 200000 /dev/urandom >"$d/local/f"

# a second key whose only use is a restricted agent
ssh-keygen -q -t ed25519 -N '' -f "$d/cron_key" </dev/null
printf 'command="%s --agent --restrict %s",no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding %s\n' \
	"$LANECP" "$jail" "$(cat "$d/cron_key.pub")" >>"$d/authorized_keys"
lc_ssh_config "$d/cron_config" IdentityFile="$d/cron_key"
cron() { "$LANECP" -F "$d/cron_config" "$@" 2>"$d/err"; }
expect_cron() {
	local want=$1 pat=$2 rc=0
	shift 2
	cron "$@" || rc=$?
	[[ $rc == "$want" ]] || { lc__show "$d/err"; lc_fail "exit $rc, expected $want: $*"; }
	lc_log_has "$pat" "$d/err"
}

lc_note "restricted agent: paths inside DIR work (relative and absolute)"
cron "$d/local/f" "$H:sub/"
cmp "$d/local/f" "$jail/sub/f" || lc_fail "relative push"
cron "$d/local/f" "$H:$jail/abs.bin"
cmp "$d/local/f" "$jail/abs.bin" || lc_fail "absolute push"
cron "$H:inside.txt" "$d/local/inside.txt"
cmp "$jail/inside.txt" "$d/local/inside.txt" || lc_fail "pull"

lc_note "restricted agent: absolute, .. and symlink escapes are refused"
expect_cron 6 "outside $(lc_re "$jail")" "$d/local/f" "$H:/tmp/lanecp-evil"
expect_cron 6 "outside $(lc_re "$jail")" "$d/local/f" "$H:$d/outside/"
expect_cron 6 "refused, it leads outside" "$d/local/f" "$H:../outside/"
expect_cron 6 "refused, it leads outside" "$d/local/f" "$H:sub/../../outside/x"
expect_cron 6 "refused, it leads outside" "$d/local/f" "$H:dirlink/"
expect_cron 6 "refused, it leads outside" -f "$d/local/f" "$H:filelink"
expect_cron 6 "outside $(lc_re "$jail")" "$H:/etc/passwd" "$d/local/x"
expect_cron 6 "refused, it leads outside" "$H:../outside/secret" "$d/local/x"
expect_cron 6 "refused, it leads outside" "$H:dirlink/secret" "$d/local/x"
expect_cron 6 "refused, it leads outside" "$H:filelink" "$d/local/x"
[[ ! -e /tmp/lanecp-evil && ! -e $d/local/x ]] || lc_fail "something was copied"
[[ $(ls "$d/outside") == secret && $(cat "$d/outside/secret") == "outside secret" ]] ||
	lc_fail "the outside directory was touched"
[[ -L $jail/filelink ]] || lc_fail "the symlink was replaced"

lc_note "the restricted key cannot run anything else"
rc=0
"$LC_TOOLS_DIR/lc_sshexec" -F "$d/cron_config" "$H" 'touch /tmp/lanecp-pwned' \
	</dev/null >/dev/null 2>&1 || rc=$?
[[ ! -e /tmp/lanecp-pwned ]] || lc_fail "forced command bypassed"

lc_note "a hostile source cannot name files outside the target directory"
# The controller refuses any name but the one asked for before the FILE
# reaches the sink (exit 7); the sink's own confinement of peer names is
# the second line of defence behind it.  The name reaches the remote
# evil agent through the -T command line (the remote environment is
# sshd's, not ours).
for name in ../evil /tmp/lanecp-evil2 . .. a/b; do
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" \
		-T "LC_EVIL_NAME=$(printf '%q' "$name") $LC_TOOLS_DIR/lc_evil_agent" \
		"$H:whatever" "$d/local/" 2>"$d/err" || rc=$?
	[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "evil name $name: exit $rc"; }
	lc_log_has "source announced \"$(lc_re "$name")\" which was not asked for \(asked for \"whatever\"\)" "$d/err"
done
[[ ! -e $d/evil && ! -e /tmp/lanecp-evil2 ]] || lc_fail "hostile name was written"

echo PASS
