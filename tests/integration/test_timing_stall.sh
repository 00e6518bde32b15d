#!/usr/bin/env bash
# Upper bounds on wall time, kept out of the functional tests (which only
# check that these things happen): ctest label timing, run serially
# (RUN_SERIAL), so a loaded machine or a sanitizer build does not turn a
# slow run into a failure of some other test.
#  - a stalled copy with --timeout 4 ends within 20 s (test_reliability.sh
#    checks the exit status and the message).  The stall is made by the
#    test proxy (a test hook): SKIPPED in a build without hooks.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_need_test_hooks
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"
head -c $((32 << 20)) /dev/urandom >"$d/local/src"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

lc_note "a stalled copy with --timeout 4 ends within 20 s"
t0=$(now_ms)
LANECP_TEST_PROXY=$LC_TOOLS_DIR/lc_proxy LC_PROXY_STALL=0:2000000 \
	lc_lanecp_expect 11 "no progress for 4 s" \
	-f -s 1 --timeout 4 --stream-timeout 0 "$d/local/src" "$H:$d/remote/t.bin"
ms=$(($(now_ms) - t0))
echo "--timeout 4: ended after $ms ms"
((ms < 20000)) || lc_fail "--timeout 4 took $ms ms"

echo PASS
