#!/usr/bin/env bash
# Slow strangers on the data ports (issue 20, item 6).
#
# Every data connection gets one absolute deadline for its whole handshake
# (LC_HANDSHAKE_TIMEOUT_MS, 10 s, from accept to verified), whatever it
# sends meanwhile; and each listener caps the handshakes it runs at once
# per peer address, dropping the oldest of an address that has too many
# (or the oldest of all when every slot is busy), so that strangers, from
# the copy's own address or another, cannot keep the real peer out.
#
#  A. push, the sink accepts: a stranger that sends one byte a second is
#     dropped at its deadline while the copy is held in flight (TLS and
#     --no-encrypt), and the copy then completes.
#  B. -z, the source accepts: the same, while a gate keeps the sink from
#     reaching that stream until the stranger is gone (a stream that
#     connects drops its other handshakes at once, so only a stream still
#     waiting for its sink shows the deadline).
#  C. push: strangers from 127.0.0.1 (the copy's own address) and from
#     127.0.0.2 open more handshakes than the sink has slots and keep
#     them going before the source dials: the copy still completes.
#  D. -z: the same against the source's listeners.
#
# The strangers are connected by the test hook LANECP_TEST_PROXY (called
# with the listener's ports before the peer is told them), so they are
# there first.  Waits are for events (the stranger sees its connection
# closed, a log line, the copy's exit), each with a generous cap.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_need_test_hooks	# LANECP_TEST_PROXY
trap '' PIPE
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
CASES=${LC_HS_CASES:-A B C D}
mkdir -p "$d/remote" "$d/local"
head -c $((4 << 20)) /dev/urandom >"$d/local/src"

SP=$LC_TOOLS_DIR/lc_slowpeer	# the strangers and the gate (see there)

# every helper process started (the strangers, the gates): killed on exit
: >"$d/pids"
lc_on_exit "kill \$(cat '$d/pids') 2>/dev/null"

# The test hook: "hook.sh ADDR PORT..." writes its arguments to
# $d/hook.args, runs $d/hook.before (the case's strangers and gates; it
# may print other ports to $d/hook.ports) and prints the ports to use.
cat >"$d/hook.sh" <<EOF
#!/usr/bin/env bash
set -e
echo "\$*" >"$d/hook.args"
rm -f "$d/hook.ports"
[[ -x $d/hook.before ]] && "$d/hook.before" "\$@" </dev/null >/dev/null 2>&1
if [[ -s $d/hook.ports ]]; then cat "$d/hook.ports"; else shift; echo "\$@"; fi
EOF
chmod +x "$d/hook.sh"

# start_stranger NAME ADDR PORT FROM COUNT KIND: in the background (killed
# on exit); waits until its connections are up.
start_stranger() {
	local out=$d/$1.out
	rm -f "$out"
	"$SP" stranger "$out" "$2" "$3" "$4" "$5" "$6" \
		</dev/null >/dev/null 2>"$d/$1.err" &
	echo $! >>"$d/pids"
	lc_wait_for '^up ' "$out" 60
}

# wait_copy PID LOG CAP: sets RC to the copy's exit status (a copy still
# running after CAP s is killed: RC=124, its log shown).
wait_copy() {
	local pid=$1 i
	for ((i = 0; i < $3 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		lc__show "$2"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		RC=124
		return
	fi
	RC=0
	wait "$pid" || RC=$?
}

kind_flag() {
	[[ $1 == tls ]] && return 0
	echo --no-encrypt
}

# ---- A: push, the sink accepts: one slow stranger mid-copy ----
case_a() {
	local mode=$1 kind=sink port lp log=$d/a-$1.log
	[[ $mode == tls ]] && kind=tls
	rm -f "$d/remote/fifo" "$d/remote/out" "$d/go" "$d/hook.before"
	mkfifo "$d/remote/fifo"
	{ while [[ ! -e $d/go ]]; do sleep 0.05; done; cat; } \
		<"$d/remote/fifo" >"$d/remote/out" &
	local reader=$!
	lc_on_exit "lc__kill_tree $reader"
	LANECP_TEST_PROXY=$d/hook.sh "$LANECP" -F "$LC_SSH_CONFIG" -vv -s 2 -f \
		--direct $(kind_flag "$mode") "$d/local/src" "$H:$d/remote/fifo" \
		2>"$log" &
	local copy=$!
	lc_on_exit "kill -9 $copy 2>/dev/null"
	lc_wait_for '[0-9]+ data streams connected' "$log" 60
	read -r _ port _ <"$d/hook.args"
	start_stranger "a-$mode" 127.0.0.1 "$port" 127.0.0.2 1 "$kind"
	# the deadline is 10 s from accept; wait up to 40 s for the drop
	lc_wait_for '^closed ' "$d/a-$mode.out" 40
	lp=$(sed -n 's/^closed 127\.0\.0\.2:\([0-9]*\) .*/\1/p' "$d/a-$mode.out")
	lc_note "   stranger: $(cat "$d/a-$mode.out" | tail -1)"
	lc_wait_for "dropped data connection from 127\\.0\\.0\\.2 port $lp: .*not finished within 10 s" \
		"$log" 30
	: >"$d/go"
	wait_copy "$copy" "$log" 120
	wait "$reader" || true
	[[ $RC == 0 ]] || { lc__show "$log"; lc_fail "A $mode: the copy exited $RC"; }
	cmp "$d/local/src" "$d/remote/out" || lc_fail "A $mode: the copy differs"
	lc_log_lacks 'Sanitizer|runtime error:' "$log"
}

# ---- B: -z, the source accepts: one slow stranger, the sink gated ----
case_b() {
	local mode=$1 kind=source lp log=$d/b-$1.log
	[[ $mode == tls ]] && kind=tls
	rm -f "$d/remote/b-$mode" "$d/flag" "$d/gate.out"
	# stream 0: the stranger on the source's port; the sink gets a gate
	# that turns it away until the stranger is gone
	cat >"$d/hook.before" <<EOF
#!/usr/bin/env bash
"$SP" gate "$d/gate.out" "\$2" "$d/flag" </dev/null \
	>/dev/null 2>&1 &
echo \$! >>"$d/pids"
"$SP" stranger "$d/b-$mode.out" 127.0.0.1 "\$2" 127.0.0.2 1 \
	$kind </dev/null >/dev/null 2>&1 &
echo \$! >>"$d/pids"
for ((i = 0; i < 600; i++)); do
	[[ -s $d/gate.out && -s $d/b-$mode.out ]] && break
	sleep 0.05
done
echo "\$(sed -n 's/^port //p' "$d/gate.out") \$3" >"$d/hook.ports"
EOF
	chmod +x "$d/hook.before"
	rm -f "$d/b-$mode.out"
	LANECP_TEST_PROXY=$d/hook.sh "$LANECP" -F "$LC_SSH_CONFIG" -vv -s 2 -z \
		$(kind_flag "$mode") "$d/local/src" "$H:$d/remote/b-$mode" \
		2>"$log" &
	local copy=$!
	lc_on_exit "kill -9 $copy 2>/dev/null"
	lc_wait_for '^up ' "$d/b-$mode.out" 60
	lc_wait_for '^closed ' "$d/b-$mode.out" 40
	lp=$(sed -n 's/^closed 127\.0\.0\.2:\([0-9]*\) .*/\1/p' "$d/b-$mode.out")
	lc_note "   stranger: $(tail -1 "$d/b-$mode.out")"
	lc_wait_for "dropped data connection from 127\\.0\\.0\\.2 port $lp: .*not finished within 10 s" \
		"$log" 30
	: >"$d/flag"
	wait_copy "$copy" "$log" 120
	[[ $RC == 0 ]] || { lc__show "$log"; lc_fail "B $mode: the copy exited $RC"; }
	cmp "$d/local/src" "$d/remote/b-$mode" || lc_fail "B $mode: the copy differs"
	lc_log_lacks 'Sanitizer|runtime error:' "$log"
}

# ---- C and D: many slow strangers, from two addresses, there first ----
# hook.before for them: N strangers from each address on every port.
strangers_before() {
	local n=$1 kind=$2 tag=$3
	cat >"$d/hook.before" <<EOF
#!/usr/bin/env bash
shift
k=0
for p in "\$@"; do
	for from in 127.0.0.1 127.0.0.2; do
		k=\$((k + 1))
		rm -f "$d/$tag.\$k.out"
		"$SP" stranger "$d/$tag.\$k.out" 127.0.0.1 "\$p" \
			"\$from" $n $kind </dev/null >/dev/null 2>&1 &
		echo \$! >>"$d/pids"
		# one batch at a time: the first ones are the oldest
		for ((i = 0; i < 600; i++)); do
			[[ -s $d/$tag.\$k.out ]] && break
			sleep 0.05
		done
	done
done
EOF
	chmod +x "$d/hook.before"
}

case_c() {
	local log=$d/c.log
	rm -f "$d/remote/c"
	# the sink has 80 handshake slots (64 streams + 16); 2 x 2 x 23 = 92
	# strangers would fill them all
	strangers_before 23 tls c
	LANECP_TEST_PROXY=$d/hook.sh "$LANECP" -F "$LC_SSH_CONFIG" -v -s 2 \
		--direct "$d/local/src" "$H:$d/remote/c" 2>"$log" &
	local copy=$!
	lc_on_exit "kill -9 $copy 2>/dev/null"
	wait_copy "$copy" "$log" 120
	[[ $RC == 0 ]] || { lc__show "$log"; lc_fail "C: the copy exited $RC"; }
	cmp "$d/local/src" "$d/remote/c" || lc_fail "C: the copy differs"
	# one address had more than its share: its oldest went
	lc_log_has 'dropped data connection from 127\.0\.0\.2 port [0-9]+: more than [0-9]+ handshakes at once from 127\.0\.0\.2' "$log"
	lc_log_has 'dropped data connection from 127\.0\.0\.1 port [0-9]+: more than [0-9]+ handshakes at once from 127\.0\.0\.1' "$log"
	lc_log_lacks 'Sanitizer|runtime error:' "$log"
}

case_d() {
	local log=$d/d.log
	rm -f "$d/remote/dz"
	strangers_before 6 source dz
	LANECP_TEST_PROXY=$d/hook.sh "$LANECP" -F "$LC_SSH_CONFIG" -v -s 2 -z \
		--no-encrypt "$d/local/src" "$H:$d/remote/dz" 2>"$log" &
	local copy=$!
	lc_on_exit "kill -9 $copy 2>/dev/null"
	wait_copy "$copy" "$log" 120
	[[ $RC == 0 ]] || { lc__show "$log"; lc_fail "D: the copy exited $RC"; }
	cmp "$d/local/src" "$d/remote/dz" || lc_fail "D: the copy differs"
	lc_log_has 'dropped data connection from 127\.0\.0\.2 port [0-9]+: more than [0-9]+ handshakes at once from 127\.0\.0\.2' "$log"
	lc_log_lacks 'Sanitizer|runtime error:' "$log"
}

for c in $CASES; do
	case $c in
	A)
		lc_note "A. push: a slow stranger on the sink's port is dropped at its deadline (TLS)"
		case_a tls
		lc_note "A. push: the same with --no-encrypt"
		case_a plain
		;;
	B)
		lc_note "B. -z: a slow stranger on the source's port is dropped at its deadline (TLS)"
		case_b tls
		lc_note "B. -z: the same with --no-encrypt"
		case_b plain
		;;
	C)
		lc_note "C. push: 92 slow strangers from two addresses first; the copy completes"
		case_c
		;;
	D)
		lc_note "D. -z: 24 slow strangers from two addresses first; the copy completes"
		case_d
		;;
	esac
done

echo PASS
