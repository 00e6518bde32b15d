#!/usr/bin/env bash
# HOLE frames within the sink's memory bound (issue 20, item 4).  A hole
# takes no receive buffer, but one that the writer cannot take yet waits
# in memory; the client of a restricted key (controller and source against
# "lanecp --agent --restrict DIR --max-memory 32m") sends 400 files of
# 4096 holes that never become writable.  The agent's peak RSS must stay
# under its bound: waiting holes count in the sink's one memory budget,
# and past it the stream waits for the writer (its -v log says so), so
# the attacker only stalls its own copy.  A restricted agent also grants
# at most 512 files in flight (what an honest controller starts with),
# whatever SINK_TARGET asks, which bounds the per-file state.  tests/tools/lc_evil_source.c is the
# attacker.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
jail=$d/jail
mkdir -p "$jail/evil"
bound_mib=32
sanitized=0
if ldd "$LANECP" 2>/dev/null | grep -E 'lib(a|t)san' >/dev/null; then
	sanitized=1
fi

ssh-keygen -q -t ed25519 -N '' -f "$d/cron_key" </dev/null
printf 'restrict,command="%s --agent --restrict %s --max-memory %sm" %s\n' \
	"$LANECP" "$jail" "$bound_mib" "$(cat "$d/cron_key.pub")" >>"$d/authorized_keys"
lc_ssh_config "$d/cron_config" IdentityFile="$d/cron_key"
# evil [-n] ATTACK ARGS...: the attacker through the restricted key
evil() {
	local o=()
	[[ $1 != -n ]] || { o=(-n); shift; }
	"$LC_TOOLS_DIR/lc_evil_source" ${o[@]+"${o[@]}"} -F "$d/cron_config" "$H" "$@"
}

no_sanitizer() {
	if grep -Eq 'Sanitizer|runtime error:' "$1"; then
		lc__show "$1"
		lc_fail "sanitizer report in $1"
	fi
}

lc_note "a restricted agent grants at most 512 files in flight"
evil inflight 65536 >"$d/i.out" 2>"$d/i.err" || { lc__show "$d/i.err"; lc_fail "lc_evil_source failed"; }
no_sanitizer "$d/i.err"
lc_log_has "^outcome: TARGET_OK inflight 512$" "$d/i.out"
evil inflight 4096 >"$d/i.out" 2>"$d/i.err" || { lc__show "$d/i.err"; lc_fail "lc_evil_source failed"; }
lc_log_has "^outcome: TARGET_OK inflight 512$" "$d/i.out"
evil inflight 100 >"$d/i.out" 2>"$d/i.err" || { lc__show "$d/i.err"; lc_fail "lc_evil_source failed"; }
lc_log_has "^outcome: TARGET_OK inflight 100$" "$d/i.out"
evil inflight 65537 >"$d/i.out" 2>"$d/i.err" || { lc__show "$d/i.err"; lc_fail "lc_evil_source failed"; }
lc_log_has "^outcome: ERROR 12 SINK_TARGET: 65537 files in flight asked for \(1 to 65536\)" "$d/i.out"

lc_note "400 files x 4096 waiting holes against --max-memory ${bound_mib}m"
evil -n holes 400 4096 >"$d/h.out" 2>"$d/h.err" &
tool=$!
lc_on_exit "kill $tool 2>/dev/null"
# Either the agent read every frame (its memory holds them all), or it
# stopped reading at its bound and said so: wait for one of the two.
state=
for ((i = 0; i < 6000; i++)); do
	if grep -q "holes: all consumed" "$d/h.out"; then
		state=consumed
	elif grep -q "holes waiting in the writers reached the memory bound" "$d/h.err"; then
		state=bounded
	elif ! kill -0 "$tool" 2>/dev/null; then
		state=ended
	fi
	[[ -z $state ]] || break
	sleep 0.1
done
[[ -n $state ]] || { lc__show "$d/h.err"; lc_fail "timed out waiting for the agent"; }
hwm=0
for p in $(lc_pids_matching "--agent --restrict $jail"); do
	k=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$p/status" 2>/dev/null || true)
	[[ -n $k ]] && ((k > hwm)) && hwm=$k
done
kill "$tool" 2>/dev/null || true
wait "$tool" 2>/dev/null || true
cat "$d/h.out"
no_sanitizer "$d/h.err"
((hwm > 0)) || lc_fail "no agent process found (--agent --restrict $jail)"
lc_note "agent: $state; peak RSS $((hwm >> 10)) MiB (VmHWM $hwm kB), bound $bound_mib MiB"
[[ $state == bounded ]] || { lc__show "$d/h.err"; lc_fail "the agent did not bound the waiting holes ($state)"; }
if [[ $sanitized == 1 ]]; then
	lc_skip "sanitizer build: the peak RSS is not compared (shadow memory)"
else
	((hwm <= bound_mib << 10)) ||
		lc_fail "the restricted agent peaked at $hwm kB, over its --max-memory ${bound_mib}m"
fi
echo PASS
