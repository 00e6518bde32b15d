#!/usr/bin/env bash
# Progress and the figures a copy reports: the live line on a terminal (a
# pty), -q, plain -P lines, --json-progress, the summary line without a
# terminal; and --json and -l figures that say what happened, also after
# SIGTERM (bytes_written is the part file's size) and for a slow copy
# (seconds is the wall time).  -x makes a copy last a few seconds.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"
size=$((8 << 20))
head -c $size /dev/urandom >"$d/local/eight"

# on_pty OUT PIDFILE COLS CMD...: run CMD on a pty COLS wide, everything it
# prints in OUT (raw bytes), its pid in PIDFILE; exits with CMD's status.
on_pty() {
	python3 - "$@" <<'PY'
import fcntl, os, pty, struct, sys, termios
out, pidfile, cols, argv = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
with open(pidfile + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(pidfile + ".tmp", pidfile)
data = bytearray()
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    data += b
_, st = os.waitpid(pid, 0)
open(out, "wb").write(data)
sys.exit(os.waitstatus_to_exitcode(st))
PY
}
L=("$LANECP" -F "$LC_SSH_CONFIG")
# no_sanitizer FILE: the output of a run not made by lc_lanecp
no_sanitizer() {
	if grep -Eq 'Sanitizer|runtime error:' "$1"; then
		cat -v "$1" >&2
		lc_fail "sanitizer report in $1"
	fi
}
# jfield FILE KEY: a field of the last JSON line of FILE
jfield() {
	python3 -c 'import json, sys
print(json.loads(open(sys.argv[1]).read().splitlines()[-1])[sys.argv[2]])' \
	    "$1" "$2"
}

lc_note "no terminal: no live line, but the summary line (bytes, seconds, rate)"
lc_lanecp "$d/local/eight" "$H:/dev/null"
lc_log_has "^lanecp: copied 1 file, $size bytes \\(8\\.0 MiB\\), failed 0 in [0-9]+\\.[0-9]{3} s \\([0-9.]+ [kMG]B/s\\) to $H:/dev/null\$" "$LC_ERR"
if grep -q $'\r' "$LC_ERR"; then
	lc__show "$LC_ERR"
	lc_fail "a carriage return without a terminal"
fi

lc_note "-P: plain progress lines without a terminal; -q silences them"
lc_lanecp -P 0.5 -x 2m -f "$d/local/eight" "$H:$d/remote/p"
n=$(grep -Ec '^[0-9.]+ [KMG]?i?B of 8\.0 MiB \([0-9]+%\), ' "$LC_ERR" || true)
((n >= 3)) || { lc__show "$LC_ERR"; lc_fail "-P 0.5 over 4 s: $n lines"; }
# the last line says how it ended, without a rate (the summary has it)
lc_log_has '^8\.0 MiB of 8\.0 MiB \(100%\), done$' "$LC_ERR"
lc_log_has '^lanecp: copied 1 file' "$LC_ERR"
lc_lanecp -q -P 0.5 -x 4m -f "$d/local/eight" "$H:$d/remote/p"
[[ ! -s $LC_ERR ]] || { lc__show "$LC_ERR"; lc_fail "-q -P printed something"; }

lc_note "a terminal: the live line, rewritten in place, as wide as the terminal"
rc=0
on_pty "$d/live.out" "$d/live.pid" 60 "${L[@]}" -x 2m -f "$d/local/eight" \
    "$H:$d/remote/live" || rc=$?
no_sanitizer "$d/live.out"
[[ $rc == 0 ]] || { cat -v "$d/live.out" >&2; lc_fail "on a pty: exit $rc"; }
cmp "$d/local/eight" "$d/remote/live" || lc_fail "on a pty: copy differs"
python3 - "$d/live.out" 60 <<'PY' || { cat -v "$d/live.out" >&2; lc_fail "the live line"; }
import re, sys
out = open(sys.argv[1], "rb").read().decode()
cols = int(sys.argv[2])
# every drawing of the line: \r TEXT ESC[K, no newline inside
draws = re.findall(r"\r([^\r\n\x1b]*)\x1b\[K", out)
lines = [t for t in draws if t]
assert len(lines) >= 3, ("redrawn", lines)
assert all(len(t) <= cols - 1 for t in lines), ("wider than the pty", lines)
assert any(re.match(r"[0-9.]+ [KMG]?i?B of 8\.0 MiB \([0-9]+%\), [0-9.]+ [kMG]B/s, ETA", t)
           for t in lines), ("bytes, rate, ETA", lines)
# it never ends in a newline: the summary starts at the left margin,
# after the line was erased (\r ESC[K with nothing drawn)
i = out.index("lanecp: copied 1 file, updated 0, 8388608 bytes")
assert out[:i].endswith("\r\x1b[K"), repr(out[max(0, i - 80):i + 20])
assert "\n" not in out[:i], "a newline before the summary"
PY

lc_note "a terminal, -q: nothing at all on success"
rc=0
on_pty "$d/q.out" "$d/q.pid" 80 "${L[@]}" -q -x 4m -f "$d/local/eight" \
    "$H:$d/remote/q" || rc=$?
no_sanitizer "$d/q.out"
[[ $rc == 0 ]] || { cat -v "$d/q.out" >&2; lc_fail "-q on a pty: exit $rc"; }
[[ ! -s $d/q.out ]] || { cat -v "$d/q.out" >&2; lc_fail "-q on a pty printed"; }

lc_note "a terminal: the live line is erased before an error line"
rm -f "$d/remote/.intr.lanecp-part" "$d/int.pid"
on_pty "$d/int.out" "$d/int.pid" 80 "${L[@]}" -x 1m "$d/local/eight" \
    "$H:$d/remote/intr" &
pty=$!
lc_wait_size "$d/remote/.intr.lanecp-part" $((2 << 20)) 60
lc_wait_size "$d/int.pid" 1 10
kill -TERM "$(cat "$d/int.pid")"
rc=0
wait "$pty" || rc=$?
no_sanitizer "$d/int.out"
[[ $rc == 143 ]] || { cat -v "$d/int.out" >&2; lc_fail "SIGTERM on a pty: exit $rc"; }
python3 - "$d/int.out" <<'PY' || { cat -v "$d/int.out" >&2; lc_fail "error line after the live line"; }
import sys
out = open(sys.argv[1], "rb").read().decode()
i = out.index("lanecp: interrupted by signal 15")
assert "of 8.0 MiB" in out[:i], "no live line before the error"
assert out[:i].endswith("\r\x1b[K"), repr(out[max(0, i - 80):i + 40])
PY

lc_note "--json-progress: a JSON line a second on stdout, then the result"
lc_lanecp --json-progress -x 2m -f "$d/local/eight" "$H:$d/remote/jp" \
    >"$d/jp.out"
python3 - "$d/jp.out" $size <<'PY' || { cat "$d/jp.out" >&2; lc_fail "--json-progress"; }
import json, sys
size = int(sys.argv[2])
objs = [json.loads(l) for l in open(sys.argv[1])]
prog = [o for o in objs if o["type"] == "progress"]
assert objs[-1]["type"] == "result" and objs[:-1] == prog, objs
assert len(prog) >= 3, ("a line a second over 4 s", prog)
keys = {"elapsed", "bytes", "total", "total_final", "rate", "files",
        "files_total", "streams"}
for a, b in zip(prog, prog[1:]):
    assert set(b) - {"type"} == keys, b
    assert b["elapsed"] > a["elapsed"] and b["bytes"] >= a["bytes"], (a, b)
# the total is known once the source has listed the file
assert all(p["total"] == size and p["files_total"] == 1 for p in prog
           if p["total_final"]), prog
assert prog[-1]["total_final"], prog
assert any(0 < p["bytes"] < size and p["rate"] > 0 and p["streams"] > 0
           for p in prog), prog
r = objs[-1]
assert r["ok"] is True and r["bytes_written"] == size and r["bytes"] == size, r
PY

lc_note "SIGTERM: --json and -l say how many bytes reached the part file"
part=$d/remote/.term.lanecp-part
rm -f "$part" "$d/term.log"
t0=$(date +%s%N)
"${L[@]}" --json -l "$d/term.log" -P 0.5 -x 1m "$d/local/eight" \
    "$H:$d/remote/term" >"$d/term.json" 2>"$d/term.err" &
pid=$!
lc_wait_size "$part" $((2 << 20)) 60
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
t1=$(date +%s%N)
no_sanitizer "$d/term.err"
[[ $rc == 143 ]] || { lc__show "$d/term.err"; lc_fail "SIGTERM: exit $rc"; }
have=$(stat -c %s "$part")
# -P: the last progress line says it was interrupted, never "done"
grep -E ' of 8\.0 MiB ' "$d/term.err" | tail -n 1 | grep -Eq ', interrupted$' ||
	{ lc__show "$d/term.err"; lc_fail "SIGTERM: the last -P line"; }
lc_log_lacks ', done$' "$d/term.err"
lc_note "  part file: $have bytes; --json: bytes_written $(jfield "$d/term.json" bytes_written), bytes $(jfield "$d/term.json" bytes), seconds $(jfield "$d/term.json" seconds)"
python3 - "$d/term.json" "$have" $(((t1 - t0) / 1000000)) <<'PY' || { cat "$d/term.json" >&2; lc_fail "--json after SIGTERM"; }
import json, sys
j = json.load(open(sys.argv[1]))
have, wall = int(sys.argv[2]), int(sys.argv[3]) / 1000
assert j["ok"] is False and j["exit_status"] == 143, j
assert j["bytes_written"] == have, ("bytes_written vs the part file", j["bytes_written"], have)
assert j["resumed_bytes"] == 0, j
assert j["bytes"] >= j["bytes_written"], j
# the run's wall time (what the test saw includes starting and ending
# the process: up to a second in a sanitizer build on a loaded machine)
assert j["seconds"] >= wall - 1.5, (j["seconds"], wall)
PY
# -l: the same figures as --json
lc_log_has "result: failed after 1 attempt, exit [0-9]+, copied 0 files, $have bytes( \\([0-9.]+ [KM]iB\\))?, failed 0, $(jfield "$d/term.json" bytes) sent, 0 resumed, $(printf %.3f "$(jfield "$d/term.json" seconds)") s: interrupted by signal 15" "$d/term.log"

lc_note "-a after it: resumed_bytes and bytes_written add up to the file"
lc_lanecp -a --json -l "$d/resume.log" "$d/local/eight" "$H:$d/remote/term" \
    >"$d/resume.json"
cmp "$d/local/eight" "$d/remote/term" || lc_fail "resumed copy differs"
w=$(jfield "$d/resume.json" bytes_written)
k=$(jfield "$d/resume.json" resumed_bytes)
((k > 0 && w + k == size)) ||
	lc_fail "resume: $k resumed + $w written is not $size"
lc_log_has "result: ok, copied 1 file, $w bytes( \\([0-9.]+ [KM]iB\\))?, failed 0, $(jfield "$d/resume.json" bytes) sent, $k resumed, $(printf %.3f "$(jfield "$d/resume.json" seconds)") s" "$d/resume.log"
lc_log_has "copied 1 file, $w bytes( \\([0-9.]+ [KM]iB\\))?, failed 0 in " "$d/resume.log"
lc_log_lacks "[0-9]+ bytes written" "$LC_ERR"

lc_note "a slow copy: seconds is the wall time of the run"
t0=$(date +%s%N)
lc_lanecp --json -x 2m -f "$d/local/eight" "$H:$d/remote/slow" >"$d/slow.json"
t1=$(date +%s%N)
python3 - "$d/slow.json" $(((t1 - t0) / 1000000)) <<'PY' || { cat "$d/slow.json" >&2; lc_fail "seconds"; }
import json, sys
j = json.load(open(sys.argv[1]))
wall = int(sys.argv[2]) / 1000
# (the process's start and end: up to a second under a sanitizer, loaded)
assert j["seconds"] >= wall - 1.5, (j["seconds"], wall)
PY

echo PASS
