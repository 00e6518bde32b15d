#!/usr/bin/env bash
# lanecp over an emulated network (netns.sh): namespaces a and b joined by
# wanem at 100 Mbit/s, 10 ms one way.  A push from a to b compared with
# cmp; a filter that lets only SSH (port 22) from a to b, dropping and then
# rejecting the data streams (--direct fails with status 8, a plain copy
# falls back to its data streams over SSH); IPv6 on the emulated link; a 5 s outage in
# the middle of a copy with --retries.  After each copy no agent is left in
# either namespace.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
. "$LC_SRC_DIR/tests/integration/netns.sh"

lc_netns_need
LINK=rate=100m,delay=10ms
lc_netns_up pair "$LINK"
lc_netns_sshd b

d=$LC_NS_DIR
mkdir -p "$d/src" "$d/dst" "$d/dst6" "$d/drop" "$d/reject" "$d/cut"
head -c $((20 << 20)) /dev/urandom >"$d/src/f"

lc_note "push a -> b over the emulated link, -s 4"
lc_netns_lanecp a -v -s 4 "$d/src/f" "b:$d/dst/"
cmp "$d/src/f" "$d/dst/f" || lc_fail "push over the emulated link differs"
lc_log_has 'data streams to 10\.77\.0\.2' "$LC_ERR"
lc_netns_wait_no_agents 60

# Without -w the sink fixes its receive buffer where rmem_max and
# tcp_rmem allow 32 MiB over the streams (at most 16 MiB a stream), as
# read in its own namespace; else autotuning, and --json says 0.
lc_note "-s 16 without -w: the sink's own receive buffer, from its /proc"
head -c $((1 << 20)) /dev/urandom >"$d/src/small"
rm_max=$(lc_netns_exec b cat /proc/sys/net/core/rmem_max)
tcp_max=$(lc_netns_exec b cat /proc/sys/net/ipv4/tcp_rmem | awk '{ print $3 }')
want=$(awk -v a="$rm_max" -v b="$tcp_max" 'BEGIN { v = a < b ? a : b;
    if (v > 16777216) v = 16777216; print (v * 16 >= 33554432 ? v : 0) }')
lc_netns_lanecp a -v -s 16 --json "$d/src/small" "b:$d/dst/" >"$d/js16"
cmp "$d/src/small" "$d/dst/small" || lc_fail "-s 16 push differs"
lc_log_has "\"window\":$want," "$d/js16"
if [[ $want == 0 ]]; then
	lc_log_has 'window autotuned' "$LC_ERR"
else
	lc_log_has "window [0-9.]+ [KMG]iB \\(receiver's fixed buffer\\)" "$LC_ERR"
fi
lc_netns_wait_no_agents 60

lc_note "filter a->b: TCP to port 22 only, dropped: --direct data streams cannot connect"
lc_netns_up pair "$LINK" tcp=22,drop
lc_netns_lanecp_expect a 8 \
    'data stream connect to 10\.77\.0\.2 port [0-9]+: timed out' \
    --direct "$d/src/f" "b:$d/drop/"
[[ $(lc_netns_stat ab 'a>b' f_port) -gt 0 ]] || lc_fail "wanem filtered nothing"
lc_netns_wait_no_agents 60

lc_note "the same without --direct: the copy falls back to another data path"
lc_netns_lanecp a -v "$d/src/f" "b:$d/drop/"
cmp "$d/src/f" "$d/drop/f" || lc_fail "push after the fallback differs"
lc_log_has 'timed out; trying another data path' "$LC_ERR"
lc_log_has 'data path: via SSH' "$LC_ERR"
lc_netns_wait_no_agents 60

lc_note "the filter rejecting (TCP RST from wanem): --direct fails at once"
lc_netns_up pair "$LINK" tcp=22,reject
lc_netns_lanecp_expect a 8 \
    'data stream connect to 10\.77\.0\.2 port [0-9]+: Connection refused' \
    --direct "$d/src/f" "b:$d/reject/"
[[ $(lc_netns_stat ab 'a>b' f_rst) -gt 0 ]] || lc_fail "wanem sent no RST"
lc_netns_wait_no_agents 60

lc_note "IPv6 on the emulated link: push to [fd77::2]:path"
lc_netns_up pair "$LINK"
lc_netns_lanecp a -v -s 2 "$d/src/f" "[fd77::2]:$d/dst6/"
cmp "$d/src/f" "$d/dst6/f" || lc_fail "push over IPv6 differs"
lc_log_has 'data streams to fd77::2' "$LC_ERR"
lc_netns_wait_no_agents 60

lc_note "a 5 s outage in the middle of a copy, --retries 3"
head -c $((60 << 20)) /dev/urandom >"$d/src/big"
log=$d/cut.log
ip netns exec "$(lc_netns_name a)" "$LANECP" -F "$LC_NS_SSH_CONFIG" -v \
    --retries 3 "$d/src/big" "b:$d/cut/" 2>"$log" &
copy=$!
lc_on_exit "kill $copy"
lc_wait_size "$d/cut/.big.lanecp-part" $((15 << 20)) 120
lc_netns_cut
[[ -e $d/cut/.big.lanecp-part ]] || lc_fail "the copy ended before the cut"
[[ -n $(lc_netns_agents) ]] || lc_fail "no agent seen in b during the copy"
sleep 5		# the outage: a chosen length, not a wait for an event
lc_netns_restore
rc=0
wait "$copy" || rc=$?
if [[ $rc != 0 ]]; then
	lc__show "$log"
	lc_fail "copy across the outage exited $rc"
fi
cmp "$d/src/big" "$d/cut/big" || lc_fail "copy across the outage differs"
grep -E 'retry|reconnect|resum' "$log" | sed 's/^/    /' || true
[[ $(lc_netns_stat ab 'a>b' drop_cut) -gt 0 ]] || lc_fail "the cut lost nothing"
lc_netns_wait_no_agents 60

echo PASS
