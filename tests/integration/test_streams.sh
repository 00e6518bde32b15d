#!/usr/bin/env bash
# Data stream safety and agent lifetime:
#  - strangers connecting to the data ports mid-copy are logged with their
#    address and dropped; the copy still succeeds byte for byte;
#  - when the controller is killed (SIGKILL) the remote agent exits,
#    pushing and pulling (how fast: test_timing.sh, label timing).
# A FIFO target whose reader waits keeps the copy in flight for as long as
# the test needs.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_need_test_hooks	# LANECP_TEST_PROXY
# strangers write to sockets the sink may already have closed
trap '' PIPE
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"
head -c $((32 << 20)) /dev/urandom >"$d/local/src"


# stranger_test MODE: a copy is held in flight (the FIFO reader waits until
# both strangers were dropped) while three strangers connect to its data ports: one speaks the plain
# handshake with a made-up MAC, one speaks HTTP, one says nothing.  The first
# two are logged with their address and dropped; the copy succeeds.
stranger_test() {
	local mode=$1 flag=() want_auth
	if [[ $mode == plain ]]; then
		flag=(--no-encrypt)
		want_auth='authentication failed \(wrong transfer key\)'
	else
		want_auth='TLS handshake failed'
	fi
	rm -f "$d/remote/fifo" "$d/remote/out" "$d/go"
	mkfifo "$d/remote/fifo"
	{ while [[ ! -e $d/go ]]; do sleep 0.05; done; cat; } \
		<"$d/remote/fifo" >"$d/remote/out" &
	local reader=$!
	lc_on_exit "lc__kill_tree $reader"
	"$LANECP" -F "$LC_SSH_CONFIG" -vv -s 3 -f "${flag[@]}" "$d/local/src" \
		"$H:$d/remote/fifo" 2>"$d/push-$mode.log" &
	local copy=$!
	lc_on_exit "kill -9 $copy"
	lc_wait_for 'data ports [0-9,]+' "$d/push-$mode.log" 10
	local ports p0 p1 p2
	ports=$(grep -Eo 'data ports [0-9,]+' "$d/push-$mode.log" | head -1 |
		cut -d' ' -f3)
	IFS=, read -r p0 p1 p2 <<<"$ports"
	exec 5<>"/dev/tcp/127.0.0.1/$p0"
	if [[ $mode == plain ]]; then
		head -c 40 <&5 >/dev/null
		{ printf 'LCDC\x00\x00\x00\x00'; head -c 64 /dev/urandom; } >&5
	else
		# a TLS ClientHello-shaped record with junk inside
		{ printf '\x16\x03\x01\x00\x40'; head -c 64 /dev/urandom; } >&5
	fi
	exec 6<>"/dev/tcp/127.0.0.1/$p1"
	printf 'GET / HTTP/1.0\r\n\r\n%.0s' 1 2 3 4 5 >&6
	exec 7<>"/dev/tcp/127.0.0.1/$p2"
	lc_wait_for "dropped data connection from 127\\.0\\.0\\.1 port [0-9]+: $want_auth" \
		"$d/push-$mode.log" 10
	lc_wait_for 'dropped data connection from 127\.0\.0\.1 port [0-9]+: .*(not a lanecp data stream|TLS handshake failed)' \
		"$d/push-$mode.log" 10
	: >"$d/go"
	local rc=0
	wait "$copy" || rc=$?
	wait "$reader" || true
	exec 5>&- 6>&- 7>&-
	[[ $rc == 0 ]] || {
		lc__show "$d/push-$mode.log"
		lc_fail "$mode copy with strangers exited $rc"
	}
	cmp "$d/local/src" "$d/remote/out" ||
		lc_fail "$mode copy with strangers differs"
	[[ $(grep -c 'dropped data connection' "$d/push-$mode.log") -ge 2 ]] ||
		lc_fail "$mode: expected two dropped connections"
	lc_log_lacks 'Sanitizer|runtime error:' "$d/push-$mode.log"
}

lc_note "strangers on the data ports mid-copy are dropped and logged (TLS)"
stranger_test tls
lc_note "strangers on the data ports mid-copy are dropped and logged (--no-encrypt)"
stranger_test plain

# Every handshake of a 64-stream copy in flight at once: a test proxy holds
# each chunk 300 ms (a long path), so the sink has all 64 connections in
# their handshake together.  None may be turned away for lack of room.
lc_note "64 streams whose handshakes all overlap (slow path): all accepted"
head -c $((4 << 20)) "$d/local/src" >"$d/local/src4"
for mode in tls plain; do
	flag=()
	[[ $mode == plain ]] && flag=(--no-encrypt)
	rm -f "$d/remote/s64"
	rc=0
	LANECP_TEST_PROXY=$LC_TOOLS_DIR/lc_proxy LC_PROXY_DELAY_MS=300 \
		"$LANECP" -F "$LC_SSH_CONFIG" -v -s 64 -B 64k "${flag[@]}" \
		"$d/local/src4" "$H:$d/remote/s64" 2>"$d/s64-$mode.log" || rc=$?
	if [[ $rc != 0 ]]; then
		cat "$d/s64-$mode.log" >&2
		lc_fail "$mode: 64 streams over a slow path exited $rc"
	fi
	cmp "$d/local/src4" "$d/remote/s64" || lc_fail "$mode: 64 streams: differs"
	lc_log_lacks 'dropped data connection|reconnect' "$d/s64-$mode.log"
done

# (within 60 s here: the 2 s bound is in test_timing.sh)
lc_note "SIGKILL of the controller: remote agent (sink) exits"
lc_kill_stalled_copy push "$d/local/src" "$H:$d/remote/fifo2" "$d/remote/fifo2"
lc_note "SIGKILL of the controller: remote agent (source) exits"
lc_kill_stalled_copy pull "$H:$d/local/src" "$d/local/fifo3" "$d/local/fifo3"

echo PASS
