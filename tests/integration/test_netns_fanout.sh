#!/usr/bin/env bash
# --also's chain (issue 25 part 1) over emulated links: this host (c, the
# controller) and three targets a, b and d, each in its own network
# namespace with its own sshd.  a and b hang off c on netns.sh's star
# (wanem links ca and cb, 30 Mbit/s, 2 ms one way), d on a veth pair
# limited by tbf to 30 Mbit/s; c forwards between them, so the targets
# reach each other and each hop goes target to target.
#
# * Target 2 unreachable from target 1 (a's route to b and b's to a made
#   "unreachable"): the hop a -> b cannot connect, direct or reversed
#   (never relayed through this host), b is copied from
#   this host, d from b; all three trees equal the source, exit 0, and -v
#   and --json's "from"/"from_why" say what happened.
# * The middle target killed mid-copy (once the hop a -> b has written
#   part of a file, b's sshd and agent are killed: the host is gone): the
#   copy of b from this host is refused too, b's line says incomplete
#   and why, d is copied from this host, exit 23, --json says which.
#   With b's sshd back, a re-run with -a -u completes only b (from a,
#   resuming the part file) and copies nothing to a and d: exit 0.
# No agent is left in any namespace.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
. "$LC_SRC_DIR/tests/integration/netns.sh"

lc_netns_need
lc_netns_up star rate=30m,delay=2ms
lc_netns_spoke d 30mbit
lc_netns_forward
for x in a b d; do
	lc_netns_sshd "$x"
done

d=$LC_NS_DIR
umask 022
src=$d/src
mkdir -p "$src/sub"
head -c $((3 << 20)) /dev/urandom >"$src/big1"
head -c $((3 << 20)) /dev/urandom >"$src/sub/big2"
echo one >"$src/one"
echo two >"$src/sub/two"
chmod 0640 "$src/one"
touch -d '2020-01-02 03:04:05' "$src/sub/two"


lc_note "the targets reach each other through c"
for t in "a $LC_NS_ADDR_b" "b $LC_NS_ADDR_d" "d $LC_NS_ADDR_a"; do
	lc_netns_tcp "${t%% *}" "${t#* }" ||
		lc_fail "${t%% *} cannot reach ${t#* }:22 through c"
done

lc_note "target 2 unreachable from target 1: b from this host, d from b"
lc_netns_block a b
if lc_netns_tcp a "$LC_NS_ADDR_b" || lc_netns_tcp b "$LC_NS_ADDR_a"; then
	lc_fail "a and b still reach each other"
fi
lc_netns_tcp c "$LC_NS_ADDR_b" || lc_fail "c cannot reach b"
lc_netns_tcp b "$LC_NS_ADDR_d" || lc_fail "b cannot reach d"
lc_netns_lanecp c -v -r -p -s 2 --json "$src" "a:$d/u1/" \
    --also "b:$d/u2/" --also "d:$d/u3/" >"$d/out"
for t in u1 u2 u3; do
	lc_same_tree "$src" "$d/$t/src"
done
lc_log_has "target 2 of 3: b:$(lc_re "$d")/u2/, from a:$(lc_re "$d")/u1/ \\(chain\\)" \
    "$LC_ERR"
lc_log_has "target 2 of 3 b:$(lc_re "$d")/u2/: the hop from a:$(lc_re "$d")/u1/ failed: .*; copying it from this host" \
    "$LC_ERR"
lc_log_has "target 2 of 3 b:$(lc_re "$d")/u2/: ok, from this host: the hop from a:$(lc_re "$d")/u1/ failed: " \
    "$LC_ERR"
lc_log_has "target 3 of 3 d:$(lc_re "$d")/u3/: ok, from b:$(lc_re "$d")/u2/ \\(chain\\), copied 4 files" \
    "$LC_ERR"
lc_log_lacks 'data path: (relay|ssh)' "$LC_ERR"
[[ -z $(find "$d/u2" -name '*lanecp-part*') ]] ||
	lc_fail "the failed hop left a partial file in $d/u2"
lc_json_check "$d/out" '
assert [o["ok"] for o in j] == [True] * 3, j
assert [o["exit_status"] for o in j] == [0] * 3, j
assert [o["from"] for o in j] == ["this host", "this host", j[1]["target"]], j
assert j[0]["from_why"] == "" and j[2]["from_why"] == "", j
assert j[1]["from_why"].startswith("the hop from %s failed: " %
    j[0]["target"]), j[1]
# direct, then reversed: b cannot dial a either
assert "reverse: data stream connect to" in j[1]["from_why"], j[1]
assert j[1]["from_why"].endswith("No route to host"), j[1]
assert [o["copied"] for o in j] == [4] * 3, j'
cp "$LC_ERR" "$d/unreachable.err"
lc_netns_unblock a b
lc_netns_wait_no_agents 60

lc_note "the middle target killed mid-copy: exit 23, then -a -u completes it"
err=$d/kill.err
# -B 256k: -a's chunks are 256 KiB, so the part file's first 512 KiB,
# written before the kill, are kept by the re-run
ip netns exec "$(lc_netns_name c)" "$LANECP" -F "$LC_NS_SSH_CONFIG" -v -r -p \
    -s 2 -B 256k --json "$src" "a:$d/k1/" --also "b:$d/k2/" --also "d:$d/k3/" \
    >"$d/out" 2>"$err" &
pid=$!
lc_on_exit "kill $pid"
lc_wait_for "target 2 of 3: b:$(lc_re "$d")/k2/, from a:.*\\(chain\\)" "$err" 120
# the hop has written 512 KiB of a file at b
part() { find "$d/k2" -name '*.lanecp-part' -size +511k 2>/dev/null; }
for ((i = 0; i < 1200; i++)); do
	[[ -n $(part) ]] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
[[ -n $(part) ]] ||
	{ lc__show "$err"; lc_fail "no part file at b during the hop"; }
lc_netns_sshd_kill b
rc=0
wait "$pid" || rc=$?
[[ $rc == 23 ]] || { lc__show "$err"; lc_fail "exit $rc, want 23"; }
lc_same_tree "$src" "$d/k1/src"
lc_same_tree "$src" "$d/k3/src"
if diff -r "$src" "$d/k2/src" >/dev/null 2>&1; then
	lc_fail "b's tree is complete after its kill"
fi
lc_log_has "target 2 of 3 b:$(lc_re "$d")/k2/: the hop from a:$(lc_re "$d")/k1/ failed: .*; copying it from this host" \
    "$err"
lc_log_has "target 2 of 3 b:$(lc_re "$d")/k2/: incomplete, exit 3, from this host: the hop from a:$(lc_re "$d")/k1/ failed: .*: .*refused" \
    "$err"
# d's hop runs beside b's (the overlapped chain) from b's agent: it
# loses b when b's does, or is told b is incomplete; either way d is
# copied from this host
lc_log_has "target 3 of 3 d:$(lc_re "$d")/k3/: ok, from this host: (target 2 b:$(lc_re "$d")/k2/ incomplete|the hop from b:$(lc_re "$d")/k2/ failed: )" \
    "$err"
lc_json_check "$d/out" '
assert [o["ok"] for o in j] == [True, False, True], j
assert [o["exit_status"] for o in j] == [0, 3, 0], j
assert [o["from"] for o in j] == ["this host"] * 3, j
assert j[1]["from_why"].startswith("the hop from %s failed: " %
    j[0]["target"]), j[1]
assert "refused" in j[1]["error"], j[1]
assert (j[2]["from_why"] == "target 2 %s incomplete" % j[1]["target"] or
    j[2]["from_why"].startswith("the hop from %s failed: " %
    j[1]["target"])), j[2]'
lc_netns_wait_no_agents 60

lc_netns_sshd_again b
lc_netns_lanecp c -v -r -p -a -u -s 2 -B 256k --json "$src" "a:$d/k1/" \
    --also "b:$d/k2/" --also "d:$d/k3/" >"$d/out"
for t in k1 k2 k3; do
	lc_same_tree "$src" "$d/$t/src"
done
[[ -z $(find "$d/k2" -name '*lanecp-part*') ]] ||
	lc_fail "a partial file was left in $d/k2"
lc_json_check "$d/out" '
assert all(o["ok"] for o in j), j
assert j[0]["from"] == "this host", j[0]
assert j[1]["from"] == j[0]["target"] and j[2]["from"] == j[1]["target"], j
for o in (j[0], j[2]):
    assert o["copied"] == 0 and o["updated"] == 0 and o["bytes"] == 0, o
assert j[1]["copied"] + j[1]["updated"] >= 1, j[1]
assert j[1]["skipped"] + j[1]["copied"] + j[1]["updated"] == 4, j[1]
assert j[1]["resumed_bytes"] > 0, j[1]'
lc_netns_wait_no_agents 60

echo PASS
