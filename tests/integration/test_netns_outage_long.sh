#!/usr/bin/env bash
# test_netns_outage.sh with a 120 s outage: longer than SSH's keepalive
# (ServerAliveInterval 15 x ServerAliveCountMax 3), so the control
# connection dies during the cut and the copy must succeed on a later
# attempt (--json "attempts" >= 2) that takes over the stale agent's part
# file (src/fs/lockholder.c); identical result, no agent left afterwards.
# In its own file to keep test_netns_outage.sh short.
export LC_NS_OUTAGES=120 LC_NS_OUTAGE_MIN_ATTEMPTS=2
exec bash "$LC_SRC_DIR/tests/integration/test_netns_outage.sh"
