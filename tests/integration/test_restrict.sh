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

# a second key whose only use is a restricted agent, with the line the
# man page recommends (taken from it, so that doc and test cannot drift;
# SECURITY.md must show the same line)
line=$(sed -n 's/^\(restrict,command="lanecp --agent --restrict \/srv\/backup" ssh-ed25519 AAAA\.\.\.\)$/\1/p' \
	"$LC_SRC_DIR/man/lanecp.1")
[[ $(printf '%s\n' "$line" | wc -l) == 1 && -n $line ]] ||
	lc_fail "man/lanecp.1: no single recommended restrict line"
grep -qF -- "$line" "$LC_SRC_DIR/SECURITY.md" ||
	lc_fail "SECURITY.md does not show the man page's line: $line"
ssh-keygen -q -t ed25519 -N '' -f "$d/cron_key" </dev/null
line=${line/lanecp --agent/$LANECP --agent}
line=${line/\/srv\/backup/$jail}
line=${line/ssh-ed25519 AAAA.../$(cat "$d/cron_key.pub")}
printf '%s\n' "$line" >>"$d/authorized_keys"
lc_log_has "^restrict,command=\"$(lc_re "$LANECP") --agent --restrict $(lc_re "$jail")\" ssh-ed25519 " "$d/authorized_keys"
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
expect_cron 6 "refused by the restricted agent" "$d/local/f" "$H:/tmp/lanecp-evil"
expect_cron 6 "refused by the restricted agent" "$d/local/f" "$H:$d/outside/"
expect_cron 6 "refused by the restricted agent" "$d/local/f" "$H:../outside/"
expect_cron 6 "refused by the restricted agent" "$d/local/f" "$H:sub/../../outside/x"
expect_cron 6 "refused by the restricted agent" "$d/local/f" "$H:dirlink/"
expect_cron 6 "refused by the restricted agent" -f "$d/local/f" "$H:filelink"
expect_cron 6 "refused by the restricted agent" "$H:/etc/passwd" "$d/local/x"
expect_cron 6 "refused by the restricted agent" "$H:../outside/secret" "$d/local/x"
expect_cron 6 "refused by the restricted agent" "$H:dirlink/secret" "$d/local/x"
expect_cron 6 "refused by the restricted agent" "$H:filelink" "$d/local/x"
[[ ! -e /tmp/lanecp-evil && ! -e $d/local/x ]] || lc_fail "something was copied"
[[ $(ls "$d/outside") == secret && $(cat "$d/outside/secret") == "outside secret" ]] ||
	lc_fail "the outside directory was touched"
[[ -L $jail/filelink ]] || lc_fail "the symlink was replaced"

lc_note "restricted agent: ~ and ~user expand first, then are confined"
expect_cron 6 "refused by the restricted agent" "$d/local/f" "$H:~/lanecp-evil"
expect_cron 6 "refused by the restricted agent" "$d/local/f" "$H:~$LC_USER/lanecp-evil"
expect_cron 6 "refused by the restricted agent" "$H:~/.ssh/authorized_keys" "$d/local/x"
expect_cron 6 "refused by the restricted agent" "$H:~root/.profile" "$d/local/x"
home=$(getent passwd "$LC_USER" | cut -d: -f6)
[[ ! -e $home/lanecp-evil && ! -e $d/local/x ]] || lc_fail "~ led outside"

lc_note "the restricted key cannot run anything else, nor forward ports"
rc=0
"$LC_TOOLS_DIR/lc_sshexec" -F "$d/cron_config" "$H" "touch $d/pwned; echo ran" \
	</dev/null >"$d/exec.out" 2>&1 || rc=$?
[[ ! -e $d/pwned ]] || lc_fail "forced command bypassed"
lc_log_lacks '^ran$' "$d/exec.out"
# the SSH data path needs port forwarding, which restrict forbids
expect_cron 8 "the relay cannot connect the data streams: .*administratively prohibited\) \(port forwarding is off: .*restrict.*\); the data path over SSH needs it: use the direct path or -z" \
	--via-ssh "$d/local/f" "$H:sub/via"
# given up at once: no leg retried a refusal that will not change
lc_log_lacks "retrying" "$d/err"
if "$LANECP" --test-hooks >/dev/null 2>&1; then
	# direct and reverse blocked (the test hook answers every data port
	# with a closed one): the automatic fallback ends at SSH, refused
	closed=$(lc_free_port)
	printf '#!/bin/sh\nshift; for p in "$@"; do printf "%%s " %s; done; echo\n' \
		"$closed" >"$d/closed.sh"
	chmod +x "$d/closed.sh"
	LANECP_TEST_PROXY=$d/closed.sh expect_cron 8 \
		"the relay cannot connect the data streams: .*port forwarding is off.*; the data path over SSH needs it" \
		-s 2 "$d/local/f" "$H:sub/fallback"
	lc_log_has "port $closed.*trying another data path" "$d/err"
	[[ ! -e $jail/sub/fallback ]] || lc_fail "fallback copied despite restrict"
else
	lc_skip "the fallback case needs -DLC_TEST_HOOKS=ON"
fi
[[ ! -e $jail/sub/via ]] || lc_fail "--via-ssh copied despite restrict"

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
