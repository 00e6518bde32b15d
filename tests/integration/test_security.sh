#!/usr/bin/env bash
# Data stream security: encryption on the wire, integrity, replay, and the
# per-transfer key staying out of sight.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_need_test_hooks	# LANECP_TEST_PROXY
# strangers write to sockets the sink may already have closed
trap '' PIPE
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
PROXY=$LC_TOOLS_DIR/lc_proxy
mkdir -p "$d/remote" "$d/local"
marker=LANECP-SECRET-MARKER-7f3a9c
for ((i = 0; i < 40000; i++)); do echo "$marker $i"; done >"$d/local/secret.txt"


# capture NAME ARGS...: copy the marker file with a packet capture of
# loopback running (everything but sshd's port), leave it in $d/NAME.pcap.
capture() {
	local name=$1
	shift
	command -v tcpdump >/dev/null || lc_fail "tcpdump not installed"
	tcpdump -i lo -U -s 0 -B 131072 -w "$d/$name.pcap" \
		"tcp and not port $LC_SSHD_PORT" 2>"$d/$name.tcpdump" &
	local tp=$!
	lc_on_exit "kill $tp"
	lc_wait_for 'listening on' "$d/$name.tcpdump" 10
	lc_lanecp -f "$@" "$d/local/secret.txt" "$H:$d/remote/secret.txt"
	cmp "$d/local/secret.txt" "$d/remote/secret.txt" || lc_fail "$name differs"
	# the capture has caught up once it holds at least the file's bytes
	# (every byte crossed loopback, plus headers); a capture that drops
	# packets may never get there: then say so (return 1)
	local rc=0 want end=$((SECONDS + 20))
	want=$(stat -c %s "$d/local/secret.txt")
	while (($(stat -c %s "$d/$name.pcap" 2>/dev/null || echo 0) < want)); do
		((SECONDS < end)) || { rc=1; break; }
		sleep 0.05
	done
	kill "$tp"
	wait "$tp" 2>/dev/null || true
	[[ -s $d/$name.pcap ]] || lc_fail "$name: empty capture"
	return $rc
}

lc_note "a capture of a default copy never shows the file's content"
capture tls -v -s 4 || lc_fail "the capture of the TLS copy is incomplete (blind)"
lc_log_has 'data encrypted \(TLS 1\.3' "$LC_ERR"
if grep -aq "$marker" "$d/tls.pcap"; then
	lc_fail "marker visible on the wire in an encrypted copy"
fi
lc_note "with --no-encrypt it does (so the capture does see the streams)"
# a busy loopback (tests run in parallel) can make the kernel drop captured
# packets: then try again
for try in 1 2 3; do
	capture plain -v -s 4 --no-encrypt || true	# the marker decides
	lc_log_has 'in the clear \(--no-encrypt' "$LC_ERR"
	grep -aq "$marker" "$d/plain.pcap" && break
	grep -q ' 0 packets dropped by kernel' "$d/plain.tcpdump" &&
		lc_fail "marker not found in the --no-encrypt capture"
	[[ $try == 3 ]] && lc_fail "marker not found (capture keeps dropping packets)"
done

lc_note "a byte flipped in transit on every try: integrity error, no target"
head -c $((24 << 20)) /dev/urandom >"$d/local/big"
export LANECP_TEST_PROXY=$PROXY LC_PROXY_LOG=$d/proxy.log
LC_PROXY_EVERY=1 LC_PROXY_FLIP=0:3000000 lc_lanecp_expect 9 \
	'data stream 0 broke 9 times, giving up; the last time: .*failed its integrity check .*changed in transit' \
	-s 1 "$d/local/big" "$H:$d/remote/big"
lc_log_has 'stream 0: flipped byte 3000000' "$d/proxy.log"
[[ ! -e $d/remote/big ]] || lc_fail "target created despite the integrity error"
part=$d/remote/.big.lanecp-part
if [[ -e $part ]]; then
	# whatever was written is a correct prefix: nothing from the bad record
	n=$(stat -c %s "$part")
	cmp -n "$n" "$part" "$d/local/big" || lc_fail "bad bytes in the partial file"
	(( n < 24 << 20 )) || lc_fail "partial file is complete: $n bytes"
fi
lc_note "tampered once: the stream is dropped, reconnected and its blocks resent"
: >"$d/proxy.log"
# early in stream 1 (inside its first sealed frame): with the record layer
# gone the senders are fast enough that stream 0 may carry most blocks
LC_PROXY_FLIP=1:300000 lc_lanecp -s 3 "$d/local/big" "$H:$d/remote/big"
lc_log_has 'stream 1: flipped byte 300000' "$d/proxy.log"
lc_log_has 'data stream 1 lost \(.*integrity check' "$LC_ERR"
cmp "$d/local/big" "$d/remote/big" || lc_fail "recovered copy differs"
lc_note "sealed frames change key every epoch (64 KiB here): many rekeys, push and pull"
# LANECP_AEAD_EPOCH lowers the 64 GiB epoch; both ends must use it
# (the local end from the environment, the remote agent through env)
LANECP_AEAD_EPOCH=65536 lc_lanecp -f -s 3 \
    -T "env LANECP_AEAD_EPOCH=65536 $LANECP" \
    "$d/local/big" "$H:$d/remote/big.rk"
cmp "$d/local/big" "$d/remote/big.rk" || lc_fail "rekeyed push differs"
LANECP_AEAD_EPOCH=65536 lc_lanecp -f -s 3 \
    -T "env LANECP_AEAD_EPOCH=65536 $LANECP" \
    "$H:$d/remote/big.rk" "$d/local/big.rk"
cmp "$d/local/big" "$d/local/big.rk" || lc_fail "rekeyed pull differs"
rm -f "$d/remote/big.rk" "$d/local/big.rk"
# not blind: a sink that keeps the first key fails the second epoch's
# first frame, every time the stream is redialled
LANECP_AEAD_EPOCH=65536 lc_expect_exit 9 "$LANECP" -F "$LC_SSH_CONFIG" \
    -s 1 --retries 0 "$d/local/big" "$H:$d/remote/big.rk" 2>"$d/rk.err"
lc_log_has 'failed its integrity check \(frame 1: bad tag\)' "$d/rk.err"
[[ ! -e $d/remote/big.rk ]] || lc_fail "a failed copy left a target"
lc_note "the same flip with --no-encrypt goes unnoticed by the transport"
# early in stream 1 (its first block): under load stream 0 may carry most
# of the file, and a flip at 3 MB then never happened
LC_PROXY_FLIP=1:300000 lc_lanecp --no-encrypt -s 2 "$d/local/big" "$H:$d/remote/big.plain"
cmp -s "$d/local/big" "$d/remote/big.plain" &&
	lc_fail "the proxy did not change the data (test is blind)"
unset LANECP_TEST_PROXY

# replay MODE: record what the source sends on stream 0, then replay it
# to stream 0's port of the same, still running transfer.
replay() {
	local mode=$1 flag=() want
	if [[ $mode == plain ]]; then
		flag=(--no-encrypt)
		want='authentication failed'
	else
		want='TLS handshake failed'
	fi
	rm -rf "$d/rec" "$d/remote/fifo" "$d/remote/out" "$d/go"
	mkdir "$d/rec"
	mkfifo "$d/remote/fifo"
	# the reader holds the copy in flight until the replay was refused
	{ while [[ ! -e $d/go ]]; do sleep 0.05; done; cat; } \
		<"$d/remote/fifo" >"$d/remote/out" &
	local reader=$!
	lc_on_exit "lc__kill_tree $reader"
	LANECP_TEST_PROXY=$PROXY LC_PROXY_RECORD=$d/rec \
		"$LANECP" -F "$LC_SSH_CONFIG" -vv -s 2 -f "${flag[@]}" \
		"$d/local/big" "$H:$d/remote/fifo" 2>"$d/replay-$mode.log" &
	local copy=$!
	lc_on_exit "kill -9 $copy"
	lc_wait_for 'data ports [0-9,]+' "$d/replay-$mode.log" 10
	local port
	port=$(grep -Eo 'data ports [0-9]+' "$d/replay-$mode.log" | head -1 |
		cut -d' ' -f3)
	lc_wait_size "$d/rec/stream-0.bin" 4096 60
	exec 5<>"/dev/tcp/127.0.0.1/$port"
	cat "$d/rec/stream-0.bin" >&5 || true
	lc_wait_for "dropped data connection from 127\\.0\\.0\\.1 port [0-9]+: .*$want" \
		"$d/replay-$mode.log" 10
	exec 5>&-
	: >"$d/go"
	local rc=0
	wait "$copy" || rc=$?
	wait "$reader" || true
	[[ $rc == 0 ]] || { lc__show "$d/replay-$mode.log"; lc_fail "replay $mode: exit $rc"; }
	cmp "$d/local/big" "$d/remote/out" || lc_fail "replay $mode: copy differs"
}
lc_note "a replayed handshake is refused and logged; the copy succeeds (TLS)"
replay tls
lc_note "a replayed handshake is refused and logged; the copy succeeds (--no-encrypt)"
replay plain

# key_found KEYHEX FILE...: prints each FILE holding the key as hex (either
# case), base64 (standard or URL-safe, padded or not) or raw bytes;
# returns 0 if any does.
key_found() {
	python3 - "$@" <<'PY'
import base64, sys
key = bytes.fromhex(sys.argv[1])
forms = [key, key.hex().encode(), key.hex().upper().encode()]
for enc in (base64.b64encode, base64.urlsafe_b64encode):
    forms.append(enc(key).rstrip(b"="))
found = False
for path in sys.argv[2:]:
    try:
        data = open(path, "rb").read()
    except OSError:
        continue
    if any(f in data for f in forms):
        print(path)
        found = True
sys.exit(0 if found else 1)
PY
}

lc_note "the transfer key and the takeover key are in no command line, environment or log"
# The relay agent (lc_evil_agent with LC_EVIL_REAL) runs the real agent
# and writes down the key the controller sends it over SSH, so the test
# knows the key it looks for.
keyf=$d/key.hex
tkeyf=$d/takeover.hex
mkfifo "$d/remote/fifo3"
sleep 900 <"$d/remote/fifo3" &
holder=$!
lc_on_exit "kill $holder"
"$LANECP" -F "$LC_SSH_CONFIG" -vv -f \
	-T "LC_EVIL_REAL=$(printf '%q' "$LANECP") LC_EVIL_KEY_FILE=$(printf '%q' "$keyf") LC_EVIL_TAKEOVER_FILE=$(printf '%q' "$tkeyf") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_agent")" \
	"$d/local/big" "$H:$d/remote/fifo3" 2>"$d/key.log" &
copy=$!
lc_on_exit "kill -9 $copy"
lc_wait_for '[0-9]+ data streams connected' "$d/key.log" 60
lc_wait_for '^[0-9a-f]{64}$' "$keyf" 10
key=$(head -1 "$keyf")
lc_wait_for '^[0-9a-f]{64}$' "$tkeyf" 10
tkey=$(head -1 "$tkeyf")
[[ $tkey != "$key" && $tkey =~ [1-9a-f] ]] || lc_fail "takeover key '$tkey'"
# the scan can fail: it finds the key in each form it looks for
python3 - "$key" "$d/ctl" <<'PY'
import base64, sys
key = bytes.fromhex(sys.argv[1])
for i, f in enumerate([key, key.hex().encode(), key.hex().upper().encode(),
                       base64.b64encode(key), base64.urlsafe_b64encode(key)]):
    open(f"{sys.argv[2]}{i}", "wb").write(b"x " + f + b" y\n")
PY
for i in 0 1 2 3 4; do
	key_found "$key" "$d/ctl$i" >/dev/null || lc_fail "key scan is blind to form $i"
done
# ... and in a command line (a process started with it as an argument)
python3 -c 'import time; time.sleep(900)' lc-key-control "$key" &
control=$!
lc_on_exit "kill $control"
key_found "$key" "/proc/$control/cmdline" >/dev/null ||
	lc_fail "key scan is blind to /proc/PID/cmdline"
kill "$control"
wait "$control" 2>/dev/null || true
# our agents: under our sshd (other tests' agents run the same binary)
our_agents() {
	local p
	for p in $(lc__descendants "$LC_SSHD_PID"); do
		[[ $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) == *--agent* ]] &&
			echo "$p"
	done
	return 0
}
agents=$(for p in $(our_agents); do
	[[ $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) == *"lanecp --agent"* ]] &&
		echo "$p"
done; true)
[[ -n $agents ]] || lc_fail "no agent found"
for p in $agents $copy; do
	cmd=$(tr '\0' ' ' <"/proc/$p/cmdline")
	case $cmd in
	# the transfer id (not a secret, see SECURITY.md) is allowed
	*"--agent "|*"--agent --transfer "[0-9a-f]*" "|"$LANECP -F $LC_SSH_CONFIG -vv -f -T "*" $d/local/big $H:$d/remote/fifo3 ") ;;
	*) lc_fail "unexpected command line: $cmd" ;;
	esac
done
# every process's command line and environment (the controller, ssh
# sessions, the relay and the real agent among them)
procs=()
for p in /proc/[0-9]*; do
	procs+=("$p/cmdline" "$p/environ")
done
if where=$(key_found "$key" "${procs[@]}"); then
	lc_fail "the transfer key is in $where"
fi
if where=$(key_found "$tkey" "${procs[@]}"); then
	lc_fail "the takeover key is in $where"
fi
kill -9 "$copy"
wait "$copy" 2>/dev/null || true
# our agents (under our sshd) have flushed their last log lines once
# they are gone
end=$((SECONDS + 60))
while [[ -n $(our_agents) ]]; do
	((SECONDS < end)) || lc_fail "agents still running: $(our_agents)"
	sleep 0.1
done
# the -vv log of the controller (the remote agent's messages come through
# it) and sshd's log, after both ends are gone
if where=$(key_found "$key" "$d/key.log" "$LC_SSHD_LOG"); then
	lc_fail "the transfer key is in $where"
fi
if where=$(key_found "$tkey" "$d/key.log" "$LC_SSHD_LOG"); then
	lc_fail "the takeover key is in $where"
fi
# both ends' logs were really there: the controller's and the remote
# agent's (relayed with its host name)
lc_log_has 'data streams connected' "$d/key.log"
lc_log_has '\[lctest\] agent: .*received LISTEN' "$d/key.log"
# Core dumps: the agents and the controller are non-dumpable and their
# key pages MADV_DONTDUMP (test_nodump.sh, test_secmem.c); no crash is
# provoked here (core_pattern is machine-wide).

lc_note "host keys: accept-new records an unknown key, then it is known"
: >"$d/kh_new"
lc_ssh_config "$d/accept_config" UserKnownHostsFile="$d/kh_new" \
	StrictHostKeyChecking=accept-new
rc=0
"$LANECP" -F "$d/accept_config" "$d/local/secret.txt" "$H:$d/remote/an1" \
	2>"$d/err" || rc=$?
[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "accept-new: exit $rc"; }
lc_log_has "added '\\[127\\.0\\.0\\.1\\]:$LC_SSHD_PORT'" "$d/err"
grep -q "^\\[127.0.0.1\\]:$LC_SSHD_PORT " "$d/kh_new" ||
	grep -q '^|1|' "$d/kh_new" || lc_fail "key not recorded"
lc_ssh_config "$d/after_config" UserKnownHostsFile="$d/kh_new"
"$LANECP" -F "$d/after_config" "$d/local/secret.txt" "$H:$d/remote/an2" ||
	lc_fail "recorded key not accepted"
lc_note "StrictHostKeyChecking no still refuses a changed key"
ssh-keygen -q -t ed25519 -N '' -f "$d/other_key" </dev/null
printf '[127.0.0.1]:%s %s\n' "$LC_SSHD_PORT" "$(cut -d' ' -f1,2 "$d/other_key.pub")" \
	>"$d/kh_wrong"
lc_ssh_config "$d/no_config" UserKnownHostsFile="$d/kh_wrong" \
	StrictHostKeyChecking=no
rc=0
"$LANECP" -F "$d/no_config" "$d/local/secret.txt" "$H:$d/remote/an3" \
	2>"$d/err" || rc=$?
[[ $rc == 4 ]] || { lc__show "$d/err"; lc_fail "changed key with no: exit $rc"; }
[[ ! -e $d/remote/an3 ]] || lc_fail "copied to a host with a changed key"

echo PASS
