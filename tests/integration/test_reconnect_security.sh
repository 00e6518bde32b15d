#!/usr/bin/env bash
# Reconnects never send data on an unverified connection (issue #9).
#
# A stream is reset mid-copy so that the source reconnects it; the test
# proxy then plays the attacker on the path and answers the reconnect
# itself (a plausible sink hello, a wrong proof) instead of relaying it to
# the sink, recording every byte the source sends it.  The file holds a
# marker that is random per run, so no other test's traffic can match it.
# Proof that not one data byte reached the attacker:
#   * the attacker's recording of each hijacked connection lacks the
#     marker (and with --no-encrypt is exactly the 72-byte handshake
#     answer: nothing after the failed HMAC exchange);
#   * with TLS, a capture of loopback lacks the marker too.
# One hijacked reconnect: the source retries, the next (honest) reconnect
# resends, the copy succeeds.  Every reconnect hijacked: the copy fails
# with exit 8, saying the reconnect failed.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_need_test_hooks	# LANECP_TEST_PROXY
trap '' PIPE
command -v tcpdump >/dev/null || { lc_skip "tcpdump not installed"; exit 0; }
# an address of our own on loopback, so that the capture holds this test's
# packets only, not those of tests running beside it (which made captures
# of many GB that drop packets)
export LC_SSHD_ADDR=127.0.0.62
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
PROXY=$LC_TOOLS_DIR/lc_proxy
mkdir -p "$d/remote" "$d/local"
marker=LCMARK-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
# 32 MiB of marker lines; -x below keeps the copy going for seconds, so
# that there are blocks left to send when the reconnect happens
{ yes "$marker" 2>/dev/null || true; } | head -c $((32 << 20)) >"$d/local/secret"

# start_capture NAME: capture loopback (but sshd's port) into $d/NAME.pcap
start_capture() {
	local name=$1
	rm -f "$d/$name.pcap" "$d/$name.tcpdump"
	tcpdump -i lo -U -s 0 -B 131072 -w "$d/$name.pcap" \
		"host $LC_SSHD_ADDR and ((tcp and not port $LC_SSHD_PORT) or (udp and port 9))" \
		2>"$d/$name.tcpdump" &
	TP=$!
	lc_on_exit "kill $TP"
	lc_wait_for 'listening on' "$d/$name.tcpdump" 10
}

# stop_capture NAME: once a packet sent now is in the file, everything
# before it is too; then stop.  Returns 1 if the kernel dropped packets
# (then a capture without the marker proves nothing).
stop_capture() {
	local name=$1 sentinel
	sentinel=LCEND-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	printf '%s' "$sentinel" >"/dev/udp/$LC_SSHD_ADDR/9" || true
	lc_wait_for "$sentinel" "$d/$name.pcap" 10
	kill "$TP"
	wait "$TP" 2>/dev/null || true
	grep -Eq '^ *0 packets dropped by kernel' "$d/$name.tcpdump"
}

# no_marker FILE...: fail if any FILE holds the marker
no_marker() {
	local f
	for f in "$@"; do
		if grep -aqF "$marker" "$f"; then
			lc_fail "file data reached the attacker: marker in $f"
		fi
	done
}

# hijack NAME COUNT WANT_RC ARGS...: reset stream 1 of a copy after 2 MB,
# hijack COUNT of its reconnects (0: all), check the attacker's records
# and (TLS) the capture, then the exit status WANT_RC.
hijack() {
	local name=$1 count=$2 want=$3 try rc f
	shift 3
	for try in 1 2 3; do
		rm -rf "$d/rec-$name" "$d/remote/secret"
		mkdir "$d/rec-$name"
		: >"$d/proxy-$name.log"
		start_capture "$name"
		rc=0
		LANECP_TEST_PROXY=$PROXY LC_PROXY_LOG=$d/proxy-$name.log \
			LC_PROXY_RESET=1:2000000 LC_PROXY_HIJACK=1:$count \
			LC_PROXY_RECORD=$d/rec-$name \
			lc__lanecp_run -s 2 -x 16m "$@" "$d/local/secret" \
			"$H:$d/remote/secret" || rc=$?
		cp "$LC_ERR" "$d/$name.err"
		if stop_capture "$name"; then
			break
		fi
		[[ $try == 3 ]] && lc_fail "$name: the capture keeps dropping packets"
	done
	lc_log_has 'stream 1: reset at 2000000' "$d/proxy-$name.log"
	ls "$d/rec-$name"/hijack-1-*.bin >/dev/null ||
		lc_fail "$name: no hijacked connection recorded"
	no_marker "$d/rec-$name"/hijack-1-*.bin
	lc_log_has 'stream 1: hijacked connection 2: closed after [0-9]+ bytes' \
		"$d/proxy-$name.log"
	# every hijacked connection was closed by the source, none held open
	lc_log_lacks 'hijacked connection [0-9]+: reset after' "$d/proxy-$name.log"
	if [[ " $* " == *" --no-encrypt "* ]]; then
		# the source's handshake answer, and not one byte after it
		for f in "$d/rec-$name"/hijack-1-*.bin; do
			[[ $(stat -c %s "$f") == 72 ]] ||
				lc_fail "$name: $(stat -c %s "$f") bytes on $f, want 72"
		done
	else
		[[ -s $d/$name.pcap ]] || lc_fail "$name: empty capture"
		no_marker "$d/$name.pcap"
	fi
	if [[ $rc != "$want" ]]; then
		lc__show "$d/$name.err"
		lc_fail "$name: exit $rc, expected $want"
	fi
}

lc_note "TLS: a hijacked reconnect gets no data; the next one resends, copy ok"
hijack tls-once 1 0 -v
lc_log_has 'stream 1: reconnect failed, retrying: .*TLS handshake failed' "$d/tls-once.err"
lc_log_has 'reconnected to' "$d/tls-once.err"
cmp "$d/local/secret" "$d/remote/secret" || lc_fail "tls-once: copy differs"

lc_note "--no-encrypt: a reconnect that fails the HMAC exchange gets no data"
hijack plain-once 1 0 -v --no-encrypt
lc_log_has 'stream 1: reconnect failed, retrying: .*failed to prove the transfer key' \
	"$d/plain-once.err"
cmp "$d/local/secret" "$d/remote/secret" || lc_fail "plain-once: copy differs"

lc_note "TLS: every reconnect hijacked: the copy fails loudly, nothing leaks"
hijack tls-every 0 8
lc_log_has 'data stream 1: reconnect failed 12 times, giving up \(last: .*TLS handshake failed' \
	"$d/tls-every.err"
[[ ! -e $d/remote/secret ]] || lc_fail "tls-every: target created"

lc_note "--no-encrypt: every reconnect hijacked: fails loudly, nothing leaks"
hijack plain-every 0 8 --no-encrypt
lc_log_has 'data stream 1: reconnect failed 12 times, giving up \(last: .*failed to prove the transfer key' \
	"$d/plain-every.err"
[[ ! -e $d/remote/secret ]] || lc_fail "plain-every: target created"

echo PASS
