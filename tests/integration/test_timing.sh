#!/usr/bin/env bash
# Upper bounds on wall time, kept out of the functional tests (which only
# check that these things happen): ctest label timing, run serially
# (RUN_SERIAL), so a loaded machine or a sanitizer build does not turn a
# slow run into a failure of some other test.
#  - SIGKILL of the controller: the remote agent is gone within 2 s,
#    pushing and pulling (test_streams.sh checks that it goes at all);
#    no test hook needed, so it runs against the product build too;
#  - test_timing_stall.sh: a stalled copy with --timeout 4 ends within 20 s.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"
head -c $((32 << 20)) /dev/urandom >"$d/local/src"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# kill_within NAME SRC DST FIFO: SIGKILL the controller of a stalled copy
# (lc_kill_stalled_copy); its agent must be gone within 2 s.
kill_within() {
	local ms
	lc_kill_stalled_copy "$@"
	ms=$(($(now_ms) - LC_KILL_T0_MS))
	echo "$1: agent gone $ms ms after the controller"
	((ms <= 2000)) || lc_fail "$1: agent still ran $ms ms after the controller died"
}

lc_note "SIGKILL of the controller: remote agent (sink) gone within 2 s"
kill_within push "$d/local/src" "$H:$d/remote/fifo" "$d/remote/fifo"
lc_note "SIGKILL of the controller: remote agent (source) gone within 2 s"
kill_within pull "$H:$d/local/src" "$d/local/fifo" "$d/local/fifo"

echo PASS
