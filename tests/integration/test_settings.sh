#!/usr/bin/env bash
# The hidden settings (src/base/settings.h, man lanecp ENVIRONMENT) are
# in every build, the product build too, and a value that is not of their
# form or in their range is refused, never ignored: the controller stops
# with exit 2 and one line naming the variable before it connects; an
# agent (lanecp --agent, lanecp-agent) stops with exit 2 too, so a copy
# whose remote agent has a bad value fails instead of running with a
# value its controller does not share.  A good value is honoured (the
# copies of test_security.sh, test_resume.sh, test_lock.sh and test_push.sh
# show what each does).
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
agent=$(dirname "$LANECP")/lanecp-agent
mkdir -p "$d/remote" "$d/local"
echo data >"$d/local/f"

# refused VAR=VALUE: the controller refuses it before it starts a copy.
refused() {
	local var=${1%%=*} rc=0
	rm -f "$d/remote/f"
	env "$1" "$LANECP" -F "$LC_SSH_CONFIG" "$d/local/f" "$H:$d/remote/f" \
		2>"$d/ctl.err" || rc=$?
	[[ $rc == 2 ]] || { lc__show "$d/ctl.err"; lc_fail "$1: exit $rc, expected 2"; }
	lc_log_has "^lanecp: $var=" "$d/ctl.err"
	[[ $(wc -l <"$d/ctl.err") == 1 ]] || { lc__show "$d/ctl.err"; lc_fail "$1: not one line"; }
	[[ ! -e $d/remote/f ]] || lc_fail "$1: a target was written"
}

lc_note "the controller refuses a bad value with exit 2 and one line"
for v in LANECP_AEAD_EPOCH=4095 LANECP_AEAD_EPOCH=68719476737 \
	LANECP_AEAD_EPOCH=64k LANECP_MAX_RUNS=0 LANECP_MAX_RUNS=8193 \
	LANECP_HASH_FRAME=0 LANECP_HASH_FRAME=32769 \
	LANECP_GRACE_S=0 LANECP_GRACE_S=3601 LANECP_GRACE_S=-1 \
	LANECP_TRANSFER=0123 LANECP_TRANSFER=0123456789ABCDEF0123456789ABCDEF \
	LANECP_ARCH=Linux LANECP_ARCH="Linux x86_64 more" LANECP_ARCH="Linux;x y"; do
	refused "$v"
done
refused LANECP_GRACE_S=99999
lc_log_has '^lanecp: LANECP_GRACE_S=99999: must be a number from 1 to 3600' "$d/ctl.err"

lc_note "the bounds themselves and an empty value are accepted"
for v in LANECP_AEAD_EPOCH=4096 LANECP_AEAD_EPOCH=68719476736 \
	LANECP_MAX_RUNS=1 LANECP_MAX_RUNS=8192 LANECP_GRACE_S=1 \
	LANECP_HASH_FRAME=1 LANECP_HASH_FRAME=32768 \
	LANECP_GRACE_S=3600 LANECP_TRANSFER=0123456789abcdef0123456789abcdef \
	LANECP_ARCH="$(uname -s) $(uname -m)" LANECP_AEAD_EPOCH=; do
	rm -f "$d/remote/f"
	env "$v" "$LANECP" -F "$LC_SSH_CONFIG" "$d/local/f" "$H:$d/remote/f" \
		2>"$d/ctl.err" || { lc__show "$d/ctl.err"; lc_fail "$v: refused"; }
	cmp "$d/local/f" "$d/remote/f" || lc_fail "$v: the copy differs"
done

lc_note "an agent refuses a bad value with exit 2 and one line"
for prog in "$LANECP" "$agent"; do
	for v in LANECP_AEAD_EPOCH=1 LANECP_MAX_RUNS=x LANECP_HASH_FRAME=x; do
		rc=0
		env "$v" "$prog" --agent </dev/null >/dev/null 2>"$d/agent.err" || rc=$?
		[[ $rc == 2 ]] || { lc__show "$d/agent.err"; lc_fail "$prog $v: exit $rc, expected 2"; }
		lc_log_has "^agent: ${v%%=*}=" "$d/agent.err"
		[[ $(wc -l <"$d/agent.err") == 1 ]] || { lc__show "$d/agent.err"; lc_fail "$prog $v: not one line"; }
	done
done

lc_note "a remote agent's bad value fails the copy, naming the variable"
rm -f "$d/remote/f"
rc=0
lc__lanecp_run -T "env LANECP_AEAD_EPOCH=12 $LANECP" "$d/local/f" \
	"$H:$d/remote/f" || rc=$?
[[ $rc != 0 ]] || lc_fail "the copy ran with an agent that refused its setting"
lc_log_has 'LANECP_AEAD_EPOCH=12' "$LC_ERR"
[[ ! -e $d/remote/f ]] || lc_fail "a target was written"
