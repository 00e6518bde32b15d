#!/usr/bin/env bash
# A hostile remote sink in a push: the controller checks every message a
# sink sends it (docs/PROTOCOL.md) against what it announced and what the
# sink said before.  tests/tools/lc_evil_sink wraps the real agent
# (LC_EVIL_REAL), so everything it does not break is a real copy, and
# breaks one rule per case: ids never announced, duplicates, messages out
# of order, offsets past the file, streams beyond those granted, counters
# that go backwards, bytes beyond the copy's total; with --delete,
# candidates outside the root scanned, malformed, listed, twice, in no
# directory named, a DELETED never asked.  Each case: exit 7,
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
	mkdir -p "$t"
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

# FILE_DONE's flags (issue 24): a file -f puts in place of one is
# updated; a sink from before them sends none, its copy works and counts
# every file as copied
for c in none old_counts; do
	lc_note "-f over an existing file, sink $c"
	mkdir -p "$d/t$((n + 1))"
	echo old >"$d/t$((n + 1))/src"
	evil "$c" -f
	[[ $rc == 0 ]] || { lc__show "$d/err"; lc_fail "$c: exit $rc"; }
	cmp "$d/local/src" "$t/src" || lc_fail "$c: the file was not replaced"
	if [[ $c == none ]]; then
		lc_log_has '^lanecp: copied 0 files, updated 1, 3145728 bytes ' "$d/err"
	else
		lc_log_has '^lanecp: copied 1 file, updated 0, 3145728 bytes ' "$d/err"
	fi
done

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
run done_noflags after 'bad FILE_DONE for file 1$'
run done_badflag after 'unexpected or malformed FILE_DONE from the sink agent'
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

# --delete: the sink's scan and its answers are checked too.  The tree
# "tree" is pushed (-r --delete) into a target holding it and 300 stale
# files, more than the 256 DELETEs the controller has unanswered at most.
mkdir -p "$d/tree/sub"
echo a >"$d/tree/a"
echo c >"$d/tree/sub/c"
# del_evil CASE lanecp-args...: into a fresh $t, status in $rc
del_evil() {
	local c=$1
	shift
	n=$((n + 1))
	t=$d/t$n
	mkdir -p "$t/tree/stale"
	(cd "$t/tree/stale" && touch $(seq -f 's%03g' 300))
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" \
		-T "LC_EVIL_SINK=$c LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_sink")" \
		-r --delete "$@" "$d/tree" "$H:$t/" >"$d/out" 2>"$d/err" || rc=$?
}
stale() { find "$t/tree/stale" -type f | wc -l; }
# del_refused CASE PATTERN: exit 7, one line, nothing deleted
del_refused() {
	local c=$1 pat=$2
	[[ $CASES == all || " $CASES " == *" $c "* ]] || return 0
	lc_note "$c"
	del_evil "$c"
	[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "$c: exit $rc, expected 7"; }
	lc_log_has "^lanecp: ([^ ]*@)?$(lc_re "$H"): $pat" "$d/err"
	[[ $(grep -cv 'dropped data connection' "$d/err") == 1 ]] ||
		{ lc__show "$d/err"; lc_fail "$c: not one line"; }
	[[ $(stale) == 300 && -e $t/tree/a ]] || lc_fail "$c: something was deleted"
	lc_log_lacks 'Sanitizer|runtime error:' "$d/err"
}

lc_note "--delete through the evil sink, unchanged: the stale files go"
del_evil none
[[ $rc == 0 && $(stale) == 0 && -e $t/tree/a ]] ||
	{ lc__show "$d/err"; lc_fail "--delete through the wrapper: exit $rc, $(stale) stale left"; }

w='sink named tree/'
del_refused del_outside 'sink named lc-evil-outside for deletion: it is not under the directory scanned; nothing was deleted'
del_refused del_dotdot "unexpected or malformed DEL_CAND from the sink agent \\(a name to delete is relative, with no empty, '.' or '..' component; nothing more is asked to be deleted\\)$"
del_refused del_slash 'unexpected or malformed DEL_CAND from the sink agent'
del_refused del_listed "${w}a for deletion: the source listed it, or the scan named it before; nothing was deleted"
del_refused del_orphan "${w}lc-evil-nodir/x for deletion: its directory was neither listed nor named before it; nothing was deleted"
del_refused del_twice "${w}stale for deletion: the source listed it, or the scan named it before; nothing was deleted"

if [[ $CASES == all || " $CASES " == *" deleted_unasked "* ]]; then
	lc_note "deleted_unasked: refused, and nothing asked after it"
	del_evil deleted_unasked
	[[ $rc == 7 ]] || { lc__show "$d/err"; lc_fail "deleted_unasked: exit $rc"; }
	lc_log_has "sink sent DELETED for tree/lc-evil-never, which was not asked \(0 deletions of 301 asked; no more\)" "$d/err"
	# the sink could act on the 256 DELETEs it had; not on the rest
	(($(stale) >= 300 - 256)) || lc_fail "deleted_unasked: $(stale) stale left, want >= 44"
fi

if [[ $CASES == all || " $CASES " == *" del_max "* ]]; then
	lc_note "del_max: more candidates than the bound: nothing deleted, exit 23"
	LANECP_DEL_MAX=100 del_evil none
	[[ $rc == 23 ]] || { lc__show "$d/err"; lc_fail "del_max: exit $rc"; }
	lc_log_has 'more than 100 entries .* to delete; nothing was deleted' "$d/err"
	[[ $(stale) == 300 ]] || lc_fail "del_max: something was deleted"
fi

echo PASS
