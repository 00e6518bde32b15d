#!/usr/bin/env bash
# Core dumps and ptrace (issue 20): the controller and every agent mark
# themselves non-dumpable (prctl(PR_SET_DUMPABLE, 0), src/base/secmem.c), so no
# core file holds the transfer key and another process of the same user
# cannot attach to them or read their memory.  Seen from outside: the
# kernel gives /proc/PID of a non-dumpable process to root, and its
# environ is no longer readable by the process's own (non-root) user.
# Checked on a running copy whose controller and agent both run as a
# non-root user: nobody (setpriv) when the test runs as root, else the
# test's own user.
#
# The side effect that matters to lanecp itself: a sink finds and stops a
# stale agent of its own transfer through that agent's /proc/PID/status
# and cmdline (lockholder.c), which stay readable by everyone.  The field
# case of test_lock.sh (--retries after the control connection is lost)
# runs here with everything as that non-root user.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

as=()
if [[ $(id -u) == 0 ]]; then
	if ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
		lc_skip "running as root without setpriv or user nobody: no non-root user to run lanecp as"
		exit 0
	fi
	uid=$(id -u nobody)
	as=(setpriv --reuid="$uid" --regid="$(id -g nobody)" --clear-groups)
else
	uid=$(id -u)
fi
lc_sshd_start
d=$LC_SSHD_DIR
H=$LC_SSH_HOST
ID=00112233445566778899aabbccddeeff
# stale agents must not stop by themselves while a case runs
export LANECP_GRACE_S=3600

# The user's own files: key, known_hosts, config, source and target.
u=$d/user
mkdir -p "$u/dst"
chmod 0711 "$d"
chmod 0755 "$u"
cp "$LC_USER_KEY" "$u/key"
cp "$LC_KNOWN_HOSTS" "$u/known_hosts"
lc_ssh_config "$u/config" IdentityFile="$u/key" UserKnownHostsFile="$u/known_hosts"
head -c $((8 << 20)) /dev/urandom >"$u/big"
ln -s "$LANECP" "$u/agent"
chmod 0644 "$u/known_hosts" "$u/config" "$u/big"
if [[ ${#as[@]} -gt 0 ]]; then
	chown "$uid" "$u/key" "$u/dst"
fi
part=$u/dst/.big.lanecp-part
agent_cmd="${as[*]} $u/agent"

# run_as ARGS... &: lanecp as the user (HOME: its own directory), in the
# background: $! is lanecp's pid (env, setpriv and lanecp exec in turn)
run_as() {
	exec env HOME="$u" "${as[@]}" "$LANECP" -F "$u/config" -T "$agent_cmd" "$@"
}

# The one agent of transfer $ID (fails unless exactly one).
agent_of() {
	local p
	p=$(lc_pids_matching "$u/agent --agent --transfer $ID")
	[[ -n $p && $p != *$'\n'* ]] || lc_fail "agents of $ID: '$p'"
	echo "$p"
}

# nodump_check WHAT PID: PID runs as the user and is not dumpable; says
# what is wrong and returns 1 if not
nodump_check() {
	local what=$1 p=$2 puid owner
	puid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$p/status")
	[[ $puid == "$uid" ]] || lc_fail "$what (pid $p) runs as uid $puid, not $uid"
	owner=$(stat -c %u "/proc/$p/status")
	if [[ $owner != 0 ]]; then
		echo "$what (pid $p, uid $puid) is dumpable: its /proc/$p/status belongs to uid $owner, not root" >&2
		return 1
	fi
	if "${as[@]}" cat "/proc/$p/environ" >/dev/null 2>&1; then
		echo "$what (pid $p): its environment is readable by its own user" >&2
		return 1
	fi
	lc_note "$what (pid $p, uid $puid): /proc/$p belongs to root, environ unreadable"
}

lc_note "a running controller and its agent are not dumpable"
LANECP_TRANSFER=$ID run_as -x 512k -B 64k -s 2 "$u/big" "$H:$u/dst/big" \
	2>"$u/copy.err" &
COPY=$!
lc_on_exit "kill -9 $COPY"
lc_wait_size "$part" 65536 120
ok=1
nodump_check controller "$COPY" || ok=0
nodump_check agent "$(agent_of)" || ok=0
[[ $ok == 1 ]] || lc_fail "a dumpable lanecp process (above)"
kill -9 "$COPY"
wait "$COPY" 2>/dev/null || true
lc_wait_no_pids "$u/agent --agent" 60
rm -f "$part"

lc_note "a non-root sink still stops a stale non-dumpable agent of its transfer"
# as test_lock.sh: the agent's sshd session is frozen, as in an outage;
# the controller gives up on the attempt (--timeout), retries with the
# same transfer id, and the new agent stops the stale one (same user,
# both non-dumpable) and resumes
LANECP_TRANSFER=$ID run_as -v -x 512k -B 64k -s 2 -f --timeout 3 \
	--retries 2 "$u/big" "$H:$u/dst/big" 2>"$u/field.err" &
COPY=$!
lc_on_exit "kill -9 $COPY"
lc_wait_size "$part" 65536 120
stale=$(agent_of)
nodump_check "stale agent" "$stale" || lc_fail "a dumpable agent (above)"
sess=$(awk '{print $4}' "/proc/$stale/stat")
[[ $(cat "/proc/$sess/comm") == sshd* ]] ||
	lc_fail "the agent's parent is $(cat "/proc/$sess/comm"), not sshd"
lc_on_exit "kill -9 $sess"
kill -STOP "$sess"
rc=0
wait "$COPY" || rc=$?
if [[ $rc != 0 ]]; then
	lc__show "$u/field.err"
	lc_fail "the retried copy exited $rc"
fi
cmp "$u/big" "$u/dst/big" || lc_fail "the retried copy differs"
lc_log_has "attempt 1 of 3 failed" "$u/field.err"
lc_log_has "an earlier attempt of this transfer \(pid $stale\) still holds the partial file; stopping it" "$u/field.err"
[[ ! -e /proc/$stale || $(awk '{print $3}' "/proc/$stale/stat") == Z ]] ||
	lc_fail "the stale agent $stale is still running"
[[ $(stat -c %u "$u/dst/big") == "$uid" ]] || lc_fail "the copy is not the user's"
kill -9 "$sess"
echo PASS
