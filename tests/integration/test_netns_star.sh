#!/usr/bin/env bash
# The star topology of netns.sh: hosts a and b cannot reach each other; c
# (the controller) reaches both over its own emulated links (50 Mbit/s,
# 5 ms one way).  lanecp in c pushes to b and pulls from a, over IPv4 and
# IPv6, and copies a -> b (relayed); --also a b: the hop a -> b cannot
# connect and is not relayed, b is copied from c instead; a cut of link cb does not disturb link ca.  No agent is left in
# any namespace.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
. "$LC_SRC_DIR/tests/integration/netns.sh"

lc_netns_need
lc_netns_up star rate=50m,delay=5ms
lc_netns_sshd a
lc_netns_sshd b

d=$LC_NS_DIR
mkdir -p "$d/src" "$d/at_b" "$d/at_c" "$d/at_c6"
head -c $((4 << 20)) /dev/urandom >"$d/src/f"

lc_note "a and b cannot reach each other, c reaches both"
for t in "a $LC_NS_ADDR_b" "b $LC_NS_ADDR_a" "a $LC_NS_ADDR6_b"; do
	from=${t%% *} to=${t#* }
	if lc_netns_tcp "$from" "$to"; then
		lc_fail "$from reached $to:22 in the star topology"
	fi
done
for t in $LC_NS_ADDR_a $LC_NS_ADDR_b $LC_NS_ADDR6_a $LC_NS_ADDR6_b; do
	lc_netns_tcp c "$t" ||
		lc_fail "c cannot reach $t:22"
done

lc_note "lanecp in c: push to b, pull from a (IPv4), pull from a (IPv6)"
lc_netns_lanecp c -s 2 "$d/src/f" "b:$d/at_b/"
cmp "$d/src/f" "$d/at_b/f" || lc_fail "push c -> b differs"
lc_netns_lanecp c -s 2 "a:$d/src/f" "$d/at_c/"
cmp "$d/src/f" "$d/at_c/f" || lc_fail "pull a -> c differs"
lc_netns_lanecp c -v "[$LC_NS_ADDR6_a]:$d/src/f" "$d/at_c6/"
cmp "$d/src/f" "$d/at_c6/f" || lc_fail "pull a -> c over IPv6 differs"

lc_note "lanecp in c copies a -> b: no direct path, relayed through c"
mkdir -p "$d/a_to_b"
lc_netns_lanecp c -v "a:$d/src/f" "b:$d/a_to_b/"
cmp "$d/src/f" "$d/a_to_b/f" || lc_fail "copy a -> b through c differs"
lc_log_has 'data path: relay' "$LC_ERR"
lc_netns_wait_no_agents 60

lc_note "--also a, then b: the hop a -> b cannot connect (direct or" \
    "reversed; never relayed), so b is copied from c, and -v says so"
mkdir -p "$d/ch_a" "$d/ch_b"
lc_netns_lanecp c -v -s 2 "$d/src/f" "a:$d/ch_a/" --also "b:$d/ch_b/"
cmp "$d/src/f" "$d/ch_a/f" || lc_fail "--also: a's copy differs"
cmp "$d/src/f" "$d/ch_b/f" || lc_fail "--also: b's copy differs"
lc_log_has "target 2 of 2: b:$d/ch_b/, from a:$d/ch_a/ \\(chain\\)" "$LC_ERR"
lc_log_has "target 2 of 2 b:$d/ch_b/: the hop from a:$d/ch_a/ failed: .*; copying it from this host" \
    "$LC_ERR"
lc_log_has "target 2 of 2 b:$d/ch_b/: ok, from this host: the hop from a:" \
    "$LC_ERR"
lc_log_lacks 'data path: (relay|ssh)' "$LC_ERR"
[[ -z $(find "$d/ch_b" -name '*lanecp-part*') ]] ||
	lc_fail "the failed hop left a partial file in $d/ch_b"
lc_netns_wait_no_agents 60

lc_note "link cb cut: a connect from c to b is lost, c still reaches a;" \
    "restored: the connect goes through (SYN retransmitted)"
lc_netns_cut cb
lc_netns_tcp c "$LC_NS_ADDR_b" &
conn=$!
lc_on_exit "kill $conn"
for ((i = 0; i < 300; i++)); do
	(($(lc_netns_stat cb 'a>b' drop_cut) > 0)) && break
	sleep 0.1
done
(($(lc_netns_stat cb 'a>b' drop_cut) > 0)) ||
	lc_fail "the SYN to b was not lost on the cut link"
lc_netns_tcp c "$LC_NS_ADDR_a" ||
	lc_fail "cutting cb cut ca"
lc_netns_restore cb
wait "$conn" || lc_fail "no connection to b after the restore"

echo PASS
