#!/usr/bin/env bash
# Pipes and programs (issue 14): "-" as the source reads stdin, "-" as the
# target writes stdout, -N i/o/io run programs through /bin/sh -c on their
# host.  Data of unknown length is striped over several streams and its
# length comes at the end (FILE_LEN); checksums cover the stream in order;
# a failing program, a reader that goes away and -a are each refused or
# reported with their own exit status, and no target looks complete.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local" "$d/tree/sub"
lcp() { "$LANECP" -F "$LC_SSH_CONFIG" "$@"; }
# 3 MiB and a bit: not a multiple of the 64 KiB blocks used below
head -c $((3 * 1048576 + 12345)) /dev/urandom >"$d/local/src"
want=$(sha256sum <"$d/local/src" | cut -d' ' -f1)
for i in 1 2 3; do head -c $((i * 70000)) /dev/urandom >"$d/tree/sub/f$i"; done
echo hello >"$d/tree/top"

# expect CODE PATTERN CMD...: CMD exits CODE and says PATTERN on stderr
expect() {
	local want_rc=$1 pat=$2 rc=0
	shift 2
	"$@" 2>"$d/err" || rc=$?
	[[ $rc == "$want_rc" ]] || { lc__show "$d/err"; lc_fail "exit $rc, expected $want_rc: $*"; }
	lc_log_has "$pat" "$d/err"
}

lc_note "stdin to a remote file over 4 streams, 64 KiB blocks"
cat "$d/local/src" | lcp -s 4 -B 64k - "$H:$d/remote/p1"
cmp "$d/local/src" "$d/remote/p1" || lc_fail "push from stdin differs"
[[ ! -e "$d/remote/.p1.lanecp-part" ]] || lc_fail "part file left behind"

lc_note "stdin on the reverse path (-z): reading starts once the streams are up"
cat "$d/local/src" | lcp -z -s 2 -B 64k - "$H:$d/remote/pz"
cmp "$d/local/src" "$d/remote/pz" || lc_fail "push from stdin with -z differs"

lc_note "stdin and stdout over SSH (--via-ssh)"
cat "$d/local/src" | lcp --via-ssh -s 2 -B 64k - "$H:$d/remote/pv"
cmp "$d/local/src" "$d/remote/pv" || lc_fail "push from stdin --via-ssh differs"
got=$(lcp --via-ssh -s 2 "$H:$d/remote/pv" - | sha256sum | cut -d' ' -f1)
[[ $got == "$want" ]] || lc_fail "pull to stdout --via-ssh: $got, want $want"

lc_note "empty stdin gives an empty file"
lcp - "$H:$d/remote/empty" </dev/null
[[ -f "$d/remote/empty" && ! -s "$d/remote/empty" ]] || lc_fail "empty push"

lc_note "a pipe goes to a file, not into a directory"
expect 2 "not into the directory" lcp - "$H:$d/remote/" </dev/null

lc_note "remote file to stdout, piped into sha256sum"
got=$(lcp -s 4 -B 64k "$H:$d/remote/p1" - | sha256sum | cut -d' ' -f1)
[[ $got == "$want" ]] || lc_fail "pull to stdout: $got, want $want"

lc_note "-E over a stream: the checksum of the bytes in order"
cat "$d/local/src" | lcp -s 3 -B 64k -E sha256 - "$H:$d/remote/e1" >"$d/sums"
lc_log_has "^sha256 $want " "$d/sums"
cmp "$d/local/src" "$d/remote/e1" || lc_fail "-E push differs"
lcp -B 64k -E sha256 "$H:$d/remote/e1" - 2>"$d/sums2" >"$d/local/e2"
cmp "$d/local/src" "$d/local/e2" || lc_fail "-E pull to stdout differs"
lc_log_has "^sha256 $want " "$d/sums2"
cat "$d/local/src" | lcp -e -E "sha256=$want" - "$H:$d/remote/e3" >/dev/null
expect 12 "not the expected" \
	lcp -E "sha256=$(printf '0%.0s' {1..64})" - "$H:$d/remote/e4" <"$d/local/src"
[[ ! -e "$d/remote/e4" ]] || lc_fail "a stream with the wrong checksum was renamed into place"

lc_note "-N i: a local program's output"
lcp -N i "head -c 1000001 /dev/zero" "$H:$d/remote/z"
cmp <(head -c 1000001 /dev/zero) "$d/remote/z" || lc_fail "-N i local"

lc_note "-N i: a remote program's output, to a local file"
lcp -s 2 -B 64k -N i "$H:head -c 777777 $d/local/src" "$d/local/n1"
cmp <(head -c 777777 "$d/local/src") "$d/local/n1" || lc_fail "-N i remote"

lc_note "-N o: a remote program's input"
lcp -s 4 -B 64k -N o "$d/local/src" "$H:cat > $d/remote/o1"
cmp "$d/local/src" "$d/remote/o1" || lc_fail "-N o remote"

lc_note "-N o: a local program's input"
lcp -N o "$H:$d/remote/p1" "sha256sum > $d/local/o2.sum"
lc_log_has "^$want " "$d/local/o2.sum"

lc_note "-N io: tar to tar"
mkdir -p "$d/remote/untar"
lcp -s 3 -B 64k -N io "tar -C $d/tree -cf - ." "$H:tar -x -C $d/remote/untar"
diff -r "$d/tree" "$d/remote/untar" || lc_fail "-N io tar"

lc_note "a failing source program: exit 14, the target is not made"
expect 14 "source program 'head -c 300000 /dev/zero; exit 3' failed: exit status 3" \
	lcp -B 64k -N i "head -c 300000 /dev/zero; exit 3" "$H:$d/remote/fail1"
[[ ! -e "$d/remote/fail1" ]] || lc_fail "a failed source left a complete-looking target"
expect 14 "source program .* failed: exit status 5" \
	lcp -N i "$H:exit 5" "$d/local/fail2"
[[ ! -e "$d/local/fail2" ]] || lc_fail "a failed remote source left a target"

lc_note "a failing target program: exit 14, named with its status"
expect 14 "target program 'cat > $(lc_re "$d")/remote/fo; exit 4' failed: exit status 4" \
	lcp -N o "$d/local/src" "$H:cat > $d/remote/fo; exit 4"
expect 14 "target program 'cat >/dev/null; exit 6' failed: exit status 6" \
	lcp -N o "$H:$d/remote/p1" "cat >/dev/null; exit 6"

lc_note "a target program that exits without reading: its status, not only the broken pipe"
expect 14 "broken pipe.*: target program 'exit 3' failed: exit status 3" \
	lcp -N o "$d/local/src" "$H:exit 3"
expect 14 "broken pipe.*: target program 'exit 7' failed: exit status 7" \
	lcp -N o "$H:$d/remote/p1" "exit 7"

lc_note "a reader that goes away: broken pipe, exit 15"
head -c $((64 << 20)) /dev/zero >"$d/remote/big"
set +e
lcp -B 64k "$H:$d/remote/big" - 2>"$d/err" | head -c 1 >/dev/null
rc=${PIPESTATUS[0]}
set -e
[[ $rc == 15 ]] || { lc__show "$d/err"; lc_fail "EPIPE: exit $rc, expected 15"; }
lc_log_has "stdout: the reading end was closed \(broken pipe\)" "$d/err"

lc_note "-a, --retries and -r do not go with a pipe (before connecting)"
expect 2 "^.*-a: resuming needs a file source and a file target" \
	"$LANECP" -F /nonexistent -a - "$H:$d/remote/x" </dev/null
expect 2 "^.*-a: resuming needs a file" \
	"$LANECP" -F /nonexistent -a -N o "$d/local/src" "$H:cat"
expect 2 "^.*-a: resuming needs a file" \
	"$LANECP" -F /nonexistent -a "$H:$d/remote/p1" -
expect 2 "^.*--retries: a pipe" \
	"$LANECP" -F /nonexistent --retries 2 - "$H:$d/remote/x" </dev/null
expect 2 "^.*-r: a pipe" \
	"$LANECP" -F /nonexistent -r - "$H:$d/remote/x" </dev/null
expect 2 "^.*--json: stdout is the target" \
	"$LANECP" --json "$H:$d/remote/p1" -

lc_note "a restricted agent runs no -N programs"
ssh-keygen -q -t ed25519 -N '' -f "$d/cron_key" </dev/null
printf 'command="%s --agent --restrict %s",no-pty,no-port-forwarding %s\n' \
	"$LANECP" "$d/remote" "$(cat "$d/cron_key.pub")" >>"$d/authorized_keys"
lc_ssh_config "$d/cron_config" IdentityFile="$d/cron_key"
expect 6 "restricted .* runs no -N programs" \
	"$LANECP" -F "$d/cron_config" -N o "$d/local/src" "$H:cat > $d/remote/r1"
[[ ! -e "$d/remote/r1" ]] || lc_fail "a restricted agent ran a -N o program"
expect 6 "restricted .* runs no -N programs" \
	"$LANECP" -F "$d/cron_config" -N i "$H:cat /etc/passwd" "$d/local/r2"
[[ ! -e "$d/local/r2" ]] || lc_fail "a restricted agent ran a -N i program"
# plain "-" against it is fine: stdin and stdout are local
cat "$d/local/src" | "$LANECP" -F "$d/cron_config" - "$H:r3"
cmp "$d/local/src" "$d/remote/r3" || lc_fail "stdin to a restricted agent"

echo "PASS"
