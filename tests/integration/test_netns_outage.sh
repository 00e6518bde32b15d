#!/usr/bin/env bash
# Link outages in the middle of a copy (issue #12), over an emulated pair
# link (netns.sh, 200 Mbit/s, 10 ms one way): lanecp in a pushes a file to
# b with --retries 8 --json; once the sink's part file holds 24 MiB of
# data, the link is cut (every packet lost, both ways), held for N s, and
# restored.  For N in $LC_NS_OUTAGES (default "5 40"; 120 in
# test_netns_outage_long.sh):
#   * the copy succeeds and is identical (cmp);
#   * its --json "attempts" is at least $LC_NS_OUTAGE_MIN_ATTEMPTS
#     (default 1; 2 for 120 s, which outlasts SSH's keepalive of 15 s x 3:
#     the control connection dies and a later attempt takes over the stale
#     agent's part file, see src/fs/lockholder.c);
#   * no agent is left on either side afterwards (waited for longer than
#     the agents' 60 s PING grace).
# The time an outage cost is printed, not bounded: "stalled_seconds" and
# "attempts" from --json, and the wall time against the same copy without
# an outage, measured first in this test.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
. "$LC_SRC_DIR/tests/integration/netns.sh"

lc_netns_need
OUTAGES=${LC_NS_OUTAGES:-5 40}
MIN_ATTEMPTS=${LC_NS_OUTAGE_MIN_ATTEMPTS:-1}
lc_netns_up pair rate=200m,delay=10ms
lc_netns_sshd b
d=$LC_NS_DIR
mkdir -p "$d/src"
head -c $((128 << 20)) /dev/urandom >"$d/src/big"

# written FILE: bytes of data FILE holds (allocated blocks: the part file
# is written at several offsets at once, so its size runs ahead)
written() {
	local b bs
	read -r b bs < <(stat -c '%b %B' "$1" 2>/dev/null || echo "0 0")
	echo $((b * bs))
}

# wait_written FILE BYTES SECONDS
wait_written() {
	local end=$((SECONDS + $3)) n=0
	while :; do
		n=$(written "$1")
		((n >= $2)) && return 0
		((SECONDS < end)) || break
		sleep 0.05
	done
	lc_fail "timed out waiting for $1 to hold $2 bytes (has $n)"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

jfield() { grep -o "\"$1\":[^,}]*" "$2" | head -n 1 | cut -d: -f2; }

# copy NAME [OUTAGE_SECONDS]: the push, in the background, with a cut
# in the middle when OUTAGE_SECONDS is given; sets WALL_MS, OUT, LOG
copy() {
	local name=$1 outage=${2-} t0 pid rc=0
	mkdir -p "$d/$name"
	OUT=$d/$name.json LOG=$d/$name.log
	t0=$(now_ms)
	ip netns exec "$(lc_netns_name a)" "$LANECP" -F "$LC_NS_SSH_CONFIG" -v \
	    --retries 8 --json "$d/src/big" "b:$d/$name/" >"$OUT" 2>"$LOG" &
	pid=$!
	lc_on_exit "kill $pid"
	if [[ -n $outage ]]; then
		wait_written "$d/$name/.big.lanecp-part" $((24 << 20)) 300
		lc_netns_cut
		[[ -e $d/$name/.big.lanecp-part ]] ||
			lc_fail "$name: the copy ended before the cut"
		kill -0 "$pid" 2>/dev/null ||
			lc_fail "$name: lanecp exited before the cut"
		lc_note "   cut at $(($(written "$d/$name/.big.lanecp-part") >> 20)) MiB written"
		# the outage: a chosen length, the point of the test, not a
		# wait for an event
		sleep "$outage"
		lc_netns_restore
	fi
	wait "$pid" || rc=$?
	WALL_MS=$(($(now_ms) - t0))
	if [[ $rc != 0 ]]; then
		lc__show "$LOG"
		lc__show "$OUT"
		lc_fail "$name: lanecp exited $rc"
	fi
	cmp "$d/src/big" "$d/$name/big" || lc_fail "$name: the copy differs"
	lc_log_has '"ok":true' "$OUT"
}

lc_note "the same copy without an outage"
copy base
base_ms=$WALL_MS
lc_note "   no outage: wall $((base_ms / 1000)).$((base_ms % 1000 / 100)) s," \
    "seconds $(jfield seconds "$OUT"), attempts $(jfield attempts "$OUT")," \
    "stalled_seconds $(jfield stalled_seconds "$OUT")"
lc_netns_wait_no_agents 90

report=""
for n in $OUTAGES; do
	lc_note "a $n s outage in the middle of the copy (--retries 8)"
	copy "cut$n" "$n"
	att=$(jfield attempts "$OUT") st=$(jfield stalled_seconds "$OUT")
	lost=$((WALL_MS - base_ms))
	line="outage ${n} s: wall $((WALL_MS / 1000)).$((WALL_MS % 1000 / 100)) s"
	line+=" (no outage: $((base_ms / 1000)).$((base_ms % 1000 / 100)) s),"
	line+=" lost $((lost / 1000)).$((lost % 1000 / 100)) s,"
	line+=" beyond the outage $(((lost - n * 1000) / 1000)).$((((lost - n * 1000) % 1000 + 1000) % 1000 / 100)) s;"
	line+=" stalled_seconds $st, attempts $att"
	lc_note "   $line"
	grep -E 'stalled|retry|attempt|reconnect|resum|lock' "$LOG" |
	    sed 's/^/    | /' | head -n 20 || true
	report+="$line"$'\n'
	((att >= MIN_ATTEMPTS)) ||
		lc_fail "a $n s outage: attempts $att, expected at least $MIN_ATTEMPTS"
	# stalled_seconds is the time the data did not move, within and
	# across attempts: at least the outage (no upper bound asserted)
	[[ -n $st ]] || lc_fail "no stalled_seconds in --json"
	awk -v st="$st" -v n="$n" 'BEGIN { exit !(st >= n) }' ||
		lc_fail "a $n s outage: stalled_seconds $st, less than the outage"
	lc_netns_wait_no_agents 90
done
(($(lc_netns_stat ab 'a>b' drop_cut) > 0)) || lc_fail "the cuts lost nothing"
printf '%s' "$report" | sed 's/^/=== TIME LOST: /'
echo PASS
