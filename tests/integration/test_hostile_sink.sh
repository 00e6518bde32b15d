#!/usr/bin/env bash
# A hostile remote sink in a push: the controller checks every message a
# sink sends it (docs/PROTOCOL.md) against what it announced and what the
# sink said before.  tests/tools/lc_evil_sink wraps the real agent
# (LC_EVIL_REAL), so everything it does not break is a real copy, and
# breaks one rule per case: ids never announced, duplicates, messages out
# of order, offsets past the file, streams beyond those granted, counters
# that go backwards, bytes beyond the copy's total.  Each case: exit 7,
# one line naming the host and what was wrong, and nothing written that
# should not be (no file under its final name when the lie came before
# the real sink finished it; no bad checksum printed).
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/local"
head -c $((3 << 20)) /dev/urandom >"$d/local/src"
n=0

# evil CASE lanecp-args...: push $d/local/src through the evil sink into
# a fresh directory $t; exit status in $rc, stdout in $d/out, stderr in
# $d/err.
evil() {
	local c=$1
	shift
	n=$((n + 1))
	t=$d/t$n
	mkdir "$t"
	# EVIL_OLD: an older copy of the file at the target (-u's delta)
	[[ -z ${EVIL_OLD:-} ]] || { cp "$EVIL_OLD" "$t/src"; touch -d 2020-01-01 "$t/src"; }
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" \
		-T "LC_EVIL_SINK=$c LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_sink")" \
		"$@" "$d/local/src" "$H:$t/" >"$d/out" 2>"$d/err" || rc=$?
}

# refused CASE WHEN PATTERN lanecp-args...: exit 7 and one line
# "lanecp: [user@]lctest: PATTERN" (the sink agent's acceptor may add its
# warning about a data connection the abort cut short: timing); WHEN
# "before": the lie came before the real sink could finish the file, so
# it must not be there under its name.
refused() {
	local c=$1 when=$2 pat=$3
	shift 3
	evil "$c" "$@"
	[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "$c: exit $rc, expected 7"; }
	lc_log_has "^lanecp: ([^ ]*@)?$(lc_re "$H"): $pat" "$d/err"
	[[ $(grep -cv 'dropped data connection' "$d/err") == 1 ]] ||
		{ lc__show "$d/err"; lc_fail "$c: not one line"; }
	if [[ $when == before && -e $t/src && -z ${EVIL_OLD:-} ]]; then
		ls -la "$t" >&2
		lc_fail "$c: the target was written under its name"
	fi
	lc_log_lacks 'Sanitizer|runtime error:' "$d/err"
}

CASES=${LC_EVIL_SINK_CASES:-all}
run() {	# run CASE ...: unless LC_EVIL_SINK_CASES leaves it out
	[[ $CASES == all || " $CASES " == *" $1 "* ]] || return 0
	lc_note "$1"
	refused "$@"
}

lc_note "the real agent through the evil sink, unchanged: a normal copy"
evil none -e
[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "plain copy: exit $rc"; }
cmp "$d/local/src" "$t/src" || lc_fail "plain copy through the wrapper differs"

# -x keeps the data in flight (3 MiB at 512 KB/s) while the lie arrives
slow=(-x 512k -s 2)

run listening_twice before 'bad LISTENING' "${slow[@]}"
run listening_streams before 'bad LISTENING' "${slow[@]}"
run ready_unknown before 'sink sent an unexpected FILE_READY for file 100000' "${slow[@]}"
run ready_twice before 'sink sent an unexpected FILE_READY for file 1 ' "${slow[@]}"
run ready_past before 'sink sent an unexpected FILE_READY for file 1 \(from byte 3145729\)' "${slow[@]}"
run done_unknown before 'bad FILE_DONE for file 100000' "${slow[@]}"
run done_early before 'bad FILE_DONE for file 1$' "${slow[@]}"
run done_twice after 'bad FILE_DONE for file 1$'
run done_bytes after 'bad FILE_DONE for file 1$'
run done_sum after 'bad FILE_DONE for file 1$' -e
run progress_unknown before 'sink sent a bad PROGRESS \(file 100000' "${slow[@]}"
run progress_past before 'sink sent a bad PROGRESS \(file 1, 3145729 bytes written\)' "${slow[@]}"
run progress_back before 'sink sent a bad PROGRESS: its byte count went backwards' "${slow[@]}"
run progress_mark_back before 'sink sent a bad PROGRESS: its mark went backwards' "${slow[@]}"
run progress_total before 'sink sent a bad PROGRESS: 3145729 bytes written of 3145728' "${slow[@]}"
run lost_stream before 'sink sent an unexpected STREAM_LOST for stream 2 of 2' "${slow[@]}"
run lost_off before 'sink sent an unexpected STREAM_LOST for stream 0 of 2' "${slow[@]}"
run sink_done_early before 'sink sent SINK_DONE before the copy was done' "${slow[@]}"
run sink_done_twice after 'unexpected or malformed SINK_DONE from the sink agent'
run sink_done_bytes after 'sink sent a bad SINK_DONE: 3145729 bytes written of 3145728'
run skip_unknown before 'sink sent an unexpected FILE_SKIP for file 100000' "${slow[@]}"
run prefix_unasked before 'sink sent an unexpected FILE_PREFIX for file 1 ' "${slow[@]}"
# -u's delta over an older copy: a hash list whose slices lie (3 MiB: 384
# hashes in one frame); the old copy stays as it was
cp "$d/local/src" "$d/old"
printf 'x' | dd of="$d/old" bs=1 seek=$((1 << 20)) conv=notrunc status=none
export EVIL_OLD=$d/old
run hashes_twice before 'sink sent an unexpected FILE_HASHES for file 1 \(384 of 384 hashes from 0\)' -u
run hashes_gap before 'sink sent an unexpected FILE_HASHES for file 1 \(383 of 384 hashes from 1\)' -u
run hashes_total before 'sink sent an unexpected FILE_HASHES for file 1 \(384 of 385 hashes from 0\)' -u
[[ $CASES != all ]] || cmp "$d/old" "$t/src" || lc_fail "hashes: the old copy was changed"
unset EVIL_OLD
run bye_early before 'unexpected or malformed BYE from the sink agent' "${slow[@]}"
run target_twice before 'sink sent TARGET_OK twice' "${slow[@]}"
run grant_big before 'sink granted 4097 files in flight \(512 to [0-9]+\)' "${slow[@]}"
run grant_small before 'sink granted 511 files in flight \(512 to [0-9]+\)' "${slow[@]}"

# STOP (the copy interrupted): the sink's final count is reported by
# --json only if it can be true
if [[ $CASES == all || " $CASES " == *" stopped_bytes "* ]]; then
	lc_note "stopped_bytes: an impossible final count is not taken"
	n=$((n + 1))
	t=$d/t$n
	mkdir "$t"
	"$LANECP" -F "$LC_SSH_CONFIG" -v --json -x 1m -s 2 \
		-T "LC_EVIL_SINK=stopped_bytes LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_sink")" \
		"$d/local/src" "$H:$t/" >"$d/out" 2>"$d/err" &
	copy=$!
	lc_on_exit "kill -9 $copy 2>/dev/null"
	lc_wait_for 'data streams connected' "$d/err" 60
	kill -INT "$copy"
	rc=0
	wait "$copy" || rc=$?
	[[ $rc != 0 ]] || lc_fail "stopped_bytes: an interrupted copy exited 0"
	for k in bytes bytes_written; do
		v=$(grep -Eo "\"$k\":[0-9]+" "$d/out" | cut -d: -f2)
		[[ -n $v ]] || { lc__show "$d/out"; lc_fail "stopped_bytes: no $k in --json"; }
		((v <= 3145728)) || { lc__show "$d/out"; lc_fail "stopped_bytes: --json says $k $v of 3145728"; }
	done
	lc_log_has "^lanecp: ([^ ]*@)?$(lc_re "$H"): sink sent a bad SINK_STOPPED: 3145729 bytes written of 3145728 \(not taken\)" "$d/err"
fi

# -E prints each file's checksum: a bad one from the sink is not printed
if [[ $CASES == all || " $CASES " == *" done_sum "* ]]; then
	lc_note "done_sum: the bad checksum is not printed (-E)"
	evil done_sum -E sha256
	[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "done_sum -E: exit $rc"; }
	lc_log_lacks 'sha256|:z' "$d/out"
fi

echo PASS
