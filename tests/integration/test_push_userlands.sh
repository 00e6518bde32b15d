#!/usr/bin/env bash
# The pushed agent on other userlands (issue 22, item 4): lanecp-agent,
# static, pushed into root file systems of other Debian releases (their
# own glibc, sshd and users), each run in a chroot with its own sshd on a
# loopback port.  For each release: a copy both ways is byte-identical;
# --owner maps names by the release's own /etc/passwd and /etc/group
# (names whose ids differ from this host's, a name it lacks, ids without
# names, and hostile lines before the real entries); and strace shows
# the agent, with all its threads, opening no shared object, no NSS
# configuration and no OpenSSL configuration.
#
# The root file systems come from userland_rootfs.sh (debootstrap, cached
# in /var/cache/lanecp-test, reused); a release that cannot be built here
# (not root, no debootstrap, no network) is reported SKIPPED with why.
# LC_USERLAND_RELEASES (default "trixie bullseye": the newest release and
# the oldest the mirror serves) picks them.  Label userland: scripts/test
# runs it in the product build only (what ships is what is pushed).
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

if [[ $(id -u) != 0 ]]; then
	echo "SKIPPED: needs root (chroot, mount, chown)"
	exit 77
fi
agent=$(dirname "$LANECP")/lanecp-agent
[[ -x $agent ]] || lc_fail "no lanecp-agent next to $LANECP"
if LC_ALL=C readelf -l "$agent" 2>/dev/null | grep -q 'INTERP'; then
	echo "SKIPPED: $agent is linked dynamically (a sanitizer build?):" \
	    "not the static agent that is pushed"
	exit 77
fi
strace=$(command -v strace || true)
releases=${LC_USERLAND_RELEASES:-trixie bullseye}
d=$(mktemp -d "${TMPDIR:-/tmp}/lanecp-userland.XXXXXX")
lc_on_exit "rm -rf '$d'"

# The pids (strace -f -o FILE, one line per call) that ran the pushed
# agent (exec'd as /proc/self/fd/3 by the boot script, push.c), and the
# threads and children they made: every file any of them opened.
agent_opens() {
	awk '
	function pid_of(l) { split(l, f, " "); return f[1] }
	{ p = pid_of($0) }
	/ execve\("\/proc\/self\/fd\/3"/ { pending[p] = 1 }
	/execve resumed>/ || / execve\(/ {
		if ($0 ~ / = 0$/ && pending[p]) { agent[p] = 1 }
		if ($0 ~ / = 0$/ && !pending[p]) { delete agent[p] }
		if ($0 ~ / = / && $0 !~ /unfinished/) { delete pending[p] }
	}
	/(clone3?|v?fork)(\(| resumed>)/ && / = [0-9]+$/ {
		if (agent[p]) { agent[$NF] = 1 }
	}
	/ (open|openat)\(/ && agent[p] {
		if (match($0, /"[^"]*"/))
			print substr($0, RSTART + 1, RLENGTH - 2)
	}
	' "$1"
}

# try_release NAME ROOTFS
try_release() {
	local r=$1 lower=$2 w=$d/$1 m port pid err opens
	m=$w/root
	mkdir -p "$w/upper" "$w/work" "$m" "$w/src/sub" "$w/pull"
	# the cached tree stays as built: this run writes into an overlay,
	# or into a copy where overlays cannot be mounted
	if mount -t overlay overlay \
	    -o "lowerdir=$lower,upperdir=$w/upper,workdir=$w/work" "$m" 2>"$w/ovl"; then
		lc_on_exit "umount -l '$m'"
	else
		lc_note "$r: no overlay here ($(cat "$w/ovl")): working on a copy"
		cp -a "$lower/." "$m/" || lc_fail "$r: cannot copy $lower"
	fi
	mount -t proc proc "$m/proc" || lc_fail "$r: cannot mount /proc"
	lc_on_exit "umount -l '$m/proc'"

	# users and groups as this release names them: daemon and staff
	# with ids other than this host's (whose daemon is 1 and staff 50),
	# after lines the agent must skip; games missing
	grep -q '^daemon:x:1:' "$m/etc/passwd" && grep -q '^staff:x:50:' "$m/etc/group" ||
		lc_fail "$r: no daemon (1) or staff (50) in its /etc/passwd, /etc/group"
	{
		printf '+::::::\n'
		printf 'daemon:x:4294967295:1::/:\n'
		printf 'daemon:x:-3:1::/:\n'
		printf 'daemon:x:3001:3050::/usr/sbin:/usr/sbin/nologin:extra\n'
		head -c 20000 /dev/zero | tr '\0' 'x'; printf '\n'
		sed -e 's/^daemon:x:1:1:/daemon:x:3001:1:/' -e '/^games:/d' \
		    "$lower/etc/passwd"
		printf 'daemon:x:3999:3999::/:\n'	# the first one wins
	} >"$m/etc/passwd"
	{
		printf 'staff:x:99999999999:\n'
		sed -e 's/^staff:x:50:/staff:x:3050:/' "$lower/etc/group"
	} >"$m/etc/group"

	# its own sshd: a host key, root's key, 127.0.0.1 on a free port
	ssh-keygen -q -t ed25519 -N '' -f "$m/etc/ssh/lanecp_host_key" </dev/null
	ssh-keygen -q -t ed25519 -N '' -f "$w/id" </dev/null
	mkdir -p "$m/root/.ssh" "$m/run/sshd"
	chmod 0700 "$m/root" "$m/root/.ssh"
	cp "$w/id.pub" "$m/root/.ssh/authorized_keys"
	port=$(lc_free_port)
	cat >"$m/etc/ssh/sshd_config.lanecp" <<EOC
ListenAddress 127.0.0.1
Port $port
HostKey /etc/ssh/lanecp_host_key
PidFile /run/sshd-lanecp.pid
AuthorizedKeysFile /root/.ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
LogLevel VERBOSE
EOC
	chroot "$m" /usr/sbin/sshd -t -f /etc/ssh/sshd_config.lanecp >"$w/sshd-t" 2>&1 || {
		lc__show "$w/sshd-t"; lc_fail "$r: sshd -t"; }
	: >"$m/var/log/sshd-lanecp.log"
	if [[ -n $strace ]]; then
		"$strace" -f -s 256 -o "$w/strace" \
		    -e trace=execve,open,openat,clone,clone3,fork,vfork \
		    chroot "$m" /usr/sbin/sshd -D -f /etc/ssh/sshd_config.lanecp \
		    -E /var/log/sshd-lanecp.log </dev/null &
	else
		chroot "$m" /usr/sbin/sshd -D -f /etc/ssh/sshd_config.lanecp \
		    -E /var/log/sshd-lanecp.log </dev/null &
	fi
	pid=$!
	lc_on_exit "lc__kill_tree $pid"
	lc_wait_for "Server listening on 127.0.0.1 port $port" \
	    "$m/var/log/sshd-lanecp.log" 60
	printf '[127.0.0.1]:%s %s\n' "$port" \
	    "$(cut -d' ' -f1,2 "$m/etc/ssh/lanecp_host_key.pub")" >"$w/known"
	cat >"$w/config" <<EOC
Host ul
    HostName 127.0.0.1
    Port $port
    User root
    IdentityFile $w/id
    IdentitiesOnly yes
    UserKnownHostsFile $w/known
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    ConnectTimeout 10
EOC
	err=$w/err

	lc_note "$r: push a tree with --owner; the agent is pushed"
	head -c 2500000 /dev/urandom >"$w/src/big"
	echo daemon >"$w/src/sub/d"
	echo games >"$w/src/g"
	echo none >"$w/src/n"
	chown daemon:staff "$w/src/sub/d"
	chown games:bin "$w/src/g"
	chown 4242:4243 "$w/src/n"
	mkdir -p "$m/srv/push"
	"$LANECP" -F "$w/config" -v -r --owner "$w/src" ul:/srv/push/ 2>"$err" || {
		lc__show "$err"; lc_fail "$r: push copy"; }
	lc_log_has 'pushed agent to root@ul:' "$err"
	diff -r "$w/src" "$m/srv/push/src" || lc_fail "$r: push: the copy differs"
	[[ $(stat -c %u:%g "$m/srv/push/src/sub/d") == 3001:3050 ]] ||
		lc_fail "$r: daemon:staff arrived as $(stat -c %u:%g "$m/srv/push/src/sub/d"), not 3001:3050"
	[[ $(stat -c %u:%g "$m/srv/push/src/g") == 5:2 ]] ||
		lc_fail "$r: games:bin (no games there) arrived as $(stat -c %u:%g "$m/srv/push/src/g"), not 5:2"
	[[ $(stat -c %u:%g "$m/srv/push/src/n") == 4242:4243 ]] ||
		lc_fail "$r: 4242:4243 arrived as $(stat -c %u:%g "$m/srv/push/src/n")"
	lc_log_has 'user "games" is not known here \(files\)' "$err"
	[[ $(grep -c 'is not known here' "$err") == 1 ]] ||
		{ lc__show "$err"; lc_fail "$r: not one warning for the names not known"; }

	lc_note "$r: pull with --owner; the agent names its ids"
	mkdir -p "$m/srv/pull"
	head -c 1000000 /dev/urandom >"$m/srv/pull/f"
	echo x >"$m/srv/pull/x"
	chown 3001:3050 "$m/srv/pull/f"
	chown 3777:3778 "$m/srv/pull/x"
	"$LANECP" -F "$w/config" -v -r --owner ul:/srv/pull "$w/pull/" 2>"$err" || {
		lc__show "$err"; lc_fail "$r: pull copy"; }
	diff -r "$m/srv/pull" "$w/pull/pull" || lc_fail "$r: pull: the copy differs"
	[[ $(stat -c %u:%g "$w/pull/pull/f") == 1:50 ]] ||
		lc_fail "$r: its daemon:staff arrived here as $(stat -c %u:%g "$w/pull/pull/f"), not 1:50"
	[[ $(stat -c %u:%g "$w/pull/pull/x") == 3777:3778 ]] ||
		lc_fail "$r: 3777:3778 arrived here as $(stat -c %u:%g "$w/pull/pull/x")"
	lc_log_has 'user 3777 has no name here \(files\)' "$err"

	if [[ -z $strace ]]; then
		lc_skip "$r: no strace here: what the agent opened is not checked"
		return 0
	fi
	lc__kill_tree "$pid"
	opens=$w/agent-opens
	agent_opens "$w/strace" | sort -u >"$opens"
	lc_note "$r: what the agent opened: $(tr '\n' ' ' <"$opens")"
	lc_log_has '^/etc/passwd$' "$opens"
	lc_log_has '^/etc/group$' "$opens"
	lc_log_lacks '\.so(\.|$)|^/lib|^/usr/lib|nsswitch\.conf|ld\.so|openssl\.cnf|gconv|/etc/(hosts|resolv\.conf|services)$' "$opens"
}

for r in $releases; do
	rc=0
	root=$("$LC_SRC_DIR/tests/integration/userland_rootfs.sh" "$r" 2>"$d/rootfs-$r.err") || rc=$?
	if [[ $rc == 77 ]]; then
		lc_skip "$r: $(cat "$d/rootfs-$r.err")"
		continue
	fi
	[[ $rc == 0 ]] || { lc__show "$d/rootfs-$r.err"; lc_fail "$r: userland_rootfs.sh"; }
	lc_note "$r: $(chroot "$root" ldd --version 2>/dev/null | head -1)"
	try_release "$r" "$root"
done
