#!/usr/bin/env bash
# Unattended reliability: resume, retries, end-to-end checksums, broken and
# stalled streams, stalls, full disks, signals, killed agents.  Each case
# checks the exit status, the message, that the target holds either the
# old file or the complete new one, and that no agent is left behind.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_need_test_hooks	# LANECP_TEST_PROXY
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
PROXY=$LC_TOOLS_DIR/lc_proxy
mkdir -p "$d/remote" "$d/local"
head -c $((48 << 20)) /dev/urandom >"$d/local/big"
head -c $((6 << 20)) /dev/urandom >"$d/local/six"
sum_big=$(sha256sum <"$d/local/big" | cut -d' ' -f1)

# no agent of ours may survive its controller (how fast it goes is
# test_timing.sh's business: label timing)
no_agents() {
	lc_wait_no_pids "$d/agent --agent" 60
}
ln -s "$LANECP" "$d/agent"
L() { lc_lanecp -T "$d/agent" "$@"; }
LX() { local code=$1 pat=$2; shift 2; lc_lanecp_expect "$code" "$pat" -T "$d/agent" "$@"; }
json_get() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())[sys.argv[1]])' "$1"; }

lc_note "-E prints checksums like bbcp, -E ALG=VALUE checks a known value"
L -E sha256 -f "$d/local/big" "$H:$d/remote/e.bin" >"$d/out"
grep -qx "sha256 $sum_big $H:$d/remote/e.bin" "$d/out" ||
	{ cat "$d/out"; lc_fail "-E sha256 line"; }
L -E "sha256=$sum_big" -f "$d/local/big" "$H:$d/remote/e.bin" >/dev/null
crc=$(python3 -c 'import zlib,sys; print("%08x" % zlib.crc32(open(sys.argv[1],"rb").read()))' "$d/local/big")
L -E crc32 -f "$H:$d/remote/e.bin" "$d/local/e.back" >"$d/out"
grep -qx "crc32 $crc $(lc_re "$d/local/e.back")" "$d/out" || { cat "$d/out"; lc_fail "-E crc32"; }
LX 12 "has sha256:$sum_big, not the expected sha256:0{64}" \
	-E "sha256=$(printf '0%.0s' {1..64})" -f "$d/local/big" "$H:$d/remote/e2.bin"
[[ ! -e $d/remote/e2.bin ]] || lc_fail "renamed despite a checksum mismatch"
LX 2 "-E md5: want sha256" -E md5 "$d/local/big" "$H:$d/remote/"

lc_note "a byte changed in transit (--no-encrypt) is caught by -e; not renamed"
export LANECP_TEST_PROXY=$PROXY LC_PROXY_LOG=$d/proxy.log
LC_PROXY_FLIP=0:5000000 LX 12 "checksum mismatch: the source has sha256:$sum_big, what was written has sha256:" \
	--no-encrypt -e -s 2 "$d/local/big" "$H:$d/remote/flip.bin"
[[ ! -e $d/remote/flip.bin ]] || lc_fail "corrupt copy renamed into place"
lc_note "... and --retries fixes it: the resume check finds the bad chunk"
LC_PROXY_FLIP=0:5000000 LC_PROXY_ONCE=$d/flipped L --json --no-encrypt -e -s 2 --retries 2 -a \
	"$d/local/big" "$H:$d/remote/flip.bin" >"$d/json"
unset LANECP_TEST_PROXY
cmp "$d/local/big" "$d/remote/flip.bin" || lc_fail "retried copy differs"
[[ $(json_get ok <"$d/json") == True ]] || lc_fail "json: not ok"

lc_note "a stream that is reset mid-copy: it reconnects and resends what was lost"
LANECP_TEST_PROXY=$PROXY LC_PROXY_RESET=1:4000000 \
	L -f -s 3 "$d/local/big" "$H:$d/remote/reset.bin"
lc_log_has 'data stream 1 lost' "$LC_ERR"
cmp "$d/local/big" "$d/remote/reset.bin" || lc_fail "copy after a reset differs"

lc_note "a stream that stalls: dropped after --stream-timeout, reconnected, resent"
LANECP_TEST_PROXY=$PROXY LC_PROXY_STALL=2:3000000 \
	L -f -s 3 --stream-timeout 2 "$d/local/big" "$H:$d/remote/stall.bin"
lc_log_has 'data stream 2 lost \(no data for 2 s\)' "$LC_ERR"
cmp "$d/local/big" "$d/remote/stall.bin" || lc_fail "copy after a stall differs"
no_agents

lc_note "slow (-x) or idle streams are not taken for stalled ones"
L -f -x 512k -s 4 --stream-timeout 2 "$d/local/six" "$H:/dev/null"
lc_log_lacks 'lost' "$LC_ERR"

lc_note "a whole copy that stalls fails after --timeout, naming the side"
echo old >"$d/remote/t.bin"
LANECP_TEST_PROXY=$PROXY LC_PROXY_STALL=0:2000000 \
	LX 11 "no progress for 4 s: data sent by .* is not arriving" \
	-f -s 1 --timeout 4 --stream-timeout 0 "$d/local/big" "$H:$d/remote/t.bin"
[[ $(cat "$d/remote/t.bin") == old ]] || lc_fail "old target changed"
no_agents

lc_note "kill -9 of the controller keeps the partial file; -a resumes it"
rm -f "$d/remote/k.bin" "$d/remote/.k.bin.lanecp-part"
"$LANECP" -F "$LC_SSH_CONFIG" -T "$d/agent" -x 8m -s 2 "$d/local/big" \
	"$H:$d/remote/k.bin" 2>"$d/k.err" &
pid=$!
lc_wait_size "$d/remote/.k.bin.lanecp-part" $(((8 << 20) + 1)) 60
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
no_agents
[[ ! -e $d/remote/k.bin ]] || lc_fail "target exists after kill -9"
part=$(stat -c %s "$d/remote/.k.bin.lanecp-part")
(( part > 0 && part < 48 << 20 )) || lc_fail "partial file size $part"
cmp -n "$part" "$d/remote/.k.bin.lanecp-part" "$d/local/big" || lc_fail "partial is not a prefix"
L -a --json -s 2 "$d/local/big" "$H:$d/remote/k.bin" >"$d/json"
cmp "$d/local/big" "$d/remote/k.bin" || lc_fail "resumed copy differs"
resumed=$(json_get resumed_bytes <"$d/json")
sent=$(json_get bytes <"$d/json")
(( resumed > 0 && resumed <= part )) || lc_fail "resumed_bytes $resumed (partial $part)"
(( sent + resumed == 48 << 20 )) || lc_fail "sent $sent + resumed $resumed"

lc_note "a corrupted prefix is found chunk by chunk and copied again"
head -c $((20 << 20)) "$d/local/big" >"$d/remote/.c.bin.lanecp-part"
# flip every bit of the byte at 12 MiB (a fixed byte would already be
# there in one run out of 256)
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(12 << 20); b = f.read(1); f.seek(12 << 20); f.write(bytes([b[0] ^ 0xff]))' \
	"$d/remote/.c.bin.lanecp-part"
cmp -s -n $((20 << 20)) "$d/local/big" "$d/remote/.c.bin.lanecp-part" && lc_fail "the prefix was not corrupted"
L -a -v --json -B 1m "$d/local/big" "$H:$d/remote/c.bin" >"$d/json"
lc_log_has '1\.0 MiB of the partial file differ from the source and are copied again; 19\.0 MiB of it are kept' "$LC_ERR"
cmp "$d/local/big" "$d/remote/c.bin" || lc_fail "copy after a bad prefix differs"
[[ $(json_get resumed_bytes <"$d/json") == $((19 << 20)) ]] || lc_fail "resumed bytes"

lc_note "SIGINT and SIGTERM: clean stop, partial kept, 130 / 143"
for sig in INT TERM; do
	rm -f "$d/remote/s.bin" "$d/remote/.s.bin.lanecp-part"
	"$LANECP" -F "$LC_SSH_CONFIG" -T "$d/agent" -x 8m "$d/local/big" \
		"$H:$d/remote/s.bin" 2>"$d/s.err" &
	pid=$!
	lc_wait_size "$d/remote/.s.bin.lanecp-part" $((1 << 20)) 60
	kill -"$sig" "$pid"
	rc=0
	wait "$pid" || rc=$?
	want=$([[ $sig == INT ]] && echo 130 || echo 143)
	[[ $rc == "$want" ]] || { lc__show "$d/s.err"; lc_fail "SIG$sig: exit $rc"; }
	lc_log_has "interrupted by signal" "$d/s.err"
	[[ -s $d/remote/.s.bin.lanecp-part && ! -e $d/remote/s.bin ]] ||
		lc_fail "SIG$sig: partial file not kept"
	no_agents
done

# copy_killing_agent ERR ARGS...: push big to ka.bin (-x 8m, plus ARGS),
# SIGKILL the remote agent once 4 MiB of the partial file are written; the
# copy's exit status goes to rc.
copy_killing_agent() {
	local err=$1 pid
	shift
	rm -f "$d/remote/.ka.bin.lanecp-part"
	"$LANECP" -F "$LC_SSH_CONFIG" -T "$d/agent" -x 8m "$@" "$d/local/big" \
		"$H:$d/remote/ka.bin" 2>"$err" &
	pid=$!
	lc_wait_size "$d/remote/.ka.bin.lanecp-part" $((4 << 20)) 60
	kill -9 $(lc_pids_matching "$d/agent --agent")
	rc=0
	wait "$pid" || rc=$?
}

lc_note "the remote agent killed mid-copy: exit 6; --retries resumes"
rm -f "$d/remote/.ka.bin.lanecp-part"
copy_killing_agent "$d/ka.err"
[[ $rc == 6 ]] || { lc__show "$d/ka.err"; lc_fail "killed agent: exit $rc"; }
lc_log_has "remote agent (killed by signal|exited|lost)|connection to the remote agent lost" "$d/ka.err"
copy_killing_agent "$d/ka2.err" --retries 3
[[ $rc == 0 ]] || { lc__show "$d/ka2.err"; lc_fail "with --retries: exit $rc"; }
lc_log_has "attempt 1 of 4 failed: .*retrying in 1 s, resuming" "$d/ka2.err"
cmp "$d/local/big" "$d/remote/ka.bin" || lc_fail "copy after retry differs"
no_agents

lc_note "-x caps the rate; -l keeps a timestamped record; --json says it all"
start=$(date +%s%N)
L -x 3m -l "$d/run.log" --json "$d/local/six" "$H:$d/remote/six" >"$d/json"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
(( ms >= 1500 )) || lc_fail "-x 3m moved 6 MiB in $ms ms"
lc_log_has '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}.* start: .*-x 3m' "$d/run.log"
lc_log_has 'result: ok, copied 1 file, 6291456 bytes \(6\.0 MiB\), failed 0, ' "$d/run.log"
python3 - "$d/json" <<'PY' || lc_fail "json fields"
import json, sys
j = json.load(open(sys.argv[1]))
want = {"files": 1, "bytes": 6291456, "resumed_bytes": 0, "encrypted": True,
        "exit_status": 0, "ok": True}
for k, v in want.items():
    assert j[k] == v, (k, j[k])
for k in ("seconds", "streams", "window", "checksums"):
    assert k in j, k
PY
LX 5 'nope: No such file' --json "$d/local/nope" "$H:$d/remote/" >"$d/json" || true
python3 - "$d/json" <<'PY' || lc_fail "json on failure"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] is False and j["exit_status"] == 5 and "No such file" in j["error"], j
PY

if [[ $(id -u) == 0 ]] && mount -t tmpfs -o size=16m tmpfs "$d/remote/small" 2>/dev/null ||
	{ mkdir -p "$d/remote/small" && mount -t tmpfs -o size=16m tmpfs "$d/remote/small" 2>/dev/null; }; then
	lc_on_exit "umount -l '$d/remote/small'"
	lc_note "a full disk: refused up front, or ENOSPC during the copy: exit 10"
	head -c $((4 << 20)) /dev/urandom >"$d/remote/small/keep"
	sum_keep=$(sha256sum <"$d/remote/small/keep")
	LX 10 "$(lc_re "$d/remote/small/big"): needs 48\\.0 MiB but only .* is free there" \
		"$d/local/big" "$H:$d/remote/small/"
	# issue 24 item 8: a refused copy leaves nothing; ENOSPC names the
	# part file (relative to the target) and its size; without -a it is
	# removed (the space given back, as rsync without --partial), with -a
	# kept for the resume the message names
	[[ $(ls -A "$d/remote/small") == keep ]] ||
		lc_fail "a failed space check left: $(ls -A "$d/remote/small")"
	LX 10 "lctest: write $(lc_re "$d/remote/small/big"): No space left on device; its partial file \.big\.lanecp-part \([0-9.]+ MiB\) in $(lc_re "$d/remote/small/") was removed" \
		--no-space-check "$d/local/big" "$H:$d/remote/small/"
	[[ ! -e $d/remote/small/big ]] || lc_fail "target created on a full disk"
	[[ $(ls -A "$d/remote/small") == keep ]] ||
		lc_fail "ENOSPC without -a left: $(ls -A "$d/remote/small")"
	lc_note "a full disk with -a in a tree: the part file is kept and named; a complete directory gets its mode"
	mkdir -p "$d/local/tree/sub" "$d/local/tree/a/b"
	ln -f "$d/local/big" "$d/local/tree/sub/big"
	echo x >"$d/local/tree/a/b/f"
	chmod 0751 "$d/local/tree/a"
	LX 10 "its partial file tree/sub/\.big\.lanecp-part \([0-9.]+ MiB\) is kept in $(lc_re "$d/remote/small/"): make room and run the copy again with -a" \
		-r -p -a --no-space-check "$d/local/tree" "$H:$d/remote/small/"
	[[ -s $d/remote/small/tree/sub/.big.lanecp-part ]] ||
		lc_fail "-a: the part file was not kept"
	[[ $(stat -c %a "$d/remote/small/tree/a") == 751 && $(stat -c %a "$d/remote/small/tree/a/b") == 755 ]] ||
		lc_fail "complete directories of a failed tree: a $(stat -c %a "$d/remote/small/tree/a"), a/b $(stat -c %a "$d/remote/small/tree/a/b")"
	[[ $(stat -c %a "$d/remote/small/tree/sub") == 700 ]] ||
		lc_fail "the directory the copy stopped in is $(stat -c %a "$d/remote/small/tree/sub"), not 0700"
	rm -rf "$d/remote/small/tree"
	[[ $(sha256sum <"$d/remote/small/keep") == "$sum_keep" ]] || lc_fail "other file touched"
	no_agents
else
	lc_skip "full-disk case: cannot mount a tmpfs here (not root?)"
fi

echo PASS
