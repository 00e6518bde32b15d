#!/usr/bin/env bash
# A part file whose lock is still held: by a stale agent of an earlier
# attempt of the same run (the field case: a control connection lost in
# an outage while its agent lives on), which the new sink stops and takes
# over once the stale agent has confirmed the run's takeover key; or by
# a different transfer, or another invocation that only names the same
# transfer id, which fails at once with the LOCKED status (6 at a remote
# sink) and is not retried.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"
head -c $((8 << 20)) /dev/urandom >"$d/local/big"
ln -s "$LANECP" "$d/agent"
part=$d/remote/.big.lanecp-part
ID1=0123456789abcdef0123456789abcdef
ID2=fedcba9876543210fedcba9876543210
# stale agents must not stop by themselves while a case runs
export LANECP_GRACE_S=3600

# The one agent running with transfer id $1 (fails unless exactly one).
agent_of() {
	local p
	p=$(lc_pids_matching "--agent --restrict $d/remote --transfer $1"; lc_pids_matching "$d/agent --agent --transfer $1")
	[[ -n $p && $p != *$'\n'* ]] || lc_fail "agents of $1: '$p'"
	echo "$p"
}

# Starts a slow copy (transfer $1) in the background into remote/big and
# waits until its agent has written part of the part file.  Sets COPY.
slow_copy() {
	LANECP_TRANSFER=$1 "$LANECP" -F "$LC_SSH_CONFIG" -T "$d/agent" \
		-x 512k -B 64k -s 2 -f "$d/local/big" "$H:$d/remote/big" 2>"$d/slow.err" &
	COPY=$!
	lc_on_exit "kill -9 $COPY"
	lc_wait_size "$part" 65536 120
}

lc_note "the field case: --retries after the control connection is lost"
# The agent's sshd session is frozen, as in an outage: the agent hears
# nothing and sees no EOF, so it keeps the part file locked.  The
# controller gives up on the attempt (--timeout), retries with the same
# transfer id, and the new sink stops the stale agent and resumes.
LANECP_TRANSFER=$ID1 "$LANECP" -F "$LC_SSH_CONFIG" -T "$d/agent" -v \
	-x 512k -B 64k -s 2 -f --timeout 3 --retries 2 "$d/local/big" "$H:$d/remote/big" \
	2>"$d/field.err" &
COPY=$!
lc_on_exit "kill -9 $COPY"
lc_wait_size "$part" 65536 120
stale=$(agent_of $ID1)
sess=$(awk '{print $4}' "/proc/$stale/stat")
[[ $(cat "/proc/$sess/comm") == sshd* ]] ||
	lc_fail "the agent's parent is $(cat "/proc/$sess/comm"), not sshd"
lc_on_exit "kill -9 $sess"
kill -STOP "$sess"
rc=0
wait "$COPY" || rc=$?
if [[ $rc != 0 ]]; then
	lc__show "$d/field.err"
	lc_fail "the retried copy exited $rc"
fi
cmp "$d/local/big" "$d/remote/big" || lc_fail "the retried copy differs"
lc_log_has "attempt 1 of 3 failed" "$d/field.err"
lc_log_has "an earlier attempt of this transfer \(pid $stale\) still holds the partial file; stopping it" "$d/field.err"
lc_log_lacks "another lanecp" "$d/field.err"
[[ ! -e /proc/$stale || $(awk '{print $3}' "/proc/$stale/stat") == Z ]] ||
	lc_fail "the stale agent $stale is still running"
kill -9 "$sess"
rm -f "$d/remote/big"

lc_note "a later invocation with the same transfer id does not take over"
# The id is public (ps): only the run that made it holds the takeover key
# its agents answer to, so another invocation naming the id stops nothing.
slow_copy $ID1
stale=$(agent_of $ID1)
kill -STOP "$COPY"	# the controller is gone silent; its agent lives on
LANECP_TRANSFER=$ID1 lc_lanecp_expect 6 \
	"big: an agent with this transfer id \(pid $stale\) holds this file, and it is not of this run" \
	-T "$d/agent" -a -f --retries 3 "$d/local/big" "$H:$d/remote/big"
lc_log_lacks "stopping it" "$LC_ERR"
lc_log_lacks "retrying" "$LC_ERR"
kill -0 "$stale" || lc_fail "another invocation stopped the agent"
[[ ! -e $d/remote/big ]] || lc_fail "renamed into place despite the lock"
kill -9 "$COPY"
wait "$COPY" 2>/dev/null || true
lc_wait_no_pids "$d/agent --agent" 60
rm -f "$d/remote/big" "$part"

lc_note "a lock held by a different transfer fails at once, not retried"
slow_copy $ID1
stale=$(agent_of $ID1)
kill -STOP "$COPY"
LANECP_TRANSFER=$ID2 lc_lanecp_expect 6 \
	"another lanecp \(pid $stale, a different transfer\) is writing this file" \
	-T "$d/agent" -a -f --retries 3 "$d/local/big" "$H:$d/remote/big"
lc_log_lacks "retrying" "$LC_ERR"
lc_log_lacks "stopping it" "$LC_ERR"
kill -0 "$stale" || lc_fail "the other transfer's agent was stopped"
lc_note "... and so does one with a random id (no test hook)"
lc_lanecp_expect 6 "another lanecp \(pid $stale, a different transfer\)" \
	-T "$d/agent" -a -f --retries 3 "$d/local/big" "$H:$d/remote/big"
lc_log_lacks "retrying" "$LC_ERR"
kill -0 "$stale" || lc_fail "the other transfer's agent was stopped"
[[ ! -e $d/remote/big ]] || lc_fail "renamed into place despite the lock"
kill -9 "$COPY"
wait "$COPY" 2>/dev/null || true
lc_wait_no_pids "$d/agent --agent" 60
rm -f "$d/remote/big" "$part"

lc_note "a forced-command agent (authorized_keys command=) is taken over by --retries too"
# sshd runs the forced command instead of ours: the agent takes the id
# from SSH_ORIGINAL_COMMAND and runs again with it on its command line;
# the takeover key comes in SINK_TARGET as always.  The field case again,
# through a restricted key.
ssh-keygen -q -t ed25519 -N '' -f "$d/cron_key" </dev/null
printf 'command="%s --agent --restrict %s",no-pty %s\n' \
	"$d/agent" "$d/remote" "$(cat "$d/cron_key.pub")" >>"$d/authorized_keys"
lc_ssh_config "$d/cron_config" IdentityFile="$d/cron_key"
LANECP_TRANSFER=$ID1 "$LANECP" -F "$d/cron_config" -v -x 512k -B 64k \
	-s 2 -f --timeout 3 --retries 2 "$d/local/big" "$H:big" \
	2>"$d/cron.err" &
COPY=$!
lc_on_exit "kill -9 $COPY"
lc_wait_size "$part" 65536 120
stale=$(agent_of $ID1)
sess=$(awk '{print $4}' "/proc/$stale/stat")
[[ $(cat "/proc/$sess/comm") == sshd* ]] ||
	lc_fail "the agent's parent is $(cat "/proc/$sess/comm"), not sshd"
lc_on_exit "kill -9 $sess"
kill -STOP "$sess"
rc=0
wait "$COPY" || rc=$?
if [[ $rc != 0 ]]; then
	lc__show "$d/cron.err"
	lc_fail "the retried restricted copy exited $rc"
fi
cmp "$d/local/big" "$d/remote/big" || lc_fail "the restricted copy differs"
lc_log_has "attempt 1 of 3 failed" "$d/cron.err"
lc_log_has "an earlier attempt of this transfer \(pid $stale\) still holds the partial file; stopping it" "$d/cron.err"
[[ ! -e /proc/$stale || $(awk '{print $3}' "/proc/$stale/stat") == Z ]] ||
	lc_fail "the stale agent $stale is still running"
kill -9 "$sess"
echo "ok"
