#!/usr/bin/env bash
#
# The agent's two entry points, `lanecp --agent` and `lanecp-agent`, take
# the same command line through one parser (src/agent/agent_main.c):
#   - the same options, as "--opt VALUE" and "--opt=VALUE", and the same
#     refusals (exit 2, one line naming the option);
#   - without --agent, lanecp refuses each agent-only option, whatever its
#     value (the agent's parser is the one that checks values): exit 2,
#     one line naming the option;
#   - under a forced command (no --transfer on the command line), each
#     finds the controller's transfer id in SSH_ORIGINAL_COMMAND and runs
#     again with it, where a later attempt's sink looks for it.
# No sshd needed: the agents read a pipe this test holds open.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

AGENT=$(dirname "$LANECP")/lanecp-agent
[[ -x $AGENT ]] || lc_fail "no lanecp-agent next to $LANECP"
T=$(mktemp -d)
lc_on_exit rm -rf "$T"
ID=0123456789abcdef0123456789abcdef

for prog in "$LANECP" "$AGENT"; do
	name=$(basename "$prog")
	lc_note "$name: refusals"
	lc_expect_exit 2 "$prog" --agent --bogus </dev/null
	lc_expect_exit 2 "$prog" --agent --transfer NOTHEX </dev/null
	lc_expect_exit 2 "$prog" --agent --transfer=NOTHEX </dev/null
	lc_expect_exit 2 "$prog" --agent --max-memory 1m </dev/null
	lc_expect_exit 2 "$prog" --agent --max-memory=64q </dev/null
	lc_expect_exit 2 "$prog" --agent --restrict </dev/null
	lc_expect_exit 2 "$prog" --agent --restrict= </dev/null
	"$prog" --agent --bogus </dev/null 2>"$T/err" || true
	lc_log_has "^$name: unknown option: --bogus\$" "$T/err"
	[[ $(wc -l <"$T/err") == 2 ]] || lc_fail "$name: not one line and a usage line: $(cat "$T/err")"

	lc_note "$name: both option forms accepted (then EOF without BYE: exit 1)"
	lc_expect_exit 1 "$prog" --agent --transfer=$ID --max-memory=40m \
		--restrict "$T" </dev/null
	lc_expect_exit 1 "$prog" --agent --transfer $ID --max-memory 40m \
		--restrict="$T" </dev/null

	lc_note "$name: a forced command's agent takes the id from SSH_ORIGINAL_COMMAND"
	mkfifo "$T/ctl"
	SSH_ORIGINAL_COMMAND="sh -c 'boot' x --transfer=$ID 4096" \
		"$prog" --agent --restrict "$T" <"$T/ctl" >/dev/null &
	pid=$!
	exec 9>"$T/ctl"
	# the agent execs itself with the id added: wait for that event
	for ((i = 0; i < 300; i++)); do
		tr '\0' ' ' <"/proc/$pid/cmdline" >"$T/cmdline" 2>/dev/null || true
		grep -q -- "--transfer $ID" "$T/cmdline" && break
		sleep 0.1
	done
	grep -q -- "--transfer $ID" "$T/cmdline" ||
		lc_fail "$name: the forced-command agent did not adopt the transfer id ($(cat "$T/cmdline"))"
	exec 9>&-
	rc=0
	wait "$pid" || rc=$?
	[[ $rc == 1 ]] || lc_fail "$name: the agent exited $rc at EOF, not 1"
	rm -f "$T/ctl"
done
lc_note "lanecp without --agent: each agent-only option refused by name"
for args in "--restrict $T" "--restrict=" "--max-memory 40m" "--max-memory=1m" \
	"--transfer $ID" "--transfer=NOTHEX"; do
	opt=${args%%[ =]*}
	# shellcheck disable=SC2086 # the option and its value are two words
	lc_expect_exit 2 "$LANECP" $args "$T/nofile" "nohost.invalid:/x" \
		</dev/null 2>"$T/err"
	lc_log_has "^lanecp: $opt only applies to --agent " "$T/err"
	[[ $(wc -l <"$T/err") == 1 ]] || lc_fail "$args: not one line: $(cat "$T/err")"
done
echo "ok"
