#!/usr/bin/env bash
# The sink defends itself (issue #9): its memory stays under its bound
# whatever streams and block size are asked for, a partial file that is not
# its own is never written into, devices and FIFOs need -f, and no set-id
# bits come from the peer.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"
head -c 100000 /dev/urandom >"$d/local/f"
# ASan and TSan (shadow memory) make RSS meaningless; UBSan alone does
# not.  gcc links their runtimes as shared libraries, clang into the
# program: look for the runtime's entry point in the program itself.
sanitized=0
if grep -aqE '__(a|t)san_init' "$LANECP"; then
	sanitized=1
fi

# ---- memory ----
# The remote agent runs under a wrapper that records its peak RSS
# (ru_maxrss of the waited-for child, KiB) when it exits.
agent_wrapper() { # NAME [AGENT OPTIONS...]
	local w=$d/$1.sh
	shift
	cat >"$w" <<EOF
#!/bin/sh
exec python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, st, ru = os.wait4(pid, 0)
with open(sys.argv[1] + ".rss", "w") as f:
    f.write("%d\n" % ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(st))
' "$w" "$LANECP" "\$@" $*
EOF
	chmod +x "$w"
	echo "$w"
}
command -v python3 >/dev/null || lc_fail "python3 not installed"
big_mb=${LC_TEST_BIG_MB:-300}
head -c $((big_mb << 20)) /dev/urandom >"$d/local/big"

# peak_check WRAPPER BOUND_MIB: the copy's agent peaked under the bound
peak_check() {
	local rss
	rss=$(cat "$1.rss")
	lc_note "sink agent peak RSS $((rss >> 10)) MiB (bound $2 MiB)"
	if [[ $sanitized == 1 ]]; then
		lc_note "sanitizer build: peak not compared (shadow memory)"
		return 0
	fi
	((rss <= $2 << 10)) || lc_fail "sink agent peaked at $rss KiB, over $2 MiB"
}

lc_note "-s 64 -B 64m push of $big_mb MiB: the sink stays under its default bound, 128 MiB"
w=$(agent_wrapper plain)
lc_lanecp -v -s 64 -B 64m -T "$w" "$d/local/big" "$H:$d/remote/big"
cmp "$d/local/big" "$d/remote/big" || lc_fail "big differs"
peak_check "$w" 128
# the controller says what the sink granted
lc_log_has 'memory bound allows [0-9]+ streams of [0-9]+ KiB blocks \(64 of 65536 KiB asked for\)' "$LC_ERR"

lc_note "--max-memory 40m: the same copy stays under 40 MiB"
w=$(agent_wrapper small --max-memory 40m)
lc_lanecp -f -s 64 -B 64m -T "$w" "$d/local/big" "$H:$d/remote/big"
cmp "$d/local/big" "$d/remote/big" || lc_fail "big differs"
peak_check "$w" 40
rm -f "$d/remote/big"

lc_note "--max-memory is checked strictly"
lc_expect_exit 2 "$LANECP" --agent --max-memory 1m </dev/null
lc_expect_exit 2 "$LANECP" --agent --max-memory 64q </dev/null
lc_expect_exit 2 "$LANECP" --max-memory 64m "$d/local/f" "$H:$d/remote/"

# ---- set-id bits ----
lc_note "setuid, setgid and sticky bits from the source are not applied"
for m in 4755 2755 1755 6777; do
	chmod "$m" "$d/local/f"
	rm -f "$d/remote/m$m"
	lc_lanecp "$d/local/f" "$H:$d/remote/m$m"
	got=$(stat -c %a "$d/remote/m$m")
	want=$(printf '%o' $((8#$m & 8#777 & ~8#$(umask))))
	[[ $got == "$want" ]] || lc_fail "mode $m arrived as $got, want $want"
done
chmod 0644 "$d/local/f"

# ---- devices and FIFOs ----
# A FIFO reader that is ready before any writer (opened O_NONBLOCK), and
# reads until the writer closes: output in $2.out, "ready" in $2.ready;
# its pid in $!.
fifo_reader() {
	python3 -c '
import os, select, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
open(sys.argv[2] + ".ready", "w").write("ready\n")
out = open(sys.argv[2] + ".out", "wb")
p = select.poll()
p.register(fd, select.POLLIN)
while True:
    p.poll()
    try:
        b = os.read(fd, 1 << 20)
    except BlockingIOError:
        continue
    if not b:
        break
    out.write(b)
' "$1" "$2" >/dev/null &
	lc_on_exit "kill $!"
}

lc_note "an existing FIFO needs -f; nothing reaches its reader without"
mkfifo "$d/remote/fifo"
fifo_reader "$d/remote/fifo" "$d/r1"
pid=$!
lc_wait_for ready "$d/r1.ready" 10
lc_lanecp_expect 6 "fifo: exists and is a FIFO \(use -f" "$d/local/f" "$H:$d/remote/fifo"
: >"$d/remote/fifo"	# our own writer: the reader sees its end
wait "$pid"
[[ ! -s $d/r1.out ]] || lc_fail "the FIFO's reader got data without -f"
[[ -p $d/remote/fifo ]] || lc_fail "the FIFO was replaced"
fifo_reader "$d/remote/fifo" "$d/r2"
pid=$!
lc_wait_for ready "$d/r2.ready" 10
lc_lanecp -f "$d/local/f" "$H:$d/remote/fifo"
wait "$pid"
cmp "$d/local/f" "$d/r2.out" || lc_fail "the FIFO's reader got other data with -f"

lc_note "an existing character device needs -f (/dev/null does not)"
if mknod "$d/remote/full" c 1 7 2>/dev/null && mknod "$d/remote/zero" c 1 5 &&
	echo x >"$d/remote/zero" 2>/dev/null; then
	# /dev/full fails every write: EXISTS shows nothing was written
	lc_lanecp_expect 6 "full: exists and is a character device \(use -f" \
		"$d/local/f" "$H:$d/remote/full"
	lc_lanecp_expect 6 "zero: exists and is a character device" \
		"$d/local/f" "$H:$d/remote/zero"
	lc_lanecp_expect 10 "full" -f "$d/local/f" "$H:$d/remote/full"
	lc_lanecp -f "$d/local/f" "$H:$d/remote/zero"
	[[ -c $d/remote/full && -c $d/remote/zero ]] || lc_fail "a device was replaced"
else
	lc_skip "character-device targets: cannot make device nodes here (not root, or nodev)"
fi
lc_lanecp "$d/local/f" "$H:/dev/null"

# ---- partial files ----
lc_note "our own stale partial file is replaced, not reused, without -a"
head -c 5000 /dev/urandom >"$d/remote/.p.lanecp-part"
lc_lanecp "$d/local/f" "$H:$d/remote/p"
cmp "$d/local/f" "$d/remote/p" || lc_fail "p differs"

lc_note "a hard-linked partial file is refused, and the other link untouched"
echo keep >"$d/remote/other"
ln "$d/remote/other" "$d/remote/.h.lanecp-part"
for a in "" -a -f; do
	lc_lanecp_expect 6 "\.h\.lanecp-part: partial file is hard-linked; not writing into it" \
		$a "$d/local/f" "$H:$d/remote/h"
done
[[ $(cat "$d/remote/other") == keep && ! -e $d/remote/h ]] ||
	lc_fail "a hard-linked partial file was written"

lc_note "a symlink as the partial file is refused"
ln -s "$d/remote/other" "$d/remote/.s.lanecp-part"
lc_lanecp_expect 6 "\.s\.lanecp-part: partial file is not a regular file" \
	-a "$d/local/f" "$H:$d/remote/s"
[[ $(cat "$d/remote/other") == keep ]] || lc_fail "written through a symlink"

lc_note "a partial file that others may write is not resumed"
head -c 5000 "$d/local/f" >"$d/remote/.w.lanecp-part"
chmod 0666 "$d/remote/.w.lanecp-part"
lc_lanecp_expect 6 "\.w\.lanecp-part: partial file is writable by others" \
	-a "$d/local/f" "$H:$d/remote/w"

if [[ $(id -u) == 0 ]] && id nobody >/dev/null 2>&1; then
	lc_note "another user's partial file in a sticky directory is refused"
	share=$(mktemp -d /tmp/lanecp-share.XXXXXX)
	lc_on_exit "rm -rf '$share'"
	chmod 1777 "$share"
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		sh -c "umask 0; : >'$share/.t.lanecp-part'"
	for a in "" -a -f; do
		lc_lanecp_expect 6 "$(lc_re "$share")/\.t\.lanecp-part: partial file is owned by another user; not writing into it" \
			$a "$d/local/f" "$H:$share/t"
	done
	[[ ! -e $share/t ]] || lc_fail "a target appeared from nobody's partial file"
	[[ ! -s $share/.t.lanecp-part && $(stat -c %U "$share/.t.lanecp-part") == nobody ]] ||
		lc_fail "nobody's partial file was written"
	lc_note "a copy into the sticky directory is the sink user's"
	lc_lanecp -a "$d/local/f" "$H:$share/u"
	[[ $(stat -c '%U %a' "$share/u") == "root 644" ]] ||
		lc_fail "target $(stat -c '%U %a' "$share/u")"
else
	lc_skip "other-user partial file: not root or no user nobody"
fi
lc_note "ok"
