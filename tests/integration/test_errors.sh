#!/usr/bin/env bash
# Every bad input gets one clear line naming the thing and its own exit
# status (see lanecp --help): usage 2, ssh 3, host key 4, local file 5,
# remote file/agent 6, protocol 7.  Nothing is written on failure.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$d/remote" "$d/local"
head -c 100000 /dev/urandom >"$d/local/f"

lc_note "usage errors name the flag (exit 2)"
lc_lanecp_expect 2 '^lanecp: -s 0: streams' -s 0 "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 '^lanecp: -s 100000: streams' -s 100000 "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 '^lanecp: -w 1x: window' -w 1x "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 '^lanecp: -B 0: block' -B 0 "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 '^lanecp: -P abc: progress' -P abc "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 'unknown option.*--bogus' --bogus "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 'missing value: -s' "$d/local/f" "$H:$d/remote/" -s
lc_lanecp_expect 2 'need a source and a destination' "$d/local/f"
lc_lanecp_expect 2 'neither source nor destination is remote' "$d/local/f" "$d/local/g"
[[ -z $(ls "$d/remote") ]] || lc_fail "usage error wrote something"

lc_note "a bad pairing is refused once, before the first attempt (--retries)"
# a host that refuses connections: without a bad pairing, exit 3
lc_ssh_config "$d/unreach_config" Port="$(lc_free_port)"
rc=0
"$LANECP" -F "$d/unreach_config" "$d/local/f" "$H:$d/remote/x" 2>"$d/err" || rc=$?
[[ $rc == 3 ]] || { lc__show "$d/err"; lc_fail "unreachable host: exit $rc, not 3"; }
for pair in "-u -O" "--numeric-ids" "-E crc32=01234567 -r"; do
	rc=0
	# shellcheck disable=SC2086 # the options are words
	"$LANECP" -F "$d/unreach_config" -l "$d/pair.log" --retries 3 $pair \
		"$d/local/f" "$H:$d/remote/x" 2>"$d/err" || rc=$?
	[[ $rc == 2 ]] || { lc__show "$d/err"; lc_fail "$pair --retries 3: exit $rc, not 2"; }
	[[ $(wc -l <"$d/err") == 1 ]] || { lc__show "$d/err"; lc_fail \
	    "$pair --retries 3: not one line on stderr"; }
	lc_log_lacks 'attempt|retrying|connect' "$d/err"
	[[ -z $(ls "$d/remote") ]] || lc_fail "$pair: wrote something"
done
lc_log_has '^lanecp: -E ALG=HEX checks one file; it does not go with -r$' "$d/err"
[[ $(grep -c 'result: failed, exit 2: ' "$d/pair.log") == 3 ]] || {
	lc__show "$d/pair.log"; lc_fail "-l: not one usage result per run"; }
lc_log_lacks 'after [0-9]+ attempt' "$d/pair.log"

lc_note "--version names each part; --help says which ssh_config files"
"$LANECP" --version >"$d/version"
lc_log_has '^lanecp [0-9]+\.[0-9]+\.[0-9]+ \(protocol [0-9]+\)$' "$d/version"
lc_log_has '^libssh2 [0-9]+\.[0-9]+' "$d/version"
lc_log_has '^OpenSSL [0-9]+\.[0-9]+' "$d/version"
lc_log_has '^zlib [0-9]+\.[0-9]+' "$d/version"
[[ $(wc -l <"$d/version") == 4 ]] || { lc__show "$d/version"; lc_fail \
    "--version: not four lines"; }
"$LANECP" --help >"$d/help"
lc_log_has '-F, --ssh-config FILE .*~/\.ssh/config then /etc/ssh/ssh_config' "$d/help"

lc_note "a bad ssh_config is a usage error naming file and line (exit 2)"
printf 'Host lctest\n  Port notaport\n' >"$d/bad_config"
lc__lanecp_run_cfg() { "$LANECP" -F "$d/bad_config" "$@" 2>"$d/err" || return $?; }
rc=0; lc__lanecp_run_cfg "$d/local/f" "$H:$d/remote/" || rc=$?
[[ $rc == 2 ]] || lc_fail "bad config: exit $rc"
lc_log_has "bad_config.*line 2.*Port" "$d/err"

lc_note "missing source: local 5, remote 6"
lc_lanecp_expect 5 "^lanecp: $(lc_re "$d/local/nope"): No such file or directory$" \
	"$d/local/nope" "$H:$d/remote/"
lc_lanecp_expect 6 "^lanecp: $LC_USER@$H: $(lc_re "$d/remote/nope"): No such file" \
	"$H:$d/remote/nope" "$d/local/"
lc_lanecp_expect 5 "$(lc_re "$d/local"): is a directory" "$d/local" "$H:$d/remote/"

lc_note "existing target without -f: refused, old content kept"
echo old >"$d/remote/f"
lc_lanecp_expect 6 "$(lc_re "$d/remote/f"): file exists \\(use -f to overwrite\\)" \
	"$d/local/f" "$H:$d/remote/"
[[ $(cat "$d/remote/f") == old ]] || lc_fail "target changed"
echo old >"$d/local/g"
lc_lanecp_expect 5 "$(lc_re "$d/local/g"): file exists" "$H:$d/remote/f" "$d/local/g"
[[ $(cat "$d/local/g") == old ]] || lc_fail "local target changed"
lc_lanecp_expect 6 "$(lc_re "$d/remote/nodir/deeper/"): no such directory" \
	"$d/local/f" "$H:$d/remote/nodir/deeper/"
[[ ! -e $d/remote/nodir ]] || lc_fail "a missing parent was made"
lc_lanecp_expect 6 "$(lc_re "$d/remote/nodir"): No such file or directory" \
	"$d/local/f" "$H:$d/remote/nodir/x"
lc_lanecp_expect 6 "$(lc_re "$d/remote/f")/?: [Nn]ot a directory" \
	"$d/local/f" "$H:$d/remote/f/"

lc_note "unreachable host: exit 3 naming host and port"
port=$(lc_free_port)
lc_ssh_config "$d/closed_config" Port="$port"
rc=0; "$LANECP" -F "$d/closed_config" "$d/local/f" "$H:/tmp/" 2>"$d/err" || rc=$?
[[ $rc == 3 ]] || { lc__show "$d/err"; lc_fail "closed port: exit $rc"; }
lc_log_has "127\\.0\\.0\\.1.*$port.*Connection refused" "$d/err"
rc=0; "$LANECP" -F "$d/closed_config" "$d/local/f" "no-such-host.invalid:/tmp/" \
	2>"$d/err" || rc=$?
[[ $rc == 3 ]] || { lc__show "$d/err"; lc_fail "unknown host: exit $rc"; }
lc_log_has "no-such-host\\.invalid" "$d/err"

lc_note "host key: unknown and changed keys are refused (exit 4)"
: >"$d/empty_known_hosts"
lc_ssh_config "$d/unknown_config" UserKnownHostsFile="$d/empty_known_hosts"
rc=0; "$LANECP" -F "$d/unknown_config" "$d/local/f" "$H:$d/remote/k" 2>"$d/err" || rc=$?
[[ $rc == 4 ]] || { lc__show "$d/err"; lc_fail "unknown key: exit $rc"; }
lc_log_has "SHA256:" "$d/err"
lc_log_has "$(lc_re "$d/empty_known_hosts")" "$d/err"
ssh-keygen -q -t ed25519 -N '' -f "$d/other_key" </dev/null
printf '[127.0.0.1]:%s %s\n' "$LC_SSHD_PORT" "$(cut -d' ' -f1,2 "$d/other_key.pub")" \
	>"$d/wrong_known_hosts"
lc_ssh_config "$d/wrong_config" UserKnownHostsFile="$d/wrong_known_hosts"
rc=0; "$LANECP" -F "$d/wrong_config" "$d/local/f" "$H:$d/remote/k" 2>"$d/err" || rc=$?
[[ $rc == 4 ]] || { lc__show "$d/err"; lc_fail "changed key: exit $rc"; }
lc_log_has "IDENTIFICATION HAS CHANGED.*$(lc_re "$d/wrong_known_hosts") line 1" "$d/err"
[[ ! -e $d/remote/k ]] || lc_fail "copied despite a bad host key"

lc_note "authentication failure: exit 3"
ssh-keygen -q -t ed25519 -N '' -f "$d/stranger_key" </dev/null
lc_ssh_config "$d/auth_config" IdentityFile="$d/stranger_key"
rc=0; "$LANECP" -F "$d/auth_config" "$d/local/f" "$H:$d/remote/k" 2>"$d/err" || rc=$?
[[ $rc == 3 ]] || { lc__show "$d/err"; lc_fail "bad key: exit $rc"; }
lc_log_has "authentication failed" "$d/err"

lc_note "remote agent missing: exit 13, one line naming host and program"
lc_lanecp_expect 13 "^lanecp: $LC_USER@$H: cannot run the remote agent '/nonexistent/lanecp' \\(exit 127: .*No such file or directory\\); .*-T PATH$" \
	-T /nonexistent/lanecp "$d/local/f" "$H:$d/remote/k"
[[ $(grep -c . "$LC_ERR") == 1 ]] || { lc__show "$LC_ERR"; lc_fail \
    "-T /nonexistent/lanecp: not one line"; }
[[ ! -e $d/remote/k ]] || lc_fail "copied without an agent"
# what a command says before it fails goes into that line, once
lc_lanecp_expect 6 "^lanecp: $LC_USER@$H: remote agent exited with status 3 before answering: early words$" \
	-T 'echo early words >&2; exit 3; :' "$d/local/f" "$H:$d/remote/k"
[[ $(grep -c . "$LC_ERR") == 1 ]] || { lc__show "$LC_ERR"; lc_fail \
    "exit 3 before answering: not one line"; }

lc_note "a peer that is not lanecp, or another protocol version: exit 7"
lc_lanecp_expect 7 "bad control frame.*/bin/echo" -T /bin/echo "$d/local/f" "$H:$d/remote/k"
cat >"$d/future-agent" <<'EOS'
#!/bin/bash
# HELLO from "lanecp 9.9.9" speaking protocol 99
printf '\x00\x00\x00\x10\x01LNCP\x00\x63\x00\x00\x00\x059.9.9'
cat >/dev/null
EOS
chmod +x "$d/future-agent"
lc_lanecp_expect 7 "protocol version mismatch.*protocol 4.*lanecp 9\\.9\\.9 with protocol 99" \
	-T "$d/future-agent" "$d/local/f" "$H:$d/remote/k"
[[ ! -e $d/remote/k ]] || lc_fail "wrote despite errors"

echo PASS

lc_note "an old part file replaced without -a is said with -v (name, size)"
head -c 1234 /dev/urandom >"$d/remote/.pf.lanecp-part"
chmod 600 "$d/remote/.pf.lanecp-part"
lc_lanecp -v "$d/local/f" "$H:$d/remote/pf"
cmp "$d/local/f" "$d/remote/pf" || lc_fail "copy over an old part file differs"
lc_log_has "$(lc_re "$d/remote/pf"): discarding the partial file of an earlier copy, $(lc_re "$d/remote/.pf.lanecp-part") \(1234 bytes; -a would resume from it\)" "$LC_ERR"
[[ ! -e $d/remote/.pf.lanecp-part ]] || lc_fail "part file left behind"
# without an old part file, nothing is said
lc_lanecp -v -f "$d/local/f" "$H:$d/remote/pf"
lc_log_lacks "discarding" "$LC_ERR"

lc_note "cron: -l records usage errors, wherever -l stands, and exit statuses"
log=$d/cron.log
lc_lanecp_expect 2 '^lanecp: -s 0: streams' -l "$log" -s 0 "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 'unknown option or missing value: --bogus' --bogus -l "$log" "$d/local/f" "$H:$d/remote/"
lc_lanecp_expect 2 'need a source and a destination' -l"$log" "$d/local/f"
lc_lanecp_expect 6 'No such file' -l "$log" "$H:$d/remote/nope" "$d/local/"
lc_log_has 'lanecp: start: .* -l .*-s 0 ' "$log"
lc_log_has 'lanecp: result: failed, exit 2: -s 0: streams must be' "$log"
lc_log_has 'lanecp: start: .* --bogus -l ' "$log"
lc_log_has 'lanecp: result: failed, exit 2: unknown option or missing value: --bogus$' "$log"
lc_log_has 'lanecp: result: failed, exit 2: need a source and a destination$' "$log"
lc_log_has "lanecp: result: failed after 1 attempt, exit 6, .*: $LC_USER@$H: $(lc_re "$d/remote/nope"): No such file" "$log"
[[ $(grep -c 'result: ' "$log") == 4 ]] || { lc__show "$log"; lc_fail \
    "-l: expected four result lines"; }

lc_note "--json: -E's checksum is in the object, window 0 when autotuned"
"$LANECP" -F "$LC_SSH_CONFIG" --json -E sha256 "$d/local/f" "$H:$d/remote/js" \
    >"$d/js.out" 2>"$d/js.err" || { lc__show "$d/js.err"; lc_fail "--json -E"; }
sum=$(sha256sum "$d/local/f" | cut -c1-64)
lc_log_has "\"checksums\":\\[\\{\"path\":\"$(lc_re "$H:$d/remote/js")\",\"checksum\":\"sha256:$sum\"\\}\\]" "$d/js.out"
lc_log_has '"window":0,' "$d/js.out"
[[ $(wc -l <"$d/js.out") == 1 ]] || { lc__show "$d/js.out"; lc_fail \
    "--json -E: stdout is not the object alone"; }
"$LANECP" -F "$LC_SSH_CONFIG" --json -w 256k -f "$d/local/f" "$H:$d/remote/js" \
    >"$d/js.out" 2>"$d/js.err" || { lc__show "$d/js.err"; lc_fail "--json -w"; }
lc_log_lacks '"window":0,' "$d/js.out"
