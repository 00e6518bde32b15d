#!/usr/bin/env bash
# Data paths (issue #12) through the fixture sshd on loopback:
#   * -z (reverse: the sink dials the source), push and pull, a file and a
#     tree, byte for byte, -v naming the path;
#   * --relay between two "remote" hosts (two aliases of the fixture):
#     both agents listen, the controller joins the streams;
#   * a stranger that connects to a reverse source's data port first gets
#     nothing and does not stop the copy;
#   * the automatic fallback (the test hook hands out a closed port in
#     CONNECT and DIAL): direct, then reverse, then the relay (host to
#     host) or SSH, each step said on stderr and in --json, none counted
#     as a retry;
#   * --via-ssh push, pull and host to host (one SSH connection per
#     stream), and against a server with MaxStartups 1;
#   * the fallback of a push goes over SSH;
#   * an explicit path does not fall back: --direct with the ports closed
#     fails with the stream exit status (8), naming the port.
# The namespace tests (test_netns*.sh) do the same through real filters.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/local/tree/sub" "$d/remote" "$d/back" "$d/r2" "$d/r3" "$d/r4"
head -c $((12 << 20)) /dev/urandom >"$d/local/f"
head -c 70000 /dev/urandom >"$d/local/tree/sub/g"
echo small >"$d/local/tree/s"
# a second alias for the same sshd: "host to host" for the controller
sed "s/^Host $H\$/Host $H $H-b/" "$LC_SSH_CONFIG" >"$d/ssh_config2"
export LC_SSH_CONFIG=$d/ssh_config2

lc_note "-z push: the remote sink dials this host"
lc_lanecp -v -z -s 4 "$d/local/f" "$H:$d/remote/"
cmp "$d/local/f" "$d/remote/f" || lc_fail "-z push differs"
lc_log_has "data path: reverse, root@$H dials this host|data path: reverse, [^ ]*@$H dials this host" "$LC_ERR"

lc_note "-z pull, and a tree"
lc_lanecp -v -z -s 3 "$H:$d/remote/f" "$d/back/"
cmp "$d/local/f" "$d/back/f" || lc_fail "-z pull differs"
lc_log_has 'data path: reverse, this host dials' "$LC_ERR"
lc_lanecp -z -r "$d/local/tree" "$H:$d/remote/"
diff -r "$d/local/tree" "$d/remote/tree" || lc_fail "-z tree differs"

# json ARGS...: lanecp -v --json, stdout in $LC_OUT, stderr in $LC_ERR
LC_OUT=$d/out.json
json() {
	LC_ERR=$d/lanecp.err
	"$LANECP" -F "$LC_SSH_CONFIG" -v --json "$@" >"$LC_OUT" 2>"$LC_ERR" ||
		{ lc__show "$LC_ERR"; lc_fail "lanecp $* failed"; }
}

lc_note "--relay host to host, --json names the path"
json --relay -s 4 "$H:$d/remote/f" "$H-b:$d/r2/"
cmp "$d/local/f" "$d/r2/f" || lc_fail "relay copy differs"
lc_log_has 'data path: relay, .* -> this host -> ' "$LC_ERR"
lc_log_has '"path":"relay"' "$LC_OUT"
lc_lanecp --relay -r "$H:$d/remote/tree" "$H-b:$d/r2/"
diff -r "$d/local/tree" "$d/r2/tree" || lc_fail "relay tree differs"

lc_note "--via-ssh: push, pull, host to host; no TLS inside SSH"
mkdir -p "$d/s1" "$d/s2" "$d/s3"
json --via-ssh -s 3 "$d/local/f" "$H:$d/s1/"
cmp "$d/local/f" "$d/s1/f" || lc_fail "--via-ssh push differs"
lc_log_has 'data path: via SSH x 3\)' "$LC_ERR"
lc_log_has 'data encrypted by SSH' "$LC_ERR"
lc_log_has '"path":"ssh"' "$LC_OUT"
lc_log_has '"encrypted":true' "$LC_OUT"
json --via-ssh -s 2 "$H:$d/s1/f" "$d/s2/"
cmp "$d/local/f" "$d/s2/f" || lc_fail "--via-ssh pull differs"
json --via-ssh -s 2 -r "$H:$d/remote/tree" "$H-b:$d/s3/"
diff -r "$d/local/tree" "$d/s3/tree" || lc_fail "--via-ssh host-to-host tree differs"

lc_note "--via-ssh against MaxStartups 1: connections opened at its pace"
lc_sshd_extra slow "MaxStartups 1:100:1"
lc_ssh_host_block slowhost "$LC_X_PORT" "$d/slow.known" >>"$LC_SSH_CONFIG"
echo "$LC_X_KNOWN" >"$d/slow.known"
mkdir -p "$d/s4"
json --via-ssh -s 8 "$d/local/f" "slowhost:$d/s4/"
cmp "$d/local/f" "$d/s4/f" || lc_fail "--via-ssh under MaxStartups 1 differs"
lc_log_has '"path":"ssh"' "$LC_OUT"
# all eight, or fewer with a warning that says so: never a failure
if ! grep -q '"streams":8' "$LC_OUT"; then
	lc_log_has 'the server accepted [0-9]+ of 8 SSH connections' "$LC_ERR"
fi

lc_note "--via-ssh to a server without TCP forwarding: exit 8, saying so"
lc_sshd_extra nofwd "AllowTcpForwarding no"
echo "$LC_X_KNOWN" >"$d/nofwd.known"
lc_ssh_host_block nofwdhost "$LC_X_PORT" "$d/nofwd.known" >>"$LC_SSH_CONFIG"
lc_lanecp_expect 8 "cannot connect the data streams: .*administratively prohibited" \
	--via-ssh -s 2 "$d/local/f" "nofwdhost:$d/s4/g"
[ ! -e "$d/s4/g" ] || lc_fail "a failed --via-ssh copy left its target"

lc_note "a stranger on a reverse source's data port gets nothing"
command -v ss >/dev/null || { lc_skip "ss (iproute2) not installed"; exit 0; }
# the local source listens (-z push); -x keeps it busy long enough for
# the stranger to find its ports (the lanecp process's listening sockets)
lc_lanecp_bg() { "$LANECP" -F "$LC_SSH_CONFIG" -q "$@" >"$d/bg.out" 2>"$d/bg.err" & BG=$!; }
lc_lanecp_bg -z -s 2 -x 4m "$d/local/f" "$H:$d/r3/"
lc_on_exit "kill $BG 2>/dev/null || true"
ports=""
end=$((SECONDS + 30))
while [ -z "$ports" ] && kill -0 "$BG" 2>/dev/null && ((SECONDS < end)); do
	ports=$({ ss -Hltnp 2>/dev/null || true; } | { grep "pid=$BG," || true; } |
		awk '{ n = split($4, a, ":"); print a[n] }' | sort -u | tr '\n' ' ')
	[ -n "$ports" ] || sleep 0.05
done
[ -n "$ports" ] || lc_fail "no listening data port of the -z source found"
for p in $ports; do
	# garbage instead of a TLS ServerHello; record what the source says
	{ printf 'GET / HTTP/1.0\r\n\r\n'; } | timeout 20 bash -c \
		"exec 3<>/dev/tcp/127.0.0.1/$p; cat >&3; cat <&3" \
		>"$d/stranger.$p" 2>/dev/null || true
done
wait "$BG" || lc_fail "-z copy with a stranger on its port failed: $(cat "$d/bg.err")"
cmp "$d/local/f" "$d/r3/f" || lc_fail "-z copy with a stranger differs"
for p in $ports; do
	got=$(stat -c %s "$d/stranger.$p")
	[ "$got" -lt 4096 ] || lc_fail "the stranger on port $p got $got bytes"
done

# ---- fallback: the test hook gives the source a closed port ----
if "$LANECP" --test-hooks >/dev/null 2>&1; then
	closed=$(lc_free_port)
	cat >"$d/closed.sh" <<EOF
#!/bin/sh
# LANECP_TEST_PROXY: answer every data port with one nothing listens on
shift; for p in "\$@"; do printf '%s ' $closed; done; echo
EOF
	chmod +x "$d/closed.sh"

	# closed only the first time: the direct path fails, reverse works
	cat >"$d/closed-once.sh" <<EOF
#!/bin/sh
shift
if [ -e "$d/closed-once.done" ]; then echo "\$@"; exit 0; fi
: >"$d/closed-once.done"
for p in "\$@"; do printf '%s ' $closed; done; echo
EOF
	chmod +x "$d/closed-once.sh"

	lc_note "direct ports closed, push: falls back to reverse, which works"
	mkdir -p "$d/r6"
	LANECP_TEST_PROXY=$d/closed-once.sh json -s 2 "$d/local/f" "$H:$d/r6/"
	cmp "$d/local/f" "$d/r6/f" || lc_fail "fallback to reverse differs"
	lc_log_has "port $closed.*trying another data path" "$LC_ERR"
	lc_log_has '"path":"reverse"' "$LC_OUT"

	lc_note "direct and reverse closed, host to host: falls back to the relay"
	LANECP_TEST_PROXY=$d/closed.sh json -s 2 "$H:$d/remote/f" "$H-b:$d/r4/"
	cmp "$d/local/f" "$d/r4/f" || lc_fail "fallback copy differs"
	lc_log_has "port $closed.*trying another data path" "$LC_ERR"
	lc_log_has "reverse: .*port $closed.*trying another data path" "$LC_ERR"
	lc_log_has 'data path: relay, .* because .*port '"$closed" "$LC_ERR"
	lc_log_has '"path":"relay"' "$LC_OUT"
	lc_log_has '"attempts":1' "$LC_OUT"

	lc_note "direct and reverse closed, push: falls back to SSH"
	mkdir -p "$d/r5"
	LANECP_TEST_PROXY=$d/closed.sh json -s 2 "$d/local/f" "$H:$d/r5/"
	cmp "$d/local/f" "$d/r5/f" || lc_fail "fallback push differs"
	lc_log_has 'data path: via SSH x 2, because .*port '"$closed" "$LC_ERR"
	lc_log_has '"path":"ssh"' "$LC_OUT"

	lc_note "--direct does not fall back (exit 8, naming the port)"
	LANECP_TEST_PROXY=$d/closed.sh lc_lanecp_expect 8 \
		"data stream connect to 127.0.0.1 port $closed" \
		--direct -s 2 "$d/local/f" "$H:$d/r4/g"
	[ ! -e "$d/r4/g" ] || lc_fail "--direct left a target behind"
fi

echo PASS
