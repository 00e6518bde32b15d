#!/usr/bin/env bash
# IPv6 (issue #12, first part): the fixture sshd listens on ::1 only.
# lanecp reaches it through an ssh_config HostName ::1 and through a
# [::1]:path literal, push and pull, a file and a tree; the data streams
# connect to the address the controller used for SSH, so they go over IPv6
# too (nothing listens on 127.0.0.1 for this sshd).  ssh://[::1]:PORT/
# (issue 24 item 4) with a Host ::1 block that has no Port line.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

if ! ip -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/128'; then
	lc_skip "no IPv6 loopback (::1) on this machine"
	exit 0
fi
LC_SSHD_ADDR=::1
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/local/tree/sub" "$d/remote" "$d/back"
head -c $((5 << 20)) /dev/urandom >"$d/local/f"
head -c 70000 /dev/urandom >"$d/local/tree/sub/g"
echo small >"$d/local/tree/s"

lc_note "push through HostName ::1, -s 4, and the data streams on IPv6"
lc_lanecp -v -s 4 "$d/local/f" "$H:$d/remote/"
cmp "$d/local/f" "$d/remote/f" || lc_fail "push over IPv6 differs"
lc_log_has '4 data streams connected' "$LC_ERR"
lc_log_has 'data streams to ::1' "$LC_ERR"

lc_note "pull through a [::1]:path literal (known_hosts holds [::1]:port)"
# the same settings for the literal host (the port, the key)
sed 's/^Host .*/Host ::1/' "$LC_SSH_CONFIG" >"$d/ssh_config6"
LC_SSH_CONFIG=$d/ssh_config6 lc_lanecp -s 2 "[::1]:$d/remote/f" "$d/back/"
cmp "$d/local/f" "$d/back/f" || lc_fail "pull over IPv6 differs"

lc_note "ssh://[::1]:PORT//abs: the port from the URL, not the config"
lc_ssh_config "$d/ssh_config6np" Port=
sed -i 's/^Host .*/Host ::1/' "$d/ssh_config6np"
LC_SSH_CONFIG=$d/ssh_config6np lc_lanecp "$d/local/f" \
    "ssh://[::1]:$LC_SSHD_PORT/$d/remote/url-f"
cmp "$d/local/f" "$d/remote/url-f" || lc_fail "ssh://[::1]:PORT push differs"

lc_note "a tree, both ways"
lc_lanecp -r "$d/local/tree" "$H:$d/remote/"
diff -r "$d/local/tree" "$d/remote/tree" || lc_fail "tree push differs"
lc_lanecp -r "$H:$d/remote/tree" "$d/back/"
diff -r "$d/local/tree" "$d/back/tree" || lc_fail "tree pull differs"

echo PASS
