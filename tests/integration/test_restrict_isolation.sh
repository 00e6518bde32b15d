#!/usr/bin/env bash
# What the client of one restricted key (restrict,command="lanecp --agent
# --restrict DIR") cannot do to others on the server (issue 20):
#  - stop another job's agent, even with its transfer id read from ps
#    (the takeover needs the run's secret, which never leaves the control
#    channel), nor an agent restricted to another directory;
#  - make its agent dial anything but its own address (no port scans
#    from the server): refused before any connect, one generic message;
#  - tell accounts apart with ~user paths: every refused path gets the
#    same message.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
# two more addresses of this host, as two hosts for remote-to-remote copies
LC_SSHD_ALSO="127.0.0.2 127.0.0.3"
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST
jail=$d/jail
mkdir -p "$jail/sub" "$d/local"
head -c $((8 << 20)) /dev/urandom >"$d/local/big"
part=$jail/.big.lanecp-part
export LANECP_GRACE_S=3600

# cron_key KEYNAME DIR: a restricted key for DIR and its client config
cron_key() {
	ssh-keygen -q -t ed25519 -N '' -f "$d/$1" </dev/null
	printf 'restrict,command="%s --agent --restrict %s" %s\n' \
		"$LANECP" "$2" "$(cat "$d/$1.pub")" >>"$d/authorized_keys"
	lc_ssh_config "$d/$1.config" IdentityFile="$d/$1"
}
cron_key cron1 "$jail"
cron_key cron2 "$jail"

# The transfer id on the command line of agent pid $1 (what ps shows).
id_of() {
	tr '\0' ' ' <"/proc/$1/cmdline" |
		sed -n 's/.*--transfer \([0-9a-f]\{32\}\).*/\1/p'
}

lc_note "a second cron key, given the first job's transfer id from ps, cannot stop its agent"
# Job 1 copies a pipe we feed (no guessing how long it runs): 1 MiB, then
# the second key's copy, then the rest.
mkfifo "$d/fifo"
"$LANECP" -F "$d/cron1.config" -B 64k -s 2 - "$H:big" <"$d/fifo" \
	2>"$d/job1.err" &
JOB=$!
lc_on_exit "kill -9 $JOB"
exec 7>"$d/fifo"
head -c $((1 << 20)) "$d/local/big" >&7
lc_wait_size "$part" 65536 120
victim=$(lc_pids_matching "--agent --restrict $jail --transfer")
[[ -n $victim && $victim != *$'\n'* ]] || lc_fail "job 1's agent: '$victim'"
id=$(id_of "$victim")
[[ -n $id ]] || lc_fail "no transfer id on job 1's agent's command line"
rc=0
LANECP_TRANSFER=$id "$LANECP" -F "$d/cron2.config" -a -f \
	"$d/local/big" "$H:big" 2>"$d/job2.err" || rc=$?
kill -0 "$victim" 2>/dev/null || { lc__show "$d/job2.err"; lc_fail "job 1's agent was stopped"; }
tail -c +$(((1 << 20) + 1)) "$d/local/big" >&7
exec 7>&-
rc1=0
wait "$JOB" || rc1=$?
[[ $rc1 == 0 ]] || { lc__show "$d/job2.err"; lc__show "$d/job1.err"; lc_fail "job 1 exited $rc1 (the second key's copy: $rc)"; }
cmp "$d/local/big" "$jail/big" || lc_fail "job 1's copy differs"
[[ $rc == 6 ]] || { lc__show "$d/job2.err"; lc_fail "the second key's copy exited $rc, expected 6"; }
lc_log_has "big: an agent with this transfer id \(pid $victim\) holds this file, and it is not of this run" "$d/job2.err"
lc_log_lacks "stopping it" "$d/job2.err"
rm -f "$jail/big"

lc_note "a restricted agent dials only its SSH client's address"
# The SSH client is 127.0.0.1; 127.0.0.2 is another address of this host.
# The probe plays the controller, listens there and records any accept.
probe() {	# probe KEYCONFIG ROLE ADDR open|closed OUT
	"$LC_TOOLS_DIR/lc_dial_probe" "$2" "$3" "$4" -- \
		"$LC_TOOLS_DIR/lc_sshexec" -F "$1" "$H" "$LANECP --agent" \
		>"$d/$5" 2>"$d/$5.err" || { lc__show "$d/$5.err"; lc_fail "probe $*"; }
}
probe "$LC_SSH_CONFIG" source 127.0.0.2 open plain
lc_log_has "^accepted 127\.0\.0\.[0-9]+$" "$d/plain"	# the probe works
for role in source sink; do
	probe "$d/cron1.config" $role 127.0.0.2 open $role.open
	probe "$d/cron1.config" $role 127.0.0.2 closed $role.closed
	lc_log_lacks "^accepted" "$d/$role.open"
	lc_log_has "^error 24 data streams: refused by the restricted agent \(it dials only the address its SSH client connects from\)$" "$d/$role.open"
	cmp "$d/$role.open" "$d/$role.closed" ||
		lc_fail "$role: open and closed ports answered differently"
done
cmp "$d/source.open" "$d/sink.open" || lc_fail "CONNECT and DIAL answered differently"
# its own client's address is allowed (that host can reach itself anyway)
probe "$d/cron1.config" source 127.0.0.1 open client
lc_log_has "^accepted 127\.0\.0\.1$" "$d/client"

lc_note "data paths with restricted agents"
echo "small file" >"$d/local/small"
c1() { "$LANECP" -F "$d/cron1.config" "$@" 2>"$d/err" || { lc__show "$d/err"; lc_fail "lanecp $*"; }; }
# to and from this host (the SSH client): direct and reverse both work
c1 -z "$d/local/small" "$H:sub/z1"
cmp "$d/local/small" "$jail/sub/z1" || lc_fail "push -z to a restricted sink"
c1 -z "$H:sub/z1" "$d/local/z1"
cmp "$d/local/small" "$d/local/z1" || lc_fail "pull -z from a restricted source"
c1 --direct "$H:sub/z1" "$d/local/z2"
cmp "$d/local/small" "$d/local/z2" || lc_fail "pull from a restricted source"
# between two hosts (127.0.0.2 and .3; the SSH client is 127.0.0.1 for
# both): neither agent may dial the other, so the automatic choice is the
# relay, and a path asked for says what to do
for h in ra:127.0.0.2 rb:127.0.0.3; do
	lc_ssh_config "$d/tmp.config" IdentityFile="$d/cron1" HostName="${h#*:}"
	sed "s/^Host .*/Host ${h%%:*}/" "$d/tmp.config"
done >"$d/two.config"
two() { "$LANECP" -F "$d/two.config" "$@" 2>"$d/err"; }
two -v ra:sub/z1 rb:sub/two || { lc__show "$d/err"; lc_fail "restricted to restricted"; }
cmp "$d/local/small" "$jail/sub/two" || lc_fail "restricted to restricted differs"
lc_log_has "data path: relay, [^ ]+@ra -> this host -> [^ ]+@rb, because .*restricted.* dials? only this host" "$d/err"
rc=0
two --direct ra:sub/z1 rb:sub/direct || rc=$?
[[ $rc == 8 ]] || { lc__show "$d/err"; lc_fail "--direct between restricted agents: exit $rc"; }
lc_log_has "[^ ]+@ra: the agent there is restricted \(--restrict\) and dials only this host, not [^ ]+@rb; copy between such hosts with --relay" "$d/err"
rc=0
two -z ra:sub/z1 rb:sub/reverse || rc=$?
[[ $rc == 8 ]] || { lc__show "$d/err"; lc_fail "-z between restricted agents: exit $rc"; }
lc_log_has "[^ ]+@rb: the agent there is restricted \(--restrict\) and dials only this host, not [^ ]+@ra; copy between such hosts with --relay" "$d/err"
[[ ! -e $jail/sub/direct && ! -e $jail/sub/reverse ]] || lc_fail "copied on a refused path"

lc_note "a restricted agent answers every refused path alike (no account oracle)"
# ~user for an account that exists and one that does not, our own ~ and
# ~name, paths outside: one message naming the path as written, one status
ref=
for p in "~root/x" "~lanecp-no-such-user/x" "~root" "~lanecp-no-such-user" \
	"~/x" "~$LC_USER/x" "/etc/x" "../x" "sub/../../x" "$d/local/x"; do
	for dir in pull push; do
		rc=0
		if [[ $dir == pull ]]; then
			"$LANECP" -F "$d/cron1.config" -r "$H:$p" "$d/local/out" 2>"$d/err" || rc=$?
		else
			"$LANECP" -F "$d/cron1.config" "$d/local/small" "$H:$p" 2>"$d/err" || rc=$?
		fi
		# the message with the path as written taken out
		msg="$rc $(sed "s|$(lc_re "$p")|PATH|g" "$d/err")"
		[[ -n $ref ]] || ref=$msg
		[[ $msg == "$ref" ]] || { lc__show "$d/err"; lc_fail "$dir $p: '$msg', not '$ref' as for ~root/x"; }
	done
done
want="^6 lanecp: [^ ]+@$H: PATH: refused by the restricted agent\$"
[[ $ref =~ $want ]] ||
	lc_fail "the generic refusal is '$ref'"
# (the local sink of a pull with -r makes its target directory first)
[[ -z $(find "$d/local/out" -mindepth 1 2>/dev/null) && ! -e $d/local/x ]] ||
	lc_fail "something was copied"
# an unrestricted agent keeps the helpful messages
lc_lanecp_expect 6 "~lanecp-no-such-user: no such user" "$H:~lanecp-no-such-user/x" "$d/local/out"

# the agents' stderr comes back through these (sanitizer builds)
for f in "$d"/*.err "$d/err"; do
	! grep -Eq 'Sanitizer|runtime error:' "$f" || { lc__show "$f"; lc_fail "sanitizer report in $f"; }
done

echo PASS
