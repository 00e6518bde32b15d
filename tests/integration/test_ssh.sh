#!/usr/bin/env bash
#
# The ssh module (src/ssh/ssh.h) against a real sshd, driven with
# tests/tools/lc_sshexec: data through the exec channel, exit statuses,
# host key checking, authentication, connect errors, stderr relay.
#
set -u -o pipefail
# shellcheck source=lib.sh
. "${LC_SRC_DIR:?}/tests/integration/lib.sh"

X=${LC_TOOLS_DIR:?}/lc_sshexec
[[ -x $X ]] || lc_fail "test tool $X not built"
# shellcheck disable=SC2119  # no extra PATH dirs: $LANECP's directory
lc_sshd_start
T=$LC_SSHD_DIR
H=$LC_SSH_HOST
NAME="[127.0.0.1]:$LC_SSHD_PORT"
FP=$(ssh-keygen -lf "$LC_HOST_KEY" | awk '{print $2}')
[[ $FP == SHA256:* ]] || lc_fail "cannot fingerprint $LC_HOST_KEY"
FP=$(lc_re "$FP")
RT=$(lc_re "$T")

# x NAME [lc_sshexec args...]: run with stdout and stderr in $T/NAME.*
x() {
	local n=$1
	shift
	"$X" "$@" >"$T/$n.out" 2>"$T/$n.err"
}

# sshd log lines written since the last call
log_mark=0
sshd_log_since() {
	tail -n +$((log_mark + 1)) "$LC_SSHD_LOG" >"$1"
	log_mark=$(wc -l <"$LC_SSHD_LOG")
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

lc_note "round trip: 1 MiB of random data through cat"
head -c 1048576 /dev/urandom >"$T/in1"
lc_expect_exit 0 x rt -F "$LC_SSH_CONFIG" "$H" cat <"$T/in1"
cmp "$T/in1" "$T/rt.out" || lc_fail "1 MiB round trip differs"

lc_note "round trip: 32 MiB through cat"
head -c 33554432 /dev/urandom >"$T/in32"
lc_expect_exit 0 x rt32 -F "$LC_SSH_CONFIG" "$H" cat <"$T/in32"
cmp "$T/in32" "$T/rt32.out" || lc_fail "32 MiB round trip differs"
rm -f "$T/in32" "$T/rt32.out"

lc_note "both directions full: remote writes 8 MiB before reading 8 MiB"
head -c 8388608 /dev/urandom >"$T/in8"
lc_expect_exit 0 x both -F "$LC_SSH_CONFIG" "$H" \
	'head -c 8388608 /dev/zero; cat'  <"$T/in8"
{ head -c 8388608 /dev/zero; cat "$T/in8"; } | cmp - "$T/both.out" ||
	lc_fail "bidirectional transfer differs"
rm -f "$T/both.out"

lc_note "8 MiB both ways with a 4 KiB send buffer: packets sent in parts"
# libssh2 queues the rest of a packet the socket did not take; the pump
# must retry that very call before anything else sends (see src/ssh/pump.c).
head -c 8388608 /dev/urandom >"$T/in8"
lc_expect_exit 0 x small -S 4k -F "$LC_SSH_CONFIG" "$H" \
	'head -c 8388608 /dev/zero; cat' <"$T/in8"
{ head -c 8388608 /dev/zero; cat "$T/in8"; } | cmp - "$T/small.out" ||
	lc_fail "transfer with partial packet writes differs"
lc_expect_exit 0 x small2 -S 4k -F "$LC_SSH_CONFIG" "$H" cat <"$T/in8"
cmp "$T/in8" "$T/small2.out" || lc_fail "cat with partial packet writes differs"
rm -f "$T/in8" "$T/small.out" "$T/small2.out"

lc_note "output without input, stdin EOF reaches the remote"
lc_expect_exit 0 x noin -F "$LC_SSH_CONFIG" "$H" 'cat; echo done' </dev/null
[[ $(cat "$T/noin.out") == "done" ]] || lc_fail "unexpected output: $(cat "$T/noin.out")"

lc_note "remote exit status is propagated"
lc_expect_exit 7 x st7 -F "$LC_SSH_CONFIG" "$H" 'exit 7' </dev/null
lc_expect_exit 0 x st0 -F "$LC_SSH_CONFIG" "$H" true </dev/null
lc_expect_exit 1 x st1 -F "$LC_SSH_CONFIG" "$H" false </dev/null

lc_note "nonexistent remote command gives 127"
lc_expect_exit 127 x nx -F "$LC_SSH_CONFIG" "$H" lanecp-no-such-command </dev/null
lc_log_has "^lanecp: \[$H\] .*lanecp-no-such-command.*not found" "$T/nx.err"

lc_note "remote killed by a signal: exit 255 with the signal name"
lc_expect_exit 255 x sig -F "$LC_SSH_CONFIG" "$H" 'kill -TERM $$' </dev/null
lc_log_has "killed by signal TERM" "$T/sig.err"

lc_note "remote stderr is relayed with the [host] prefix, escaped"
lc_expect_exit 0 x relay -F "$LC_SSH_CONFIG" "$H" \
	'echo "agent: stream 2: hello" >&2; printf "esc\033[31mred\r\n" >&2; printf "no newline" >&2' </dev/null
lc_log_has "^lanecp: \[$H\] agent: stream 2: hello$" "$T/relay.err"
lc_log_has '^lanecp: \[lctest\] esc\\x1b\[31mred$' "$T/relay.err"
lc_log_has "^lanecp: \[$H\] no newline$" "$T/relay.err"
[[ ! -s $T/relay.out ]] || lc_fail "stderr leaked into stdout"

lc_note "peer and local addresses"
lc_expect_exit 0 x addr -A -F "$LC_SSH_CONFIG" "$H" true </dev/null
lc_log_has "^peer 127\.0\.0\.1 local 127\.0\.0\.1$" "$T/addr.err"

lc_note "the remote PATH has the build directory (SetEnv in sshd_config)"
if [[ -n ${LANECP-} ]]; then
	lc_expect_exit 0 x path -F "$LC_SSH_CONFIG" "$H" 'command -v lanecp' </dev/null
	[[ $(cat "$T/path.out") == "$(cd "$(dirname "$LANECP")" && pwd)/lanecp" ]] ||
		lc_fail "remote finds lanecp at '$(cat "$T/path.out")'"
fi

lc_note "unknown host key is refused with its fingerprint"
: >"$T/kh_empty"
lc_ssh_config "$T/cfg_unknown" UserKnownHostsFile="$T/kh_empty"
sshd_log_since /dev/null
lc_expect_exit 4 x unk -F "$T/cfg_unknown" "$H" true </dev/null
sshd_log_since "$T/unk.sshd"
lc_log_has "host key for \[127\.0\.0\.1\]:$LC_SSHD_PORT is not known \(ED25519 key $FP\)" "$T/unk.err"
lc_log_has "add it to $RT/kh_empty \(e\.g\. with ssh-keyscan\) or set StrictHostKeyChecking accept-new" "$T/unk.err"
lc_log_has "Connection from 127\.0\.0\.1" "$T/unk.sshd"
lc_log_lacks "Accepted publickey" "$T/unk.sshd"
[[ ! -s $T/kh_empty ]] || lc_fail "StrictHostKeyChecking yes wrote known_hosts"

lc_note "unknown host key is refused when StrictHostKeyChecking is not set"
lc_ssh_config "$T/cfg_unset" UserKnownHostsFile="$T/kh_empty" StrictHostKeyChecking=
lc_expect_exit 4 x unset -F "$T/cfg_unset" "$H" true </dev/null
lc_log_has "is not known" "$T/unset.err"

lc_note "changed host key is refused naming the file and line"
ssh-keygen -q -t ed25519 -N '' -f "$T/other_host_key" </dev/null
{
	echo "# a comment"
	echo "other.example.org $(cut -d' ' -f1,2 "$T/other_host_key.pub")"
	echo "$NAME $(cut -d' ' -f1,2 "$T/other_host_key.pub")"
} >"$T/kh_changed"
lc_ssh_config "$T/cfg_changed" UserKnownHostsFile="$T/kh_changed"
lc_expect_exit 4 x chg -F "$T/cfg_changed" "$H" true </dev/null
lc_log_has "REMOTE HOST IDENTIFICATION HAS CHANGED for \[127\.0\.0\.1\]:$LC_SSHD_PORT: server offers ED25519 key $FP, $RT/kh_changed line 3 has a different key" "$T/chg.err"
lc_log_has "ssh-keygen -R '\[127\.0\.0\.1\]:$LC_SSHD_PORT' -f $RT/kh_changed" "$T/chg.err"

lc_note "changed host key is refused even with accept-new and no"
lc_ssh_config "$T/cfg_changed_an" UserKnownHostsFile="$T/kh_changed" \
	StrictHostKeyChecking=accept-new
lc_expect_exit 4 x chgan -F "$T/cfg_changed_an" "$H" true </dev/null
lc_log_has "HAS CHANGED" "$T/chgan.err"
lc_ssh_config "$T/cfg_changed_no" UserKnownHostsFile="$T/kh_changed" \
	StrictHostKeyChecking=no
lc_expect_exit 4 x chgno -F "$T/cfg_changed_no" "$H" true </dev/null
lc_log_has "HAS CHANGED" "$T/chgno.err"
[[ $(wc -l <"$T/kh_changed") == 3 ]] || lc_fail "changed known_hosts was modified"

# hashed_copy SRC DST: DST is known_hosts SRC with its names hashed.
hashed_copy() {
	cp "$1" "$2"
	ssh-keygen -q -H -f "$2" >/dev/null 2>&1 || lc_fail "ssh-keygen -H failed"
	grep -q '^|1|' "$2" || lc_fail "ssh-keygen -H did not hash"
}

lc_note "changed key in a hashed entry names its line"
hashed_copy "$T/kh_changed" "$T/kh_changed_h"
lc_ssh_config "$T/cfg_changed_h" UserKnownHostsFile="$T/kh_changed_h"
lc_expect_exit 4 x chgh -F "$T/cfg_changed_h" "$H" true </dev/null
lc_log_has "$RT/kh_changed_h line 3 has a different key" "$T/chgh.err"

lc_note "accept-new records an unknown key, then it is known"
mkdir "$T/an"
lc_ssh_config "$T/cfg_an" UserKnownHostsFile="$T/an/known_hosts" \
	StrictHostKeyChecking=accept-new
lc_expect_exit 0 x an1 -F "$T/cfg_an" "$H" 'echo first' </dev/null
[[ $(cat "$T/an1.out") == first ]] || lc_fail "accept-new: no output"
[[ -f $T/an/known_hosts ]] || lc_fail "accept-new did not create known_hosts"
[[ $(wc -l <"$T/an/known_hosts") == 1 ]] || lc_fail "accept-new: expected one line"
[[ $(cat "$T/an/known_hosts") == "$NAME $(cut -d' ' -f1,2 "$LC_HOST_KEY")" ]] ||
	lc_fail "accept-new wrote '$(cat "$T/an/known_hosts")'"
[[ $(stat -c %a "$T/an/known_hosts") == 600 ]] || lc_fail "known_hosts not 0600"
lc_ssh_config "$T/cfg_an_strict" UserKnownHostsFile="$T/an/known_hosts"
lc_expect_exit 0 x an2 -F "$T/cfg_an_strict" "$H" true </dev/null
lc_expect_exit 0 x an3 -F "$T/cfg_an" "$H" true </dev/null
[[ $(wc -l <"$T/an/known_hosts") == 1 ]] || lc_fail "known key recorded twice"

lc_note "StrictHostKeyChecking no records too; a missing final newline is kept apart"
printf 'other.example.org %s' "$(cut -d' ' -f1,2 "$T/other_host_key.pub")" >"$T/kh_no"
lc_ssh_config "$T/cfg_no" UserKnownHostsFile="$T/kh_no" StrictHostKeyChecking=no
lc_expect_exit 0 x no1 -F "$T/cfg_no" "$H" true </dev/null
[[ $(wc -l <"$T/kh_no") == 2 ]] || lc_fail "StrictHostKeyChecking no: $(cat "$T/kh_no")"
grep -qxF "$NAME $(cut -d' ' -f1,2 "$LC_HOST_KEY")" "$T/kh_no" || lc_fail "entry not on its own line"

lc_note "accept-new with HashKnownHosts writes a hashed entry ssh can read"
lc_ssh_config "$T/cfg_anh" UserKnownHostsFile="$T/kh_anh" \
	StrictHostKeyChecking=accept-new HashKnownHosts=yes
lc_expect_exit 0 x anh1 -F "$T/cfg_anh" "$H" true </dev/null
grep -q '^|1|[A-Za-z0-9+/=]*|[A-Za-z0-9+/=]* ssh-ed25519 ' "$T/kh_anh" ||
	lc_fail "not a hashed entry: $(cat "$T/kh_anh")"
grep -qF "$NAME" "$T/kh_anh" && lc_fail "host name in clear in a hashed entry"
ssh-keygen -F "$NAME" -f "$T/kh_anh" | grep ssh-ed25519 >/dev/null ||
	lc_fail "ssh-keygen -F does not find our hashed entry"
lc_ssh_config "$T/cfg_anh_strict" UserKnownHostsFile="$T/kh_anh"
lc_expect_exit 0 x anh2 -F "$T/cfg_anh_strict" "$H" true </dev/null

lc_note "hashed known_hosts entries (ssh-keygen -H) work"
hashed_copy "$LC_KNOWN_HOSTS" "$T/kh_hashed"
lc_ssh_config "$T/cfg_hashed" UserKnownHostsFile="$T/kh_hashed"
lc_expect_exit 0 x hashed -F "$T/cfg_hashed" "$H" true </dev/null

lc_note "only the ECDSA key is known: the server is asked for that type"
echo "$NAME $(cut -d' ' -f1,2 "$LC_HOST_KEY_ECDSA")" >"$T/kh_ecdsa"
lc_ssh_config "$T/cfg_ecdsa" UserKnownHostsFile="$T/kh_ecdsa"
lc_expect_exit 0 x ecdsa -F "$T/cfg_ecdsa" "$H" true </dev/null
echo "other.example.org $(cut -d' ' -f1,2 "$LC_HOST_KEY_ECDSA")" >"$T/kh_ecdsa_other"
lc_ssh_config "$T/cfg_ecdsa_other" UserKnownHostsFile="$T/kh_ecdsa_other"
lc_expect_exit 4 x ecdsa_other -F "$T/cfg_ecdsa_other" "$H" true </dev/null
lc_log_has "is not known \(ED25519 key $FP\)" "$T/ecdsa_other.err"

lc_note "known_hosts: several files, comments, junk lines, a wildcard entry"
{
	echo "# junk and markers first"
	echo "garbage"
	echo "@revoked * ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA"
	echo ""
} >"$T/kh_junk"
echo "[127.0.0.?]:$LC_SSHD_PORT,!other $(cut -d' ' -f1,2 "$LC_HOST_KEY")" >"$T/kh_wild"
lc_ssh_config "$T/cfg_wild" UserKnownHostsFile="$T/kh_junk $T/kh_wild"
lc_expect_exit 0 x wild -F "$T/cfg_wild" "$H" true </dev/null

lc_note "GlobalKnownHostsFile is read too"
lc_ssh_config "$T/cfg_global" UserKnownHostsFile="$T/kh_empty" \
	GlobalKnownHostsFile="$LC_KNOWN_HOSTS"
lc_expect_exit 0 x global -F "$T/cfg_global" "$H" true </dev/null

lc_note "a key recorded under the alias is accepted as well"
echo "[$H]:$LC_SSHD_PORT $(cut -d' ' -f1,2 "$LC_HOST_KEY")" >"$T/kh_alias"
lc_ssh_config "$T/cfg_alias" UserKnownHostsFile="$T/kh_alias"
lc_expect_exit 0 x alias -F "$T/cfg_alias" "$H" true </dev/null

lc_note "a wrong user key is refused with exit 3"
ssh-keygen -q -t ed25519 -N '' -f "$T/wrong_key" </dev/null
lc_ssh_config "$T/cfg_wrong" IdentityFile="$T/wrong_key"
lc_expect_exit 3 x wrong -F "$T/cfg_wrong" "$H" true </dev/null
lc_log_has "^lc_sshexec: $LC_USER@$H: authentication failed \(tried: $RT/wrong_key\)$" "$T/wrong.err"

lc_note "-i adds an identity, tried before the configured ones"
lc_expect_exit 0 x dashi -i "$LC_USER_KEY" -F "$T/cfg_wrong" "$H" true </dev/null

lc_note "a user given on the command line wins over User"
lc_expect_exit 3 x user -F "$LC_SSH_CONFIG" "lanecp-nobody@$H" true </dev/null
lc_log_has "lanecp-nobody@$H: authentication failed" "$T/user.err"

lc_note "an encrypted key is skipped in batch mode"
ssh-keygen -q -t ed25519 -N 'secret phrase' -f "$T/enc_key" </dev/null
lc_ssh_config "$T/cfg_enc" IdentityFile="$T/enc_key"
lc_expect_exit 3 x enc -v -F "$T/cfg_enc" "$H" true </dev/null
lc_log_has "enc_key \(encrypted, skipped in batch mode\)" "$T/enc.err"
lc_log_has "skipping encrypted key in batch mode" "$T/enc.err"

lc_note "an encrypted key asks for its passphrase on the terminal, echo off"
if command -v script >/dev/null 2>&1; then
	cat "$T/enc_key.pub" >>"$T/authorized_keys"
	ts=$T/typescript
	# wait_for TEXT COUNT: until TEXT shows up COUNT times in the typescript
	wait_for() {
		local i n
		for ((i = 0; i < 200; i++)); do
			n=$(grep -c -- "$1" "$ts" 2>/dev/null)
			((${n:-0} >= $2)) && return 0
			sleep 0.05
		done
		return 1
	}
	{
		wait_for "Enter passphrase for key" 1 && printf 'wrong\n'
		wait_for "Enter passphrase for key" 2 && printf 'secret phrase\n'
		wait_for "via-passphrase" 1
	} | script -qfec "$X -P -F $T/cfg_enc $H 'echo via-passphrase'" "$ts" \
		>"$T/tty.out" 2>&1 ||
		{ lc__show "$ts"; lc_fail "passphrase prompt: exit $?"; }
	lc_log_has "bad passphrase" "$ts"
	lc_log_has "^via-passphrase" "$ts"
	lc_log_lacks "secret phrase|wrong" "$ts"
else
	lc_skip "passphrase prompt on a terminal: no script(1) (bsdutils)"
fi

lc_note "no identity at all"
lc_ssh_config "$T/cfg_noid" IdentityFile="$T/does_not_exist"
lc_expect_exit 3 x noid -F "$T/cfg_noid" "$H" true </dev/null
lc_log_has "authentication failed \(tried: nothing" "$T/noid.err"

lc_note "authentication through ssh-agent"
lc_agent_start
ssh-add -q "$LC_USER_KEY" 2>/dev/null || lc_fail "ssh-add failed"
lc_ssh_config "$T/cfg_agent" IdentityFile= IdentitiesOnly=no
lc_expect_exit 0 x agent -v -F "$T/cfg_agent" "$H" 'echo via-agent' </dev/null
[[ $(cat "$T/agent.out") == via-agent ]] || lc_fail "agent: no output"
lc_log_has "authenticated with agent key" "$T/agent.err"

lc_note "IdentitiesOnly yes: the agent's key is used only if configured"
lc_ssh_config "$T/cfg_agent_only" IdentityFile="$T/wrong_key" IdentitiesOnly=yes
lc_expect_exit 3 x agent_only -F "$T/cfg_agent_only" "$H" true </dev/null
lc_log_has "tried: agent \(0 keys\), $RT/wrong_key\)" "$T/agent_only.err"
lc_ssh_config "$T/cfg_agent_only2" IdentitiesOnly=yes
lc_expect_exit 0 x agent_only2 -v -F "$T/cfg_agent_only2" "$H" true </dev/null
lc_log_has "authenticated with agent key" "$T/agent_only2.err"

lc_note "agent key that the server refuses, then a file that works"
ssh-add -q -D 2>/dev/null
ssh-add -q "$T/wrong_key" 2>/dev/null || lc_fail "ssh-add failed"
lc_ssh_config "$T/cfg_agent_file" IdentitiesOnly=no
lc_expect_exit 0 x agent_file -F "$T/cfg_agent_file" "$H" true </dev/null
lc_ssh_config "$T/cfg_agent_bad" IdentityFile= IdentitiesOnly=no
lc_expect_exit 3 x agent_bad -F "$T/cfg_agent_bad" "$H" true </dev/null
lc_log_has "tried: agent \(1 key\)" "$T/agent_bad.err"
kill "$SSH_AGENT_PID"
export SSH_AUTH_SOCK=

# The first key goes without asking for the method list ("none"); the
# list is asked for after it is refused, and says why.
lc_note "a server that takes no public keys: said after the first key"
lc_sshd_extra nopubkey "PubkeyAuthentication no"
echo "$LC_X_KNOWN" >"$T/nopubkey.known"
{
	lc_ssh_host_block nopubkey "$LC_X_PORT" "$T/nopubkey.known"
	echo "    IdentityFile $(lc__quote "$T/wrong_key")"
} >"$T/cfg_nopubkey"
lc_expect_exit 3 x nopubkey -F "$T/cfg_nopubkey" nopubkey true </dev/null
lc_log_has "nopubkey: authentication failed \(the server does not accept public keys; it offers" "$T/nopubkey.err"
lc_log_lacks "tried:" "$T/nopubkey.err"

lc_note "a closed port gives exit 3 with Connection refused"
CLOSED=$(lc_free_port)
lc_ssh_config "$T/cfg_closed" Port="$CLOSED"
lc_expect_exit 3 x closed -F "$T/cfg_closed" "$H" true </dev/null
lc_log_has "cannot connect to 127\.0\.0\.1 port $CLOSED: Connection refused" "$T/closed.err"

lc_note "an unresolvable host gives exit 3"
lc_ssh_config "$T/cfg_noname" HostName=lanecp-no-such-host.invalid
lc_expect_exit 3 x noname -F "$T/cfg_noname" "$H" true </dev/null
lc_log_has "cannot resolve lanecp-no-such-host\.invalid" "$T/noname.err"

lc_note "a port that accepts TCP but never speaks SSH: ConnectTimeout 2"
# A stopped sshd keeps its listening socket: the kernel completes the TCP
# handshake, nobody sends a banner.
kill -STOP "$LC_SSHD_PID"
lc_ssh_config "$T/cfg_silent" ConnectTimeout=2
t0=$(now_ms)
lc_expect_exit 3 x silent -F "$T/cfg_silent" "$H" true </dev/null
t1=$(now_ms)
kill -CONT "$LC_SSHD_PID"
lc_log_has "cannot connect to 127\.0\.0\.1 port $LC_SSHD_PORT: timed out during the SSH handshake" "$T/silent.err"
((t1 - t0 >= 1800 && t1 - t0 <= 3500)) ||
	lc_fail "ConnectTimeout 2 took $((t1 - t0)) ms"

lc_note "keepalives do not disturb a quiet session"
lc_ssh_config "$T/cfg_alive" ServerAliveInterval=1
lc_expect_exit 0 x alive -F "$T/cfg_alive" "$H" 'sleep 3; echo awake' </dev/null
[[ $(cat "$T/alive.out") == awake ]] || lc_fail "keepalive session lost output"

lc_note "a dropped connection ends the session with EOF"
: >"$T/drop.out"
"$X" -F "$LC_SSH_CONFIG" "$H" 'echo started $$; exec sleep 60' </dev/null \
	>"$T/drop.out" 2>"$T/drop.err" &
DROP=$!
for ((i = 0; i < 100; i++)); do
	grep -q started "$T/drop.out" && break
	sleep 0.1
done
grep -q started "$T/drop.out" || lc_fail "remote command did not start"
SLEEPER=$(awk '/^started/ {print $2}' "$T/drop.out")
[[ $SLEEPER =~ ^[0-9]+$ ]] && lc_on_exit "kill $SLEEPER"
lc_sshd_drop
rc=0
for ((i = 0; i < 100; i++)); do
	kill -0 "$DROP" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$DROP" 2>/dev/null; then
	kill "$DROP"
	lc_fail "lc_sshexec still running after the connection dropped"
fi
wait "$DROP" || rc=$?
[[ $rc == 255 ]] || lc_fail "dropped connection: exit $rc, expected 255"
lc_log_has "connection (to $LC_USER@$H )?lost" "$T/drop.err"
kill "$SLEEPER" 2>/dev/null

lc_note "sshd still works after all that"
lc_expect_exit 0 x final -F "$LC_SSH_CONFIG" "$H" 'echo ok' </dev/null
[[ $(cat "$T/final.out") == ok ]] || lc_fail "final check"

lc_note "all ssh checks passed"
