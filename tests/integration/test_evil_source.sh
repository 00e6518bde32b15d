#!/usr/bin/env bash
# A frame for a file the sink has dropped meanwhile (issue 20, item 1):
# a hostile source sends a DATA header, holds the payload, gets the file
# retired (FILE_ABORT), then sends the payload.  The sink's receiver had
# taken the file's writer at the header; the sink must refuse the frame as
# a protocol error and write nothing, never use the freed writer.  Played
# in both places the attacker can be: the client of a restricted key
# (controller and source against "lanecp --agent --restrict DIR"), and the
# server of a pull (the honest controller relays its FILE_ABORT).
# tests/tools/lc_evil_source.c is the attacker.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
jail=$d/jail
mkdir -p "$jail/evil" "$d/local"

# the restricted key, as in test_restrict.sh
ssh-keygen -q -t ed25519 -N '' -f "$d/cron_key" </dev/null
printf 'restrict,command="%s --agent --restrict %s" %s\n' "$LANECP" "$jail" \
	"$(cat "$d/cron_key.pub")" >>"$d/authorized_keys"
lc_ssh_config "$d/cron_config" IdentityFile="$d/cron_key"

# no_sanitizer FILE: fail, showing FILE, on a sanitizer report in it
no_sanitizer() {
	if grep -Eq 'Sanitizer|runtime error:' "$1"; then
		lc__show "$1"
		lc_fail "sanitizer report in $1"
	fi
}

# nothing_written DIR: no file with data under DIR
nothing_written() {
	local f
	f=$(find "$1" -type f -size +0 | head -n 5)
	[[ -z $f ]] || lc_fail "written despite the refusal: $f"
}

# The attack needs the sink to read the header before it drops the file;
# when the sink happens to read it only after (its thread not scheduled
# in time), the frame is for an unknown file and nothing was tested: the
# tool says "raced" and the attempt is made again.
tries=20

lc_note "restricted agent: the payload of a frame for a file dropped meanwhile is refused"
for ((i = 1; ; i++)); do
	rc=0
	"$LC_TOOLS_DIR/lc_evil_source" -F "$d/cron_config" "$H" retire \
		>"$d/r.out" 2>"$d/r.err" || rc=$?
	[[ $rc == 3 && $i -lt $tries ]] || break
	lc_note "attempt $i raced; again"
done
cat "$d/r.out"
no_sanitizer "$d/r.err"
[[ $rc == 0 ]] || { lc__show "$d/r.err"; lc_fail "lc_evil_source exited $rc"; }
lc_log_has "the sink has read the header" "$d/r.err"
lc_log_has "the sink dropped file 1" "$d/r.err"
# LC_ERR_PROTO (12): the agent's ERROR names the stream and the file
lc_log_has "^outcome: ERROR 12 data stream 0: file 1: .*no longer received \(finished or dropped\)" "$d/r.out"
nothing_written "$jail"

lc_note "pull from a hostile server: the same, the controller relaying FILE_ABORT"
for ((i = 1; ; i++)); do
	rc=0
	"$LANECP" -F "$LC_SSH_CONFIG" -T "$LC_TOOLS_DIR/lc_evil_source" \
		"$H:whatever" "$d/local/" 2>"$d/p.err" || rc=$?
	grep -q "data for unknown file 1" "$d/p.err" && ((i < tries)) || break
	lc_note "attempt $i raced; again"
done
no_sanitizer "$d/p.err"
if [[ $rc != 7 ]]; then
	lc__show "$d/p.err"
	lc_fail "pull from the hostile server exited $rc, expected 7"
fi
lc_log_has "the sink dropped file 1; payload sent" "$d/p.err"
lc_log_has "data stream 0: file 1: .*no longer received \(finished or dropped\)" "$d/p.err"
nothing_written "$d/local"
[[ ! -e $d/local/whatever ]] || lc_fail "the target was made"

echo PASS
