#!/usr/bin/env bash
#
# ProxyJump, -J and ProxyCommand against real sshds: a target (the usual
# fixture) and a bastion (a second sshd, LogLevel DEBUG).  Copies go
# through the bastion and are compared byte for byte; that they really
# went through it is checked in the bastion's log, which shows one
# direct-tcpip request to the target's port per connection (a copy that
# skipped the jump would add none).  Also: a chain of two jump hosts, -J
# none, an unknown jump host key (exit 4, one line naming the jump host),
# a bastion with AllowTcpForwarding no (exit 3, naming the hop and the
# server's reason), and lc_ssh_forward moving 8 MiB both ways (lc_sshfwd),
# with a tiny SSH send buffer too.
#
set -u -o pipefail
# shellcheck source=lib.sh
. "${LC_SRC_DIR:?}/tests/integration/lib.sh"

# shellcheck disable=SC2119  # no extra PATH dirs: $LANECP's directory
lc_sshd_start
T=$LC_SSHD_DIR
H=$LC_SSH_HOST
FWD=$LC_TOOLS_DIR/lc_sshfwd

lc_sshd_extra bastion
BPORT=$LC_X_PORT
BLOG=$LC_X_LOG
BKNOWN=$LC_X_KNOWN
lc_sshd_extra nofwd "AllowTcpForwarding no"
NPORT=$LC_X_PORT
NKNOWN=$LC_X_KNOWN

# known hosts: the target and both bastions; kh_nobastion lacks "bastion"
cat "$LC_KNOWN_HOSTS" >"$T/kh_all"
printf '%s\n%s\n' "$BKNOWN" "$NKNOWN" >>"$T/kh_all"
cat "$LC_KNOWN_HOSTS" >"$T/kh_nobastion"

# cfg: the target plus Host blocks for the bastions
mkcfg() {
	local out=$1
	shift
	lc_ssh_config "$out" UserKnownHostsFile="$T/kh_all" "$@"
	lc_ssh_host_block bastion "$BPORT" "$T/kh_all" >>"$out"
	lc_ssh_host_block nofwd "$NPORT" "$T/kh_all" >>"$out"
	lc_ssh_host_block badkey "$BPORT" "$T/kh_nobastion" >>"$out"
}
mkcfg "$T/cfg"
export LC_SSH_CONFIG=$T/cfg

# direct-tcpip requests the bastion saw for the target's port
forwards() {
	# (sshd -E ends debug lines with CR LF)
	grep -cE "server_request_direct_tcpip: .*target $LC_SSHD_ADDR port $LC_SSHD_PORT([^0-9]|\$)" \
	    "$BLOG" || true
}

# expect_forwards BEFORE N: the bastion's log shows N more forwards to
# the target (it logs them before answering, so they are there by now).
expect_forwards() {
	local now
	now=$(forwards)
	[[ $now == $(($1 + $2)) ]] || {
		lc__show "$BLOG"
		lc_fail "expected $2 forward(s) through the bastion, saw $((now - $1))"
	}
}

mkdir -p "$T/src/tree/a/b" "$T/dst"
head -c 3000000 /dev/urandom >"$T/src/f"
head -c 100000 /dev/urandom >"$T/src/tree/a/x"
head -c 70000 /dev/urandom >"$T/src/tree/a/b/y"
: >"$T/src/tree/empty"

# Through a jump host the data streams go over SSH too (one connection per
# stream, each through the bastion): -s 2 makes 1 + 2 forwards per copy.
lc_note "-J bastion: a file, and -v says through which host and path"
n=$(forwards)
lc_lanecp -v -s 2 -J bastion "$T/src/f" "$H:$T/dst/"
cmp "$T/src/f" "$T/dst/f" || lc_fail "-J copy differs"
lc_log_has "connected to $H through bastion\$" "$LC_ERR"
lc_log_has "data path: via SSH x 2, because .* is reached through a jump host" "$LC_ERR"
expect_forwards "$n" 3
rm -f "$T/dst/f"

lc_note "-J bastion --direct: the data streams go to the target's address"
n=$(forwards)
lc_lanecp -v -s 2 --direct -J bastion "$T/src/f" "$H:$T/dst/"
cmp "$T/src/f" "$T/dst/f" || lc_fail "-J --direct copy differs"
lc_log_has "data path: direct, data streams to $LC_SSHD_ADDR" "$LC_ERR"
expect_forwards "$n" 1
rm -f "$T/dst/f"

lc_note "-J bastion: a tree with -r"
n=$(forwards)
lc_lanecp -r -s 2 -J bastion "$T/src/tree" "$H:$T/dst/"
diff -r "$T/src/tree" "$T/dst/tree" || lc_fail "-J tree differs"
expect_forwards "$n" 3
rm -rf "$T/dst/tree"

lc_note "-J bastion: a pull (the remote side sends)"
mkdir -p "$T/pulled"
n=$(forwards)
lc_lanecp -s 2 -J bastion "$H:$T/src/f" "$T/pulled/"
cmp "$T/src/f" "$T/pulled/f" || lc_fail "-J pull differs"
expect_forwards "$n" 3

lc_note "-J with user@ and :port, two hops (bastion, then bastion again)"
n=$(forwards)
lc_lanecp -v -s 2 -J "$LC_USER@bastion:$BPORT,bastion" "$T/src/f" "$H:$T/dst/"
cmp "$T/src/f" "$T/dst/f" || lc_fail "two-hop copy differs"
lc_log_has "connected to $H through $LC_USER@bastion:$BPORT, bastion\$" "$LC_ERR"
expect_forwards "$n" 3
rm -f "$T/dst/f"

lc_note "ProxyJump in the ssh_config (-F), file and tree"
mkcfg "$T/cfg_pj" ProxyJump=bastion
n=$(forwards)
LC_SSH_CONFIG=$T/cfg_pj lc_lanecp -s 2 "$T/src/f" "$H:$T/dst/"
cmp "$T/src/f" "$T/dst/f" || lc_fail "ProxyJump copy differs"
LC_SSH_CONFIG=$T/cfg_pj lc_lanecp -s 2 -r "$T/src/tree" "$H:$T/dst/"
diff -r "$T/src/tree" "$T/dst/tree" || lc_fail "ProxyJump tree differs"
expect_forwards "$n" 6
rm -rf "$T/dst/f" "$T/dst/tree"

lc_note "-J none overrides ProxyJump: direct, the bastion sees nothing"
n=$(forwards)
LC_SSH_CONFIG=$T/cfg_pj lc_lanecp -J none "$T/src/f" "$H:$T/dst/"
cmp "$T/src/f" "$T/dst/f" || lc_fail "-J none copy differs"
expect_forwards "$n" 0
rm -f "$T/dst/f"

lc_note "ProxyCommand through the bastion"
if command -v ssh >/dev/null 2>&1; then
	mkcfg "$T/cfg_pc" ProxyCommand="ssh -F $T/cfg -o BatchMode=yes -W %h:%p bastion"
	n=$(forwards)
	LC_SSH_CONFIG=$T/cfg_pc lc_lanecp -v -s 2 "$T/src/f" "$H:$T/dst/"
	cmp "$T/src/f" "$T/dst/f" || lc_fail "ProxyCommand copy differs"
	lc_log_has "connected to $H through ProxyCommand\$" "$LC_ERR"
	lc_log_has "data path: via SSH x 2" "$LC_ERR"
	LC_SSH_CONFIG=$T/cfg_pc lc_lanecp -s 2 -r "$T/src/tree" "$H:$T/dst/"
	diff -r "$T/src/tree" "$T/dst/tree" || lc_fail "ProxyCommand tree differs"
	expect_forwards "$n" 6
	rm -rf "$T/dst/f" "$T/dst/tree"
	# a pull: the data comes back over SSH too
	LC_SSH_CONFIG=$T/cfg_pc lc_lanecp -s 2 "$H:$T/src/f" "$T/pulled/g"
	cmp "$T/src/f" "$T/pulled/g" || lc_fail "ProxyCommand pull differs"
	# with --direct a pull has no address of ours to dial
	LC_SSH_CONFIG=$T/cfg_pc lc_lanecp_expect 3 "no address for the data streams" \
		--direct "$H:$T/src/f" "$T/pulled/h"
	[[ -z $(lc_pids_matching "-W $LC_SSHD_ADDR:$LC_SSHD_PORT bastion") ]] ||
		lc_fail "ProxyCommand still running after lanecp exited"
else
	lc_skip "ProxyCommand: no OpenSSH ssh client"
fi

lc_note "ProxyCommand that fails: an SSH error, not a hang"
mkcfg "$T/cfg_false" ProxyCommand="exit 1"
LC_SSH_CONFIG=$T/cfg_false lc_lanecp_expect 3 "cannot connect to $LC_SSHD_ADDR port $LC_SSHD_PORT: .*\(through ProxyCommand\)\$" \
	"$T/src/f" "$H:$T/dst/"
printf '    %s\n' "$(cat "$LC_ERR")"

lc_note "unknown jump host key: exit 4, one line naming the jump host"
lc_lanecp_expect 4 "^lanecp: jump host badkey: host key for .*is not known" \
	-J badkey "$T/src/f" "$H:$T/dst/"
printf '    %s\n' "$(cat "$LC_ERR")"
[[ $(wc -l <"$LC_ERR") == 1 ]] || {
	lc__show "$LC_ERR"
	lc_fail "expected one error line"
}
[[ -z $(ls -A "$T/dst") ]] || lc_fail "failed copy wrote $(ls -A "$T/dst")"

lc_note "bastion with AllowTcpForwarding no: exit 3, naming the hop and the reason"
lc_lanecp_expect 3 "jump host nofwd: .*cannot forward to $LC_SSHD_ADDR port $LC_SSHD_PORT: .*prohibited" \
	-J nofwd "$T/src/f" "$H:$T/dst/"
printf '    %s\n' "$(cat "$LC_ERR")"

lc_note "a bad -J list is a usage error"
lc_lanecp_expect 2 "bad jump host 'bastion:99999'" -J "bastion:99999" "$T/src/f" "$H:$T/dst/"
printf '    %s\n' "$(cat "$LC_ERR")"

lc_note "lc_ssh_forward: 8 MiB both ways, socketpair and given descriptor"
"$FWD" -F "$T/cfg" "$H" >"$T/fwd.out" 2>"$T/fwd.err" ||
	{ lc__show "$T/fwd.err"; lc_fail "lc_sshfwd failed"; }
lc_log_has '^ok 8388608$' "$T/fwd.out"
"$FWD" -g -F "$T/cfg" "$H" >"$T/fwd.out" 2>"$T/fwd.err" ||
	{ lc__show "$T/fwd.err"; lc_fail "lc_sshfwd -g failed"; }
lc_log_has '^ok 8388608$' "$T/fwd.out"

lc_note "lc_ssh_forward with a 4 KiB SSH send buffer (packets sent in parts)"
"$FWD" -S 4096 -m 4 -F "$T/cfg" "$H" >"$T/fwd.out" 2>"$T/fwd.err" ||
	{ lc__show "$T/fwd.err"; lc_fail "lc_sshfwd -S 4096 failed"; }
lc_log_has '^ok 4194304$' "$T/fwd.out"

lc_note "lc_ssh_forward through a jump host, and refused by the server"
n=$(forwards)
"$FWD" -J bastion -m 4 -F "$T/cfg" "$H" >"$T/fwd.out" 2>"$T/fwd.err" ||
	{ lc__show "$T/fwd.err"; lc_fail "lc_sshfwd -J failed"; }
lc_log_has '^ok 4194304$' "$T/fwd.out"
expect_forwards "$n" 1

lc_note "the same opts connect again: three chains through the bastion at once"
n=$(forwards)
"$FWD" -n 3 -J bastion -m 2 -F "$T/cfg" "$H" >"$T/fwd.out" 2>"$T/fwd.err" ||
	{ lc__show "$T/fwd.err"; lc_fail "lc_sshfwd -n 3 -J failed"; }
lc_log_has '^ok 6291456$' "$T/fwd.out"
expect_forwards "$n" 3
lc_expect_exit 3 "$FWD" -F "$T/cfg" nofwd 2>"$T/fwd.err"
lc_log_has "cannot forward to 127\.0\.0\.1 port [0-9]+: .*administratively prohibited" "$T/fwd.err"
