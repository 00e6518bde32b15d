#!/usr/bin/env bash
# Fan-out (issue 25): --also TARGET copies the same sources to several
# targets as a chain (this host to the first, then each target from the
# one before: a host-to-host copy), each hop an ordinary copy (its own SSH
# connections, agents and checks); with one source and -r the hops run at
# once, each fed file by file as the target before makes them (the last
# target has files before the first is complete: their mtimes say so).
#
# Three targets on two sshd servers (the fixture's and a second one):
# each tree equal to the source with -p's modes and mtimes, --json an
# array of three objects in order with "target", "from" and "from_why"
# first, one summary line per target on stderr saying where its data came
# from, and this host writing the data once (counted under strace -f),
# three times with --also-direct.  A directory's contents with --delete
# and --exclude through the chain.  One target that cannot be written (a
# 0555 directory, the remote agent without CAP_DAC_OVERRIDE) and one full
# (a 256 KiB tmpfs): the hop to it fails and the copy from this host
# too, the next target is copied from this host ("target 2 ...
# incomplete"), the run exits 23 and says which, no partial file is left;
# a re-run with -a -u completes only what is missing, the chain whole
# again.  A SIGTERM during the first target: exit 143, the others not
# started.  The -l log has a line per target.  Every target failing the
# same way exits with that status.  Bad --also values: exit 2, one line
# naming the value, nothing copied.  Without --also, --json stays one
# object.  With --also, -n's lines start "target I of N TARGET: " and
# --json-progress's objects carry "target", "target_index" and "targets";
# without it, neither.  The copies of the overlapped chain log in at once
# without a terminal, in turn on one (script(1)).  (Targets that cannot reach each other:
# test_netns_star, test_netns_fanout; one killed mid-hop: test_netns_fanout.)
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
umask 022
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
CASE=setup

# a second server: its own host keys and port, the same user key
lc_sshd_extra two
echo "$LC_X_KNOWN" >"$d/two.known"
CFG=$d/ssh_config_two
{
	cat "$LC_SSH_CONFIG"
	lc_ssh_host_block two "$LC_X_PORT" "$d/two.known"
} >"$CFG"
H2=two

# run CODE ARGS...: lanecp with both hosts known, stdout to $d/out, stderr
# to $d/err; fails unless it exits CODE
run() {
	local want=$1
	shift
	lc_run_cfg "$CFG" "$d/out" "$d/err" "$@"
	if [[ $LC_RC != "$want" ]]; then
		lc__show "$d/err"
		lc_fail "lanecp $* exited $LC_RC, expected $want"
	fi
}


src=$d/src
mkdir -p "$src/sub/deeper"
head -c 1048576 /dev/urandom >"$src/big"
echo one >"$src/one"
echo two >"$src/sub/two"
head -c 70000 /dev/urandom >"$src/sub/deeper/mid"
ln -s one "$src/link"
chmod 0640 "$src/one"
chmod 0750 "$src/sub"
touch -d '2020-01-02 03:04:05' "$src/sub/two"

# wrote FILE CMD...: runs CMD under strace -f; FILE gets the bytes CMD
# and its children wrote (write, writev, send, sendto, sendmsg: sockets,
# stderr and the -l log); exits with CMD's status
cat >"$d/wrote.py" <<'EOF'
import os, re, subprocess, sys
log = sys.argv[1] + ".strace"
# LeakSanitizer cannot run under ptrace (an ASan build): no leak check here
env = dict(os.environ)
env["ASAN_OPTIONS"] = ":".join(
    x for x in (env.get("ASAN_OPTIONS", ""), "detect_leaks=0") if x)
rc = subprocess.call(["strace", "-f", "-qq", "-e", "signal=none", "-o", log,
    "-e", "trace=write,writev,send,sendto,sendmsg,pwrite64,pwritev"] +
    sys.argv[2:], env=env)
n = 0
for line in open(log):
    # a call, or one that another thread interrupted, then resumed
    m = re.search(r"^\d+ +(<\.\.\. )?(write|writev|send|sendto|sendmsg|"
        r"pwrite64|pwritev)[( ].*\) += (\d+)$", line)
    if m:
        n += int(m.group(3))
open(sys.argv[1], "w").write("%d\n" % n)
sys.exit(rc)
EOF
head -c $((24 << 20)) /dev/urandom >"$src/big"
size=$(find "$src" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')

CASE="three targets, two servers: a chain"
command -v strace >/dev/null || lc_fail "no strace (scripts/deps.sh test)"
LC_LANECP_WRAP=(python3 "$d/wrote.py" "$d/wrote")
run 0 -v -r -p --json -l "$d/run.log" "$src" "$H:$d/t1/" \
    --also "$H2:$d/t2/" --also "$H:$d/t3/"
LC_LANECP_WRAP=()
for t in t1 t2 t3; do
	lc_same_tree "$src" "$d/$t/src"
done
lc_log_has 'a chain whose hops run at once: this host to the first, then each target from' "$d/err"
# with no terminal to ask on (stdin not one, no controlling terminal: CI,
# cron) the three copies log in at once; else in turn
if [[ -t 0 ]] || (exec 3<>/dev/tty) 2>/dev/null; then
	lc_log_has 'stream keys; logins in turn: one may ask on the terminal\)' \
	    "$d/err"
else
	lc_log_has 'stream keys; logins at once\)' "$d/err"
fi
lc_log_has "target 1 of 3 [^ ]*t1/: ok, from this host, copied 4 files" \
    "$d/err"
lc_log_has "target 2 of 3 [^ ]*t2/: ok, from [^ ]*t1/ \\(chain\\), copied 4" \
    "$d/err"
lc_log_has "target 3 of 3 [^ ]*t3/: ok, from two:[^ ]*t2/ \\(chain\\), copi" \
    "$d/err"
lc_json_check "$d/out" '
assert isinstance(j, list) and len(j) == 3, j
for i, o in enumerate(j):
    assert list(o)[:3] == ["target", "from", "from_why"], o
    assert o["target"].endswith("/t%d/" % (i + 1)), o
    assert o["ok"] is True and o["exit_status"] == 0, o
    assert o["copied"] == 4 and o["files"] == 4, o
    assert o["from_why"] == "", o
assert j[0]["from"] == "this host", j[0]
assert j[1]["from"] == j[0]["target"] and j[2]["from"] == j[1]["target"], j
assert j[1]["target"].startswith("two:"), j[1]'
# this host sent the data once: under 1.5 times the tree (the SSH
# sessions and stderr write a little too); --also-direct below, 3 times
read -r chain_wrote <"$d/wrote"
((chain_wrote >= size && chain_wrote < size * 3 / 2)) ||
	lc_fail "this host wrote $chain_wrote bytes for a tree of $size"
# each target its own SSH connection: the second server saw one
lc_log_has 'Accepted publickey' "$LC_X_LOG"
# the -l log: a line per target, then the run's result
for i in 1 2 3; do
	lc_log_has "target $i of 3 [^ ]*t$i/: ok, from .*copied 4 files" \
	    "$d/run.log"
done
lc_log_has 'result: ok, copied 12 files' "$d/run.log"

CASE="the hops overlap: the last target has files before the first is complete"
# 16 files of 256 KiB at -x 512k: each copy takes some 8 s.  Without -p a
# file's mtime is when its copy was written, so the last target's oldest
# file older than the first target's newest says the last target was
# being written while the first still was: hop after hop, it would start
# only once the one before is complete.
ov=$d/ov
mkdir -p "$ov/sub"
for i in $(seq -w 1 16); do
	head -c 262144 /dev/urandom >"$ov/sub/f$i"
done
run 0 -v -r -x 512k --json "$ov" "$H:$d/o1/" --also "$H2:$d/o2/" \
    --also "$H:$d/o3/"
for t in o1 o2 o3; do
	diff -r "$ov" "$d/$t/ov" >/dev/null || lc_fail "$t/ov differs from the source"
done
lc_log_has 'a chain whose hops run at once' "$d/err"
newest1=$(find "$d/o1/ov" -type f -printf '%T@\n' | sort -n | tail -1)
oldest3=$(find "$d/o3/ov" -type f -printf '%T@\n' | sort -n | head -1)
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))" \
    "$oldest3" "$newest1" ||
	lc_fail "target 3's first file ($oldest3) came after target 1's last ($newest1): the hops did not overlap"
lc_json_check "$d/out" '
assert [o["ok"] for o in j] == [True] * 3, j
assert j[1]["from"] == j[0]["target"] and j[2]["from"] == j[1]["target"], j
assert all(o["copied"] == 16 for o in j), j
# whether a 256 KiB file is followed or taken whole depends on when a
# mark comes (the next case checks following); the first never is
assert j[0]["followed"] == 0, j'

CASE="one file without -r: the next hops read it as each target writes it"
# 4 MiB at -x 512k takes some 8 s to write at target 1; it is named to
# target 2's source at its FILE_READY there (SRC_PART), read as far as
# target 1's mark says it is written (SRC_AVAIL), and so on to target 3.
# -e: each hop's sum is of what its source read, zeros of holes included.
head -c $((4 << 20)) /dev/urandom >"$d/one"
run 0 -v -e -x 512k -B 128k --json "$d/one" "$H:$d/m1/" \
    --also "$H2:$d/m2/" --also "$H:$d/m3/"
for t in m1 m2 m3; do
	cmp "$d/one" "$d/$t/one" || lc_fail "$t/one differs from the source"
done
[[ -z $(find "$d/m1" "$d/m2" "$d/m3" -name '*lanecp-part*') ]] ||
	lc_fail "a part file was left"
lc_log_has 'a chain whose hops run at once' "$d/err"
lc_log_has "its source reads each file as the target before writes it" \
    "$d/err"
lc_json_check "$d/out" '
assert [o["ok"] for o in j] == [True] * 3, j
assert j[1]["from"] == j[0]["target"] and j[2]["from"] == j[1]["target"], j
assert [o["followed"] for o in j] == [0, 1, 1], j
assert all(o["copied"] == 1 and o["bytes"] == 4 << 20 for o in j), j'
# a sparse file: the target before skips its holes, the next reads zeros
truncate -s 6m "$d/sparse"
head -c 65536 /dev/urandom | dd of="$d/sparse" bs=64k seek=40 conv=notrunc \
    status=none
run 0 -e -x 1m --json "$d/sparse" "$H:$d/m1/" --also "$H2:$d/m2/" \
    --also "$H:$d/m3/"
for t in m1 m2 m3; do
	cmp "$d/sparse" "$d/$t/sparse" || lc_fail "$t/sparse differs from the source"
done
# a source that cannot follow (as before SRC_PART): each hop waits for
# the file to be whole at the target before, the same copy (a test hook)
if "$LANECP" --test-hooks >/dev/null 2>&1; then
	rm -rf "$d/m1" "$d/m2" "$d/m3"
	LANECP_TEST_OLD_SOURCE=nofollow run 0 -v --json "$d/one" \
	    "$H:$d/m1/" --also "$H2:$d/m2/" --also "$H:$d/m3/"
	for t in m1 m2 m3; do
		cmp "$d/one" "$d/$t/one" || lc_fail "nofollow: $t/one differs"
	done
	lc_log_lacks "its source reads each file as the target before" \
	    "$d/err"
	lc_json_check "$d/out" '
assert [o["followed"] for o in j] == [0, 0, 0], j
assert [o["from"] for o in j][1:] == [j[0]["target"], j[1]["target"]], j'
fi

CASE="on a terminal the chain's logins take turns"
# stdin a terminal (script(1)'s pty): a login may ask there, so the copies
# log in one after the other (login_mu), and the chain still overlaps and
# completes
if command -v script >/dev/null 2>&1; then
	: | script -qfec "$LANECP -F $CFG -v -r $ov $H:$d/p1/ \
	    --also $H2:$d/p2/ --also $H:$d/p3/" "$d/typescript" \
	    >"$d/tty.out" 2>&1 ||
		{ lc__show "$d/typescript"; lc_fail "on a terminal: exit $?"; }
	lc_log_has 'logins in turn: one may ask on the terminal\)' \
	    "$d/typescript"
	for t in p1 p2 p3; do
		diff -r "$ov" "$d/$t/ov" >/dev/null ||
			lc_fail "$t/ov differs from the source"
	done
else
	lc_skip "logins on a terminal: no script(1) (bsdutils)"
fi

CASE="--timeout: a copy waiting on the target before is not stalled"
# one 3 MiB file at -x 512k (blocks of 128 KiB, so that the first copy
# moves every quarter second) keeps the first copy busy some 6 s; the
# second has nothing to do meanwhile, which --timeout 2 must not fail
mkdir -p "$d/tw/in"
head -c $((3 << 20)) /dev/urandom >"$d/tw/in/big"
run 0 -r -x 512k -B 128k --timeout 2 "$d/tw/in" "$H:$d/w1/" --also "$H2:$d/w2/"
cmp "$d/tw/in/big" "$d/w2/in/big" || lc_fail "w2/in/big differs"
lc_log_has "target 2 of 2 [^ ]*w2/: ok, from [^ ]*w1/ \\(chain\\)" "$d/err"

CASE="a target's agent that announces other than the chain named"
# every remote agent wraps the real one and gives ov/sub/f05 5 bytes in
# its FILE: the hop from target 1 (a source agent there) is refused for
# it, and target 2 is copied from this host (whose local agent is real)
evil="LC_EVIL_AT=ov/sub/f05 LC_EVIL_SIZE=5 LC_EVIL_REAL=$(printf '%q' "$LANECP") $(printf '%q' "$LC_TOOLS_DIR/lc_evil_agent")"
run 0 -v -r --json -T "$evil" "$ov" "$H:$d/e1/" --also "$H2:$d/e2/"
for t in e1 e2; do
	diff -r "$ov" "$d/$t/ov" >/dev/null || lc_fail "$t/ov differs from the source"
done
lc_log_has "target 2 of 2 [^ ]*e2/: the hop from [^ ]*e1/ failed: .*\"ov/sub/f05\" \\(file, 5 bytes\\) where the chain named \"ov/sub/f05\" \\(file, 262144 bytes\\)" \
    "$d/err"
lc_json_check "$d/out" '
assert [o["ok"] for o in j] == [True, True], j
assert j[1]["from"] == "this host", j[1]
assert "where the chain named" in j[1]["from_why"], j[1]'

CASE="a chain of a directory's contents with --delete and --exclude"
src2=$d/src2
mkdir -p "$src2/sub" "$d/x2" "$d/x3"
echo keep >"$src2/keep"
echo f >"$src2/sub/f"
echo junk >"$src2/a.tmp"
echo stale >"$d/x2/stale"
echo mine >"$d/x3/mine.tmp"
run 0 -r --delete --exclude '*.tmp' --json "$src2/" "$H:$d/x1/" \
    --also "$H2:$d/x2/" --also "$H:$d/x3/"
for x in x1 x2 x3; do
	[[ $(cat "$d/$x/keep") == keep && $(cat "$d/$x/sub/f") == f ]] ||
		lc_fail "$x: the source's files are not there"
	[[ ! -e $d/$x/a.tmp ]] || lc_fail "$x: the excluded a.tmp was copied"
done
[[ ! -e $d/x2/stale ]] || lc_fail "--delete left x2/stale"
[[ -e $d/x3/mine.tmp ]] || lc_fail "--delete removed the excluded x3/mine.tmp"
lc_json_check "$d/out" '
assert j[1]["from"] == j[0]["target"] and j[2]["from"] == j[1]["target"], j
assert j[1]["deleted"] == 1, j[1]'

CASE="target 2's own files in the way: refused as without --also, kept"
# without -f a copy leaves a file that is there (and a file where the
# tree has a directory) and says so, exit 23; a hop that failed only for
# what its target refused is not copied again from this host, which
# would refuse the same (or, as with -f, overwrite the target's own)
for shape in overlapped sequential; do
	rm -rf "$d/y1" "$d/y2" "$d/y3"
	mkdir -p "$d/y2/src"
	echo mine >"$d/y2/src/one"
	echo mine >"$d/y2/src/sub"
	srcs=("$src")
	[[ $shape == sequential ]] && srcs+=("$src2/keep")
	run 23 -r -p --json "${srcs[@]}" "$H:$d/y1/" --also "$H2:$d/y2/" \
	    --also "$H:$d/y3/"
	[[ $(cat "$d/y2/src/one") == mine && $(cat "$d/y2/src/sub") == mine ]] ||
		lc_fail "$shape: target 2's own files were replaced"
	lc_same_tree "$src" "$d/y1/src"
	lc_same_tree "$src" "$d/y3/src"
	cmp "$src/big" "$d/y2/src/big" || lc_fail "$shape: y2/src/big differs"
	lc_log_has 'y2/src/one: file exists \(use -f to overwrite\)' "$d/err"
	lc_log_has 'y2/src/sub: exists and is not a directory' "$d/err"
	lc_log_lacks 'target 2 of 3 .*copying it from this host' "$d/err"
	lc_log_has "target 2 of 3 [^ ]*y2/: incomplete, exit 23, from [^ ]*y1/ \\(chain\\)" \
	    "$d/err"
	lc_log_has 'target 3 of 3 [^ ]*y3/: ok, from this host: target 2 [^ ]*y2/ incomplete' \
	    "$d/err"
	lc_json_check "$d/out" '
assert [o["exit_status"] for o in j] == [0, 23, 0], j
assert j[1]["from"] == j[0]["target"] and j[1]["from_why"] == "", j[1]
assert j[2]["from"] == "this host", j[2]'
done

CASE="a hop that fails: the copy from here keeps what it made, not the target's own"
# target 1 holds a file of its own (refused: incomplete), so target 2's
# hop stops ("the chain stops here") or, hop after hop, does not run, and
# target 2 is copied from this host: what the hop made there is kept, a
# file of target 2's own in the way is refused as without -f (the copy
# from here used to run as with -f and replace it), exit 23; target 3
# from this host, whole
for shape in overlapped sequential; do
	rm -rf "$d/z1" "$d/z2" "$d/z3"
	mkdir -p "$d/z1/src" "$d/z2/src/sub"
	echo mine >"$d/z1/src/one"
	echo mine2 >"$d/z2/src/sub/two"
	srcs=("$src")
	[[ $shape == sequential ]] && srcs+=("$src2/keep")
	run 23 -v -r -p --json "${srcs[@]}" "$H:$d/z1/" --also "$H2:$d/z2/" \
	    --also "$H:$d/z3/"
	[[ $(cat "$d/z1/src/one") == mine ]] ||
		lc_fail "$shape: target 1's own file was replaced"
	[[ $(cat "$d/z2/src/sub/two") == mine2 ]] ||
		lc_fail "$shape: target 2's own file was replaced"
	for f in big one sub/deeper/mid; do
		cmp "$src/$f" "$d/z2/src/$f" ||
			lc_fail "$shape: z2/src/$f differs from the source"
	done
	[[ $(readlink "$d/z2/src/link") == one ]] ||
		lc_fail "$shape: z2/src/link is not the source's link"
	lc_same_tree "$src" "$d/z3/src"
	lc_log_has 'z1/src/one: file exists \(use -f to overwrite\)' "$d/err"
	lc_log_has 'z2/src/sub/two: file exists \(use -f to overwrite\)' "$d/err"
	# what the hop made is this run's: kept, not refused
	lc_log_lacks 'z2/src/(big|one|link|sub/deeper/mid): file exists' "$d/err"
	lc_log_has "target 2 of 3 [^ ]*z2/: keeping what its hop made" "$d/err"
	lc_log_has "target 2 of 3 [^ ]*z2/: incomplete, exit 23, from this host" \
	    "$d/err"
	lc_json_check "$d/out" '
assert [o["exit_status"] for o in j] == [23, 23, 0], j
assert j[1]["from"] == "this host" and j[2]["from"] == "this host", j'
done

CASE="an empty directory's contents: nothing to copy, every target ok"
# a nightly run of a spool that is empty tonight (or whose every file is
# excluded): no entry is listed, which ends the listing before the data
# streams are set up
mkdir -p "$d/spool"
run 0 -r "$d/spool/" "$H:$d/q0/"
empty_spool() {
	run 0 -r "$@" --json "$d/spool/" "$H:$d/q1/" --also "$H2:$d/q2/" \
	    --also "$H:$d/q3/"
	lc_log_has "target 3 of 3 [^ ]*q3/: ok, from two:[^ ]*q2/ \\(chain\\), copied 0 files" \
	    "$d/err"
	lc_json_check "$d/out" '
assert [o["exit_status"] for o in j] == [0, 0, 0], j'
}
empty_spool
mkdir -p "$d/spool/tmp"
echo x >"$d/spool/tmp/a"
empty_spool --exclude 'tmp/'
[[ ! -e $d/q1/tmp && ! -e $d/q3/tmp ]] || lc_fail "the excluded tmp/ was copied"

CASE="-n lists every target against the source, not a chain"
rm -rf "$d/n1" "$d/n2"
run 0 -n -r --json "$src" "$H:$d/n1/" --also "$H2:$d/n2/"
[[ ! -e $d/n1 && ! -e $d/n2 ]] || lc_fail "-n made a target"
lc_json_check "$d/out" '
assert [o["from"] for o in j] == ["this host"] * 2, j
assert j[1]["from_why"].startswith("-n changes no target"), j[1]'

CASE="-n's lines name their target with --also, not without"
run 0 -n -r "$src" "$H:$d/n1/" --also "$H2:$d/n2/"
for i in 1 2; do
	h=$H
	[[ $i == 2 ]] && h=$H2
	lc_log_has "^target $i of 2 $h:$(lc_re "$d")/n$i/: new src/big\$" \
	    "$d/out"
	lc_log_has "^target $i of 2 $h:$(lc_re "$d")/n$i/: new src/sub/\$" \
	    "$d/out"
done
# each entry once per target, every line prefixed
[[ $(grep -c ': new src/one$' "$d/out") == 2 ]] || lc_fail "-n: $(cat "$d/out")"
lc_log_lacks '^(new|update|attrs|delete) ' "$d/out"
run 0 -n -r "$src" "$H:$d/n1/"
lc_log_has '^new src/big$' "$d/out"
lc_log_lacks '^target ' "$d/out"

CASE="--json-progress objects name their target with --also"
head -c $((1 << 20)) /dev/urandom >"$d/jp"
run 0 --json-progress -x 1m "$d/jp" "$H:$d/p1/" --also "$H2:$d/p2/"
python3 - "$d/out" "$H:$d/p1/" "$H2:$d/p2/" <<'PY' ||
import json, sys
lines = open(sys.argv[1]).read().splitlines()
prog = [json.loads(l) for l in lines[:-1]]
res = json.loads(lines[-1])
assert isinstance(res, list) and len(res) == 2, res
assert all(o["type"] == "progress" for o in prog), prog
for o in prog:
    assert list(o)[1:4] == ["target", "target_index", "targets"], o
    assert o["targets"] == 2, o
    assert o["target"] == sys.argv[1 + o["target_index"]], o
idx = [o["target_index"] for o in prog]
# one file to a directory at each target: the chain's copies run at once,
# their objects interleave; each target's own go forward
assert set(idx) == {1, 2}, idx
for i in (1, 2):
    el = [o["elapsed"] for o in prog if o["target_index"] == i]
    assert el == sorted(el), (i, el)
PY
	{ lc__show "$d/out"; lc_fail "--json-progress with --also"; }
cmp "$d/jp" "$d/p2/jp" || lc_fail "--json-progress: p2/jp differs"
run 0 --json-progress "$d/jp" "$H:$d/p3/"
lc_log_lacks '"target' "$d/out"

CASE="--also-direct: every target from this host (stage 1)"
LC_LANECP_WRAP=(python3 "$d/wrote.py" "$d/wrote")
run 0 -v -r -p --json --also-direct "$src" "$H:$d/d1/" \
    --also "$H2:$d/d2/" --also "$H:$d/d3/"
LC_LANECP_WRAP=()
for t in d1 d2 d3; do
	lc_same_tree "$src" "$d/$t/src"
done
lc_log_has 'each from this host, one after the other \(--also-direct' \
    "$d/err"
lc_log_has "target 3 of 3 [^ ]*d3/: ok, from this host: --also-direct, cop" \
    "$d/err"
lc_json_check "$d/out" '
assert [o["from"] for o in j] == ["this host"] * 3, j
assert [o["from_why"] for o in j] == ["", "--also-direct", "--also-direct"], j'
read -r direct_wrote <"$d/wrote"
((direct_wrote >= size * 3)) ||
	lc_fail "--also-direct: this host wrote $direct_wrote bytes, not 3 x $size"
echo "this host wrote $chain_wrote bytes in the chain," \
    "$direct_wrote with --also-direct (tree: $size bytes)"
run 2 --also-direct "$src/one" "$H:$d/d1/"
lc_log_has '^lanecp: --also-direct goes with --also$' "$d/err"
[[ $(wc -l <"$d/err") == 1 ]] || lc_fail "not one line: $(cat "$d/err")"

CASE="a signal stops the targets not yet started"
# two sources: the chain goes hop after hop (one file would run at once)
head -c $((8 << 20)) /dev/urandom >"$d/slow"
"$LANECP" -F "$CFG" -x 1m --json "$d/slow" "$d/jp" "$H:$d/s1/" \
    --also "$H2:$d/s2/" --also "$H:$d/s3/" >"$d/out" 2>"$d/err" &
pid=$!
lc_wait_for 'target 1 of 3: ' "$d/err" 60
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc == 143 ]] || { lc__show "$d/err"; lc_fail "exit $rc, want 143"; }
lc_log_has 'target 2 of 3 [^ ]*s2/: not started, exit 143' "$d/err"
lc_log_has 'target 3 of 3 [^ ]*s3/: not started, exit 143' "$d/err"
[[ ! -e $d/s2 && ! -e $d/s3 ]] || lc_fail "a target after the signal was made"
lc_json_check "$d/out" '
assert [o["exit_status"] for o in j] == [143, 143, 143], j
assert not any(o["ok"] for o in j), j'

CASE="a signal stops the overlapped chain's copies, each saying so"
"$LANECP" -F "$CFG" -r -x 256k --json "$ov" "$H:$d/g1/" \
    --also "$H2:$d/g2/" --also "$H:$d/g3/" >"$d/out" 2>"$d/err" &
pid=$!
lc_wait_for 'target 3 of 3: ' "$d/err" 60
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc == 143 ]] || { lc__show "$d/err"; lc_fail "exit $rc, want 143"; }
for i in 1 2 3; do
	lc_log_has "target $i of 3 [^ ]*g$i/: incomplete, exit 143" "$d/err"
done
lc_log_lacks 'not started' "$d/err"
[[ -z $(find "$d/g1" "$d/g2" "$d/g3" -name '*lanecp-part*' 2>/dev/null) ]] ||
	lc_fail "a partial file was left after the signal"
lc_json_check "$d/out" '
assert [o["exit_status"] for o in j] == [143, 143, 143], j
assert not any(o["ok"] for o in j), j'

CASE="without --also, --json is one object"
run 0 -r --json "$src" "$H:$d/single/"
lc_json_check "$d/out" 'assert isinstance(j, dict) and "target" not in j, j'

CASE="every target failing the same way: its status"
echo file >"$d/plain"
run 6 "$src/one" "$H:$d/plain/x/" --also "$H2:$d/plain/y/"
lc_log_has 'target 1 of 2 .*plain/x/: incomplete, exit 6' "$d/err"
lc_log_has 'target 2 of 2 .*plain/y/: incomplete, exit 6' "$d/err"

CASE="one target unwritable"
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null &&
    setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
	# root writes into a 0555 directory: the agents run without the
	# capabilities that let it
	cat >"$d/agent-nocap" <<EOF
#!/bin/sh
exec setpriv --bounding-set -dac_override,-dac_read_search "$LANECP" "\$@"
EOF
	chmod 0755 "$d/agent-nocap"
	AGENT=(-T "$d/agent-nocap")
else
	AGENT=()
fi
mkdir -p "$d/ro"
chmod 0555 "$d/ro"
if [[ $(id -u) != 0 || ${#AGENT[@]} != 0 ]]; then
	run 23 -r -p --json "${AGENT[@]}" "$src" "$H:$d/u1/" \
	    --also "$H2:$d/ro/in/" --also "$H:$d/u3/"
	lc_same_tree "$src" "$d/u1/src"
	lc_same_tree "$src" "$d/u3/src"
	[[ ! -e $d/ro/in ]] || lc_fail "$d/ro/in was made"
	lc_log_has 'target 2 of 3 .*ro/in/: incomplete, exit [0-9]+' "$d/err"
	lc_log_has 'target 2 of 3 .*ro/in/: .*going on with the next' \
	    "$d/err"
	lc_log_has 'target 3 of 3 .*u3/: ok, from this host: target 2 [^ ]*ro/in/ incomplete' "$d/err"
	lc_json_check "$d/out" '
assert [o["ok"] for o in j] == [True, False, True], j
assert [o["from"] for o in j] == ["this host"] * 3, j
assert "the hop from %s failed" % j[0]["target"] in j[1]["from_why"], j[1]
assert "incomplete" in j[2]["from_why"], j[2]
assert j[1]["exit_status"] not in (0, 23) and "error" in j[1], j[1]
assert [o["exit_status"] for o in j] == [0, j[1]["exit_status"], 0], j'
else
	lc_skip "root without setpriv: a 0555 directory is writable"
fi

CASE="one target full, then -a -u completes what is missing"
mkdir -p "$d/full"
if [[ $(id -u) == 0 ]] && mount -t tmpfs -o size=256k tmpfs "$d/full" \
    2>/dev/null; then
	lc_on_exit "umount -l '$d/full'"
	run 23 -r -p --json --no-space-check "$src" "$H:$d/f1/" \
	    --also "$H2:$d/full/" --also "$H:$d/f3/"
	lc_same_tree "$src" "$d/f1/src"
	lc_same_tree "$src" "$d/f3/src"
	lc_log_has 'target 2 of 3 .*full/: incomplete, exit 10' "$d/err"
	lc_log_has 'target 2 of 3 .*full/: the hop from .*f1/ failed: .*copying it from this host' "$d/err"
	# target 3 waited for a file target 2 could not write, or was
	# reading it already (the chain follows part files)
	lc_log_has 'target 3 of 3: .*f3/, from this host: target 2 .*full/ (incomplete|failed a file this one was reading)' "$d/err"
	[[ -z $(find "$d/full" -name '*lanecp-part*') ]] ||
		lc_fail "a partial file was left in $d/full without -a"
	lc_json_check "$d/out" '
assert [o["exit_status"] for o in j] == [0, 10, 0], j
assert [o["from"] for o in j] == ["this host"] * 3, j
assert ("incomplete" in j[2]["from_why"] or
    "failed a file this one was reading" in j[2]["from_why"]), j[2]'
	mount -o remount,size=64m "$d/full"
	run 0 -r -p -a -u --json "$src" "$H:$d/f1/" --also "$H2:$d/full/" \
	    --also "$H:$d/f3/"
	lc_same_tree "$src" "$d/full/src"
	lc_json_check "$d/out" '
assert all(o["ok"] for o in j), j
assert j[0]["copied"] == 0 and j[0]["skipped"] == 4, j[0]
assert j[2]["copied"] == 0 and j[2]["skipped"] == 4, j[2]
assert j[0]["from"] == "this host", j[0]
assert j[1]["from"] == j[0]["target"] and j[2]["from"] == j[1]["target"], j
assert j[1]["copied"] + j[1]["updated"] >= 1, j[1]
assert j[1]["skipped"] + j[1]["copied"] + j[1]["updated"] == 4, j[1]'
else
	lc_skip "cannot mount a tmpfs (not root): no full target"
fi

CASE="bad --also values"
bad() {
	local pat=$1
	shift
	run 2 "$@"
	lc_log_has "$pat" "$d/err"
	[[ $(wc -l <"$d/err") == 1 ]] || {
		lc__show "$d/err"
		lc_fail "more than one line for: $*"
	}
	[[ ! -e $d/bad ]] || lc_fail "$d/bad was made by: $*"
}
bad '--also: an empty target' "$src/one" "$H:$d/bad/" --also ''
bad "--also $H:$(lc_re "$d")/bad/: the same target as" "$src/one" \
    "$H:$d/bad/" --also "$H:$d/bad/"
bad "the target $(lc_re "$d")/bad/ is local" "$src/one" "$H:$d/bad/" \
    --also "$d/bad/"
bad "does not go with the target '-'" "$src/one" "$H:$d/bad/" --also -
bad "does not go with the source '-'" - "$H:$d/bad/" --also "$H2:$d/bad/"
bad "the source $H:.*one is remote" "$H:$src/one" "$H2:$d/bad/" \
    --also "$H2:$d/bad2/"
bad 'does not go with -N' -N o "$src/one" "$H:cat >$d/bad" \
    --also "$H2:cat >$d/bad"
bad 'does not go with --relay' --relay "$src/one" "$H:$d/bad/" \
    --also "$H2:$d/bad/"
bad 'a@@:x: empty host name' "$src/one" "$H:$d/bad/" --also 'a@@:x'
also=()
for i in $(seq 17); do
	also+=(--also "$H:$d/bad/$i/")
done
bad 'more than 16 --also targets' "$src/one" "$H:$d/bad/" "${also[@]}"
bad '-u and -O do not go together' -u -O "$src/one" "$H:$d/bad/" \
    --also "$H2:$d/bad/"

lc_note "fan-out: all cases passed"
