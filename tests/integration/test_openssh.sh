#!/usr/bin/env bash
#
# The OpenSSH transport (--ssh, -S, LANECP_SSH; issue 22 item 1) against
# real sshd servers configured as sites configure them:
#  * an RSA user key against a default OpenSSH sshd: libssh2 1.10 signs
#    only with SHA-1 ssh-rsa, which OpenSSH 8.8+ refuses: lanecp goes
#    over ssh by itself (issue 22 item 2; -v and --json "ssh_why" say
#    why), and with no ssh on the PATH fails (exit 3) saying so; with and
#    without --ssh, push, pull and host to host (both ends through ssh,
#    the pushed agent included) copy byte-identical, and --json says
#    "ssh":"openssh" (the libssh2 copies say "libssh2");
#  * a server with Ciphers chacha20-poly1305@openssh.com only: the same
#    (libssh2 1.10 has no chacha20-poly1305);
#  * -J goes to ssh as its own -J (the jump sshd forwards), and the data
#    streams of a host behind a jump host go over SSH at once (ssh -W
#    through the jump), as on the libssh2 path;
#  * -S PROGRAM and LANECP_SSH=PROGRAM pick a given ssh program (a
#    wrapper that records its runs), and a missing program is exit 2;
#  * a wrong host key through --ssh: exit 4 as on the libssh2 path, one
#    line with ssh's words, nothing written; a refused key: exit 3;
#  * ssh killed in the middle of a copy: the copy fails loudly (not 0),
#    and no ssh or agent process is left;
#  * --via-ssh over --ssh: the data streams through "ssh -W", one per
#    stream, byte-identical; a server with forwarding off fails the copy
#    at once (exit 8, ssh's words), as on the libssh2 path;
#  * a retry after going over ssh by itself goes over ssh at once.
#
set -u -o pipefail
# shellcheck source=lib.sh
. "${LC_SRC_DIR:?}/tests/integration/lib.sh"

command -v ssh >/dev/null || { echo "SKIPPED: no ssh client"; exit 77; }

# shellcheck disable=SC2119
lc_sshd_start
T=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$T/src" "$T/out"
head -c 3000000 /dev/urandom >"$T/src/big"
head -c 1234 /dev/urandom >"$T/src/small"

# an RSA user key: the fixture's server takes it (default settings)
ssh-keygen -q -t rsa -b 2048 -N '' -C lanecp-test-rsa -f "$T/id_rsa" \
    </dev/null || lc_fail "ssh-keygen rsa"
cat "$T/id_rsa.pub" >>"$T/authorized_keys"
RSA_CONFIG=$T/ssh_config_rsa
lc_ssh_config "$RSA_CONFIG" IdentityFile="$(lc__quote "$T/id_rsa")"

# run lanecp with config $1, the rest as arguments; status in RC, stderr
# in $T/err, stdout in $T/json (lib.sh: lc_run_cfg)
run() { lc_run_cfg "$1" "$T/json" "$T/err" "${@:2}"; RC=$LC_RC; }
ok() { lc_ok_cfg "$1" "$T/json" "$T/err" "${@:2}"; }
same() { lc_same "$@"; }

# push, pull, host to host over --ssh with config $1 (what: a name)
copies() {
	local cfg=$1 what=$2
	shift 2
	rm -rf "$T/out"/*
	ok "$cfg" --json "$@" "$T/src/big" "$H:$T/out/push"
	same "$T/src/big" "$T/out/push"
	grep -q '"ssh":"openssh"' "$T/json" ||
		lc_fail "$what push: --json does not say openssh: $(cat "$T/json")"
	ok "$cfg" --json "$@" "$H:$T/src/small" "$T/out/pull"
	same "$T/src/small" "$T/out/pull"
	grep -q '"ssh":"openssh"' "$T/json" || lc_fail "$what pull: --json"
	ok "$cfg" --json "$@" -r "$H:$T/src" "$H:$T/out/h2h"
	same "$T/src/big" "$T/out/h2h/src/big"
	same "$T/src/small" "$T/out/h2h/src/small"
	grep -q '"ssh":"openssh"' "$T/json" || lc_fail "$what h2h: --json"
}

lc_note "RSA user key: libssh2 cannot (exit 3 without ssh), lanecp goes over ssh by itself"
RC=0
env PATH=/nonexistent "$LANECP" -F "$RSA_CONFIG" --json "$T/src/small" \
    "$H:$T/out/x" >"$T/json" 2>"$T/err" || RC=$?
[[ $RC == 3 ]] || { lc__show "$T/err"; lc_fail "libssh2 + RSA, no ssh: exit $RC, want 3"; }
[[ $(wc -l <"$T/err") == 1 ]] || { lc__show "$T/err"; lc_fail "no ssh: not one line"; }
lc_log_has 'an RSA key, which libssh2 .* signs only with SHA-1 .*no ssh program is on the PATH' "$T/err"
grep -q '"ssh":"libssh2"' "$T/json" || lc_fail "libssh2: --json: $(cat "$T/json")"
[[ ! -e $T/out/x ]] || lc_fail "libssh2 + RSA wrote a file"
ok "$RSA_CONFIG" -v --json "$T/src/small" "$H:$T/out/auto"
same "$T/src/small" "$T/out/auto"
lc_log_has 'an RSA key, which libssh2 .* signs only with SHA-1 \(ssh-rsa\); going over the OpenSSH client' "$T/err"
grep -q '"ssh":"openssh".*"ssh_why":"[^"]*RSA key' "$T/json" ||
	lc_fail "fallback: --json: $(cat "$T/json")"
copies "$RSA_CONFIG" rsa
copies "$RSA_CONFIG" rsa --ssh
ok "$RSA_CONFIG" -v --ssh "$T/src/small" "$H:$T/out/v"
lc_log_has 'SSH transport: openssh \(ssh\)' "$T/err"

lc_note "an encrypted RSA key: libssh2 skips it (no prompt), ssh asks once"
ssh-keygen -q -t rsa -b 2048 -N 'pass phrase' -C lanecp-test-rsa-enc \
    -f "$T/id_rsa_enc" </dev/null || lc_fail "ssh-keygen rsa (encrypted)"
cat "$T/id_rsa_enc.pub" >>"$T/authorized_keys"
lc_ssh_config "$T/ssh_config_enc" IdentityFile="$(lc__quote "$T/id_rsa_enc")"
printf '#!/bin/sh\necho asked >>"%s"\necho "pass phrase"\n' \
    "$T/askpass.count" >"$T/askpass"
chmod +x "$T/askpass"
: >"$T/askpass.count"
RC=0
SSH_ASKPASS=$T/askpass SSH_ASKPASS_REQUIRE=force DISPLAY=:0 \
    setsid "$LANECP" -F "$T/ssh_config_enc" -v "$T/src/small" \
    "$H:$T/out/enc" </dev/null >"$T/json" 2>"$T/err" || RC=$?
[[ $RC == 0 ]] || { lc__show "$T/err"; lc_fail "encrypted RSA key: exit $RC"; }
same "$T/src/small" "$T/out/enc"
lc_log_has 'id_rsa_enc: skipped: an RSA key' "$T/err"
[[ $(wc -l <"$T/askpass.count") == 1 ]] ||
	lc_fail "encrypted RSA key: asked $(wc -l <"$T/askpass.count") times, want once"

lc_note "the pushed agent over --ssh (no lanecp on the remote PATH)"
# an sshd whose sessions' PATH lacks lanecp (the first SetEnv line wins)
mkdir -p "$T/cache"
lc_sshd_extra nopath "SetEnv SHLVL=1 PATH=/usr/bin:/bin XDG_CACHE_HOME=$T/cache"
echo "$LC_X_KNOWN" >"$T/nopath.known"
{
	lc_ssh_host_block nopath "$LC_X_PORT" "$T/nopath.known"
	echo "    IdentityFile $(lc__quote "$T/id_rsa")"
} >"$T/ssh_config_nopath"
if ssh -F "$T/ssh_config_nopath" nopath 'command -v lanecp' >/dev/null 2>&1; then
	lc_skip "the remote's system PATH has lanecp: no push to test"
else
	ok "$T/ssh_config_nopath" -v --ssh "$T/src/big" "nopath:$T/out/pushed"
	same "$T/src/big" "$T/out/pushed"
	lc_log_has 'pushed agent to' "$T/err"
	ok "$T/ssh_config_nopath" -v --ssh "nopath:$T/src/small" "$T/out/pulled"
	same "$T/src/small" "$T/out/pulled"
	lc_log_has 'using cached agent' "$T/err"
fi

lc_note "-J through --ssh: ssh's own ProxyJump; data over ssh -W (as libssh2)"
cat "$RSA_CONFIG" "$T/ssh_config_nopath" >"$T/ssh_config_jump"
ok "$T/ssh_config_jump" --json --ssh -J nopath "$T/src/small" "$H:$T/out/j"
same "$T/src/small" "$T/out/j"
lc_log_has 'direct-tcpip' "$T/nopath/sshd.log"
grep -q '"path":"ssh","path_why":"[^"]*jump host' "$T/json" ||
	lc_fail "-J: path: $(cat "$T/json")"

lc_note "-S PROGRAM and LANECP_SSH"
cat >"$T/myssh" <<EOF
#!/bin/sh
echo "\$*" >>"$T/myssh.log"
exec ssh "\$@"
EOF
chmod +x "$T/myssh"
ok "$RSA_CONFIG" -S "$T/myssh" "$T/src/small" "$H:$T/out/s1"
same "$T/src/small" "$T/out/s1"
lc_log_has ' -- ' "$T/myssh.log"
: >"$T/myssh.log"
LANECP_SSH=$T/myssh ok "$RSA_CONFIG" --json "$H:$T/src/small" "$T/out/s2"
same "$T/src/small" "$T/out/s2"
lc_log_has "$(lc_re "$H")" "$T/myssh.log"
grep -q '"ssh":"openssh"' "$T/json" || lc_fail "LANECP_SSH: --json"
run "$RSA_CONFIG" --ssh="$T/no-such-ssh" "$T/src/small" "$H:$T/out/s3"
[[ $RC == 2 ]] || { lc__show "$T/err"; lc_fail "missing program: exit $RC, want 2"; }
[[ $(wc -l <"$T/err") == 1 ]] || { lc__show "$T/err"; lc_fail "missing program: not one line"; }

lc_note "wrong host key through --ssh: exit 4, one line, nothing written"
ssh-keygen -q -t ed25519 -N '' -f "$T/other_host" </dev/null
echo "[127.0.0.1]:$LC_SSHD_PORT $(cut -d' ' -f1,2 "$T/other_host.pub")" \
    >"$T/wrong.known"
lc_ssh_config "$T/ssh_config_wrong" IdentityFile="$(lc__quote "$T/id_rsa")" \
    UserKnownHostsFile="$(lc__quote "$T/wrong.known")"
run "$T/ssh_config_wrong" "$T/src/small" "$H:$T/out/hk"
[[ $RC == 4 ]] || { lc__show "$T/err"; lc_fail "wrong host key: exit $RC, want 4"; }
[[ ! -e $T/out/hk ]] || lc_fail "wrong host key: a file was written"
run "$T/ssh_config_wrong" --ssh "$T/src/small" "$H:$T/out/hk"
[[ $RC == 4 ]] || { lc__show "$T/err"; lc_fail "--ssh wrong host key: exit $RC, want 4"; }
[[ $(wc -l <"$T/err") == 1 ]] || { lc__show "$T/err"; lc_fail "--ssh wrong host key: not one line"; }
lc_log_has 'Host key verification failed' "$T/err"
[[ ! -e $T/out/hk ]] || lc_fail "--ssh wrong host key: a file was written"

lc_note "a key the server refuses through --ssh: exit 3, one line"
ssh-keygen -q -t ed25519 -N '' -f "$T/stranger" </dev/null
lc_ssh_config "$T/ssh_config_stranger" IdentityFile="$(lc__quote "$T/stranger")" \
    BatchMode=yes
run "$T/ssh_config_stranger" --ssh "$T/src/small" "$H:$T/out/au"
[[ $RC == 3 ]] || { lc__show "$T/err"; lc_fail "--ssh refused key: exit $RC, want 3"; }
[[ $(wc -l <"$T/err") == 1 ]] || { lc__show "$T/err"; lc_fail "--ssh refused key: not one line"; }
lc_log_has 'Permission denied' "$T/err"

lc_note "chacha20-poly1305 only: libssh2 fails, --ssh copies"
lc_sshd_extra chacha "Ciphers chacha20-poly1305@openssh.com"
echo "$LC_X_KNOWN" >"$T/chacha.known"
{
	lc_ssh_host_block "$H" "$LC_X_PORT" "$T/chacha.known"
} >"$T/ssh_config_chacha"
ok "$T/ssh_config_chacha" -v "$T/src/small" "$H:$T/out/c"
same "$T/src/small" "$T/out/c"
lc_log_has 'no key exchange, cipher or MAC algorithm in common with libssh2; going over the OpenSSH client' "$T/err"
copies "$T/ssh_config_chacha" chacha --ssh

lc_note "ssh killed in the middle of a copy: fails loudly, no orphans"
mkfifo "$T/fifo"
sleep 900 <"$T/fifo" &
holder=$!
lc_on_exit "kill $holder 2>/dev/null"
ln -sf "$LANECP" "$T/agent-kill"
"$LANECP" -F "$RSA_CONFIG" --ssh -vv -f -T "$T/agent-kill" -N o \
    "$T/src/big" "$H:cat >$T/fifo" 2>"$T/kill.log" &
copy=$!
lc_wait_for '[0-9]+ data streams? connected' "$T/kill.log" 60
# this copy's ssh (not another test's: ctest runs them side by side)
sshmatch="-o RequestTTY=no -F $RSA_CONFIG "
sshpid=$(lc_pids_matching "$sshmatch" | head -n1)
[[ -n $sshpid ]] || lc_fail "no ssh process found"
kill -9 "$sshpid"
rc=0
wait "$copy" || rc=$?
[[ $rc != 0 ]] || lc_fail "the copy survived its ssh being killed"
lc_log_has 'ssh program was killed by signal KILL' "$T/kill.log"
lc_wait_no_pids "$T/agent-kill --agent" 60
[[ -z $(lc_pids_matching "$sshmatch") ]] || lc_fail "an ssh process is left"
kill "$holder" 2>/dev/null

lc_note "a retry after going over ssh by itself goes over ssh at once"
"$LANECP" -F "$RSA_CONFIG" -vv --retries 1 -x 1m -f "$T/src/big" \
    "$H:$T/out/retry" 2>"$T/retry.log" &
copy=$!
lc_wait_for '[0-9]+ data streams? connected' "$T/retry.log" 60
sshpid=$(lc_pids_matching "$sshmatch" | head -n1)
[[ -n $sshpid ]] || lc_fail "retry: no ssh process found"
kill -9 "$sshpid"
rc=0
wait "$copy" || rc=$?
[[ $rc == 0 ]] || { lc__show "$T/retry.log"; lc_fail "retry: exit $rc"; }
same "$T/src/big" "$T/out/retry"
lc_log_has 'attempt 1 of 2 failed' "$T/retry.log"
lc_log_has 'RSA key.*going over the OpenSSH client \(ssh\) as the earlier attempt did' "$T/retry.log"
[[ $(grep -c 'libssh2 failed with' "$T/retry.log") == 1 ]] ||
	{ lc__show "$T/retry.log"; lc_fail "retry: libssh2 was tried again"; }

lc_note "--via-ssh over --ssh: one ssh -W per stream"
: >"$T/myssh.log"
ok "$RSA_CONFIG" -S "$T/myssh" --via-ssh -s 3 --json "$T/src/big" \
    "$H:$T/out/via"
same "$T/src/big" "$T/out/via"
grep -q '"path":"ssh"' "$T/json" || lc_fail "--via-ssh: path: $(cat "$T/json")"
[[ $(grep -c -- ' -W 127.0.0.1:' "$T/myssh.log") -ge 3 ]] ||
	{ lc__show "$T/myssh.log"; lc_fail "--via-ssh: no ssh -W per stream"; }
ok "$RSA_CONFIG" --ssh --via-ssh -s 2 -r "$H:$T/src" "$H:$T/out/via2"
same "$T/src/big" "$T/out/via2/src/big"

lc_note "--via-ssh over --ssh where forwarding is off: exit 8 at once, says why"
lc_sshd_extra nofwd "AllowTcpForwarding no"
echo "$LC_X_KNOWN" >"$T/nofwd.known"
{
	lc_ssh_host_block "$H" "$LC_X_PORT" "$T/nofwd.known"
} >"$T/ssh_config_nofwd"
run "$T/ssh_config_nofwd" --ssh --via-ssh -s 2 "$T/src/small" "$H:$T/out/nofwd"
[[ $RC == 8 ]] || { lc__show "$T/err"; lc_fail "ssh -W refused: exit $RC, want 8"; }
lc_log_has 'cannot forward to 127\.0\.0\.1:[0-9]+: channel 0: open failed: administratively prohibited.*allow port forwarding' "$T/err"
lc_log_lacks 'no connection from the sink within' "$T/err"
[[ ! -e $T/out/nofwd ]] || lc_fail "ssh -W refused: a file was written"

lc_note "ok"
