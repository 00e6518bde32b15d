# shellcheck shell=bash
#
# lanecp integration test library: a throwaway sshd on 127.0.0.1 and small
# assertion helpers.  Source it from a bash test script:
#
#   . "$LC_SRC_DIR/tests/integration/lib.sh"
#   lc_sshd_start                       # sshd + keys + client config
#   "$LC_TOOLS_DIR/lc_sshexec" -F "$LC_SSH_CONFIG" lctest 'echo hi'
#   "$LANECP" -F "$LC_SSH_CONFIG" ... lctest:/path
#
# lc_sshd_start [DIR...]
#   Makes a temp dir (removed on exit), host keys (ed25519, plus ecdsa so
#   that the server offers two key types), a user key with its
#   authorized_keys, an sshd_config (127.0.0.1, a free port, StrictModes
#   no, UsePAM no, public keys only, LogLevel VERBOSE), checks it with
#   sshd -t, starts "sshd -D -E log" and waits until it listens (10 s).
#   sshd is killed on exit.  The DIRs (default: the directory of $LANECP,
#   if set) are put in front of PATH for the remote commands, with sshd's
#   "SetEnv PATH=..." (it works for exec sessions on OpenSSH 9.2: SetEnv
#   is applied after sshd's default PATH); "SetEnv SHLVL=1" keeps bash from
#   sourcing ~/.bashrc for them.  It exports:
#     LC_SSHD_DIR     the temp dir (use it for test files too)
#     LC_SSHD_PORT    sshd's port on 127.0.0.1
#     LC_SSHD_PID     sshd's pid
#     LC_SSHD_LOG     sshd's log file
#     LC_SSHD_CONFIG  the sshd_config
#     LC_SSH_CONFIG   client config with "Host lctest" (HostName 127.0.0.1,
#                     Port, User, IdentityFile, IdentitiesOnly yes,
#                     UserKnownHostsFile, GlobalKnownHostsFile /dev/null,
#                     StrictHostKeyChecking yes, ConnectTimeout 10)
#     LC_SSH_HOST     "lctest"
#     LC_USER         the current user name (the remote user as well)
#     LC_USER_KEY     the user's private key (LC_USER_KEY.pub: public)
#     LC_KNOWN_HOSTS  known_hosts with the "[127.0.0.1]:PORT" ed25519 entry
#     LC_HOST_KEY     the ed25519 host public key file
#     LC_HOST_KEY_ECDSA  the ecdsa host public key file
#   and sets SSH_AUTH_SOCK to empty so that a developer's agent stays out.
#   LC_SSHD_OPTIONS, if set, is appended to the sshd_config (lines such as
#   "ClientAliveInterval 1").  LC_SSHD_SETENV, if set, is added to that
#   SetEnv line (sshd takes only its first SetEnv line), e.g.
#   '"HOME=/some/dir"' for the remote sessions' HOME.
#   Where it listens: LC_SSHD_ADDR (default 127.0.0.1; ::1, or any address
#   of the namespace) is the HostName of the client config; LC_SSHD_ALSO
#   (space-separated) adds more ListenAddress lines, each with its
#   known_hosts entry; LC_SSHD_NETNS=NAME runs sshd (and the readiness
#   probes) under "ip netns exec NAME"; LC_SSHD_LISTEN_PORT=PORT takes that
#   port instead of a free one (netns.sh uses these).
#
# lc_ssh_config FILE [Key=Value...]
#   Writes a client config like LC_SSH_CONFIG to FILE, with keys changed,
#   added, or dropped ("Key=" with an empty value).  Values are written
#   as given (several files: UserKnownHostsFile="$a $b"; quote a path with
#   spaces yourself).
# lc_sshd_extra NAME [sshd_config line...]
#   After lc_sshd_start: one more sshd on LC_SSHD_ADDR (its own host keys,
#   port and log under $LC_SSHD_DIR/NAME; the same user key and
#   authorized_keys; LogLevel DEBUG so that forwards show in its log; the
#   given lines take precedence, e.g. "AllowTcpForwarding no"), killed on
#   exit.  Sets LC_X_PORT, LC_X_LOG and LC_X_KNOWN (its known_hosts line,
#   "[addr]:port key"); write its client Host block with
#   lc_ssh_host_block.
# lc_ssh_host_block NAME PORT KNOWN_HOSTS
#   Prints a client "Host NAME" block like LC_SSH_CONFIG's for an sshd
#   on LC_SSHD_ADDR:PORT with that known_hosts file.
# lc_sshd_drop         kills (SIGKILL) the per-connection sshd processes:
#                      every session's TCP connection drops at once; the
#                      remote commands live on (kill them yourself).
# lc_agent_start       starts ssh-agent (killed on exit), exports
#                      SSH_AUTH_SOCK and SSH_AGENT_PID.
# lc_free_port         prints a 127.0.0.1 port nobody listens on.
# lc_on_exit CMD...    runs CMD on exit (in reverse order of registration).
# lc_fail MSG...       prints "FAIL: MSG" to stderr and exits 1.
# lc_skip REASON...    records that a case could not run here (not root, a
#                      missing tool) and goes on with the rest.  When the
#                      script then ends with status 0, it prints
#                      "SKIPPED: REASON" for each and exits 77 instead, which
#                      ctest reports as skipped (SKIP_RETURN_CODE), not
#                      passed.  Call it in the main shell, not a subshell.
# lc_expect_exit CODE CMD...
#                      runs CMD, fails unless it exits with CODE.
# lc_log_has PATTERN FILE
#                      fails (showing FILE) unless the extended regex
#                      PATTERN occurs in FILE.
# lc_log_lacks PATTERN FILE   the opposite.
# lc_re STRING         prints STRING with regex metacharacters escaped,
#                      for the patterns above: "$(lc_re "$path") line 3".
# lc_note MSG...       prints a progress line.
# lc_need_test_hooks   exits 77 (ctest: skipped) unless $LANECP was built
#                      with -DLC_TEST_HOOKS=ON (LANECP_TEST_PROXY works).
# lc_wait_for PATTERN FILE SECONDS
#                      waits until PATTERN shows up in FILE; fails after
#                      SECONDS.  lc_wait_size FILE BYTES SECONDS: until FILE
#                      holds at least BYTES.  lc_wait_no_pids STRING SECONDS:
#                      until no command line contains STRING.  Wait for the
#                      event with these, never a fixed sleep.
# lc_kill_stalled_copy NAME SRC DST FIFO
#                      starts a copy (-f, -vv, agent named after NAME) that
#                      stalls on FIFO (a reader that never reads) once its
#                      streams are up, SIGKILLs the controller and waits
#                      (60 s at most) until its agent is gone; sets
#                      LC_KILL_T0_MS to the time of the kill.
#
# Works as root (then /run/sshd is created) and as a normal user.  Set
# LC_KEEP_TMP=1 to keep the temp dir (keys, configs, logs) for debugging.

LC_SSH_HOST=lctest
LC__EXIT_CMDS=()

lc_note() {
	printf '=== %s\n' "$*"
}

lc_need_test_hooks() {
	"$LANECP" --test-hooks >/dev/null 2>&1 && return 0
	printf 'SKIP: %s has no test hooks (build with -DLC_TEST_HOOKS=ON)\n' \
	    "$LANECP"
	exit 77
}

lc_fail() {
	# a test that sets CASE gets it named: FAIL: [CASE] ...
	printf 'FAIL: %s%s\n' "${CASE:+[$CASE] }" "$*" >&2
	exit 1
}

lc_on_exit() {
	LC__EXIT_CMDS+=("$*")
}

LC__SKIPS=()
lc_skip() {
	LC__SKIPS+=("$*")
	printf '=== SKIP: %s\n' "$*"
}

lc__cleanup() {
	local i rc=$?
	for ((i = ${#LC__EXIT_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${LC__EXIT_CMDS[$i]}" >/dev/null 2>&1 || true
	done
	if [[ $rc == 0 && ${#LC__SKIPS[@]} -gt 0 ]]; then
		for i in "${LC__SKIPS[@]}"; do
			printf 'SKIPPED: %s\n' "$i"
		done
		exit 77
	fi
	return $rc
}
trap lc__cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

lc_expect_exit() {
	local want=$1 got=0
	shift
	"$@" || got=$?
	if [[ $got != "$want" ]]; then
		lc_fail "expected exit $want, got $got: $*"
	fi
}

lc__show() {
	printf -- '--- %s:\n' "$1" >&2
	sed 's/^/| /' "$1" >&2 2>/dev/null || true
}

lc_log_has() {
	if ! grep -Eq -- "$1" "$2" 2>/dev/null; then
		lc__show "$2"
		lc_fail "expected /$1/ in $2"
	fi
}

lc_re() {
	printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'
}

lc_log_lacks() {
	if grep -Eq -- "$1" "$2" 2>/dev/null; then
		lc__show "$2"
		lc_fail "did not expect /$1/ in $2"
	fi
}

# The address the fixture sshd listens on: 127.0.0.1, or ::1 when a test
# sets LC_SSHD_ADDR=::1 before lc_sshd_start (IPv6 on loopback).
LC_SSHD_ADDR=${LC_SSHD_ADDR:-127.0.0.1}

LC_SSHD_ALSO=${LC_SSHD_ALSO-}
LC_SSHD_NETNS=${LC_SSHD_NETNS-}

# Does something listen on LC_SSHD_ADDR:$1 (in LC_SSHD_NETNS)?
lc__listening() {
	if [[ -n $LC_SSHD_NETNS ]]; then
		ip netns exec "$LC_SSHD_NETNS" bash -c \
		    'exec 3<>"/dev/tcp/$0/$1"' "$LC_SSHD_ADDR" "$1" 2>/dev/null
	else
		(exec 3<>"/dev/tcp/$LC_SSHD_ADDR/$1") 2>/dev/null
	fi
}

# Below the ephemeral range (32768+), so outgoing connections do not
# collide with it.
lc_free_port() {
	local port i
	for ((i = 0; i < 100; i++)); do
		port=$((20000 + RANDOM % 12000))
		if ! lc__listening "$port"; then
			echo "$port"
			return 0
		fi
	done
	lc_fail "no free port found"
}

# Pids of all descendants of $1 (from /proc, so procps is not needed).
lc__descendants() {
	local p line rest ppid kids=()
	local -a f
	for p in /proc/[0-9]*; do
		# a process gone meanwhile: the shell's own redirection error
		# is quiet only around the whole command
		{ read -r line <"$p/stat"; } 2>/dev/null || continue
		rest=${line##*) }
		read -r -a f <<<"$rest"
		ppid=${f[1]}
		[[ $ppid == "$1" ]] && kids+=("${p#/proc/}")
	done
	for p in "${kids[@]}"; do
		lc__descendants "$p"
		echo "$p"
	done
}

# Kill a process we started and everything below it.
lc__kill_tree() {
	local pid=$1 p
	[[ -n $pid ]] || return 0
	for p in $(lc__descendants "$pid"); do
		kill -KILL "$p" 2>/dev/null || true
	done
	kill -TERM "$pid" 2>/dev/null || true
	kill -CONT "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

lc__quote() {
	if [[ $1 == *[[:space:]]* ]]; then
		printf '"%s"' "$1"
	else
		printf '%s' "$1"
	fi
}

lc_ssh_config() {
	local out=$1 kv k
	shift
	local -a keys=(HostName Port User IdentityFile IdentitiesOnly
		UserKnownHostsFile GlobalKnownHostsFile StrictHostKeyChecking
		ConnectTimeout)
	local -A val=(
		[HostName]=$LC_SSHD_ADDR
		[Port]=$LC_SSHD_PORT
		[User]=$LC_USER
		[IdentityFile]=$(lc__quote "$LC_USER_KEY")
		[IdentitiesOnly]=yes
		[UserKnownHostsFile]=$(lc__quote "$LC_KNOWN_HOSTS")
		[GlobalKnownHostsFile]=/dev/null
		[StrictHostKeyChecking]=yes
		[ConnectTimeout]=10
	)
	for kv in "$@"; do
		k=${kv%%=*}
		[[ -n ${val[$k]+set} ]] || keys+=("$k")
		val[$k]=${kv#*=}
	done
	{
		echo "Host $LC_SSH_HOST"
		for k in "${keys[@]}"; do
			if [[ -n ${val[$k]} ]]; then
				printf '    %s %s\n' "$k" "${val[$k]}"
			fi
		done
	} >"$out"
}

lc__sshd_bin() {
	local c
	for c in "$(command -v sshd 2>/dev/null)" /usr/sbin/sshd \
	    /usr/local/sbin/sshd; do
		if [[ -n $c && -x $c ]]; then
			echo "$c"
			return 0
		fi
	done
	lc_fail "sshd not found (install openssh-server)"
}

lc__write_sshd_config() {
	local cfg=$1 port=$2 path=$3 d=${4:-$LC_SSHD_DIR}
	local a
	{
		for a in $LC_SSHD_ADDR $LC_SSHD_ALSO; do
			echo "ListenAddress $a"
		done
	} >"$cfg"
	cat >>"$cfg" <<EOF
Port $port
HostKey $d/ssh_host_ed25519_key
HostKey $d/ssh_host_ecdsa_key
PidFile $d/sshd.pid
AuthorizedKeysFile $LC_SSHD_DIR/authorized_keys
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
PrintMotd no
LogLevel VERBOSE
MaxStartups 100
MaxSessions 100
SetEnv SHLVL=1 "PATH=$path"${LC_SSHD_SETENV:+ $LC_SSHD_SETENV}
EOF
	if [[ -n ${LC_SSHD_OPTIONS-} ]]; then
		printf '%s\n' "$LC_SSHD_OPTIONS" >>"$cfg"
	fi
}

lc_sshd_start() {
	local sshd d port cfg log path attempt i
	local -a dirs=("$@") pre=()
	sshd=$(lc__sshd_bin)
	if [[ -n $LC_SSHD_NETNS ]]; then
		pre=(ip netns exec "$LC_SSHD_NETNS")
	fi
	if [[ ${#dirs[@]} -eq 0 && -n ${LANECP-} ]]; then
		dirs=("$(cd "$(dirname "$LANECP")" && pwd)")
	fi
	path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do
		path="${dirs[$i]}:$path"
	done

	d=$(mktemp -d "${TMPDIR:-/tmp}/lanecp-sshd.XXXXXX") ||
		lc_fail "mktemp failed"
	LC_SSHD_DIR=$d
	if [[ -n ${LC_KEEP_TMP-} ]]; then
		lc_on_exit "echo 'kept $d' >&2"
	else
		lc_on_exit "rm -rf '$d'"
	fi
	if [[ $(id -u) == 0 ]]; then
		# sshd's privilege separation directory
		if ! { mkdir -p /run/sshd && chmod 0755 /run/sshd; }; then
			lc_fail "cannot create /run/sshd"
		fi
	fi
	if ! { ssh-keygen -q -t ed25519 -N '' -C lanecp-test-host \
		-f "$d/ssh_host_ed25519_key" </dev/null &&
	    ssh-keygen -q -t ecdsa -N '' -C lanecp-test-host \
		-f "$d/ssh_host_ecdsa_key" </dev/null &&
	    ssh-keygen -q -t ed25519 -N '' -C lanecp-test-user \
		-f "$d/id_ed25519" </dev/null; }; then
		lc_fail "ssh-keygen failed"
	fi
	cp "$d/id_ed25519.pub" "$d/authorized_keys"
	chmod 0600 "$d/authorized_keys"

	LC_USER=$(id -un)
	LC_USER_KEY=$d/id_ed25519
	LC_HOST_KEY=$d/ssh_host_ed25519_key.pub
	LC_HOST_KEY_ECDSA=$d/ssh_host_ecdsa_key.pub
	LC_KNOWN_HOSTS=$d/known_hosts
	LC_SSHD_CONFIG=$d/sshd_config
	LC_SSHD_LOG=$d/sshd.log
	LC_SSH_CONFIG=$d/ssh_config
	cfg=$LC_SSHD_CONFIG
	log=$LC_SSHD_LOG

	for ((attempt = 0; attempt < 20; attempt++)); do
		port=${LC_SSHD_LISTEN_PORT:-$(lc_free_port)}
		lc__write_sshd_config "$cfg" "$port" "$path"
		if ! "$sshd" -t -f "$cfg" >"$d/sshd-t.out" 2>&1; then
			lc__show "$d/sshd-t.out"
			lc_fail "sshd -t rejects $cfg"
		fi
		: >"$log"
		# not through a shell function: $! must be sshd itself (tests
		# stop it with kill -STOP); ip netns exec execs its command
		${pre[@]+"${pre[@]}"} "$sshd" -D -f "$cfg" -E "$log" </dev/null &
		LC_SSHD_PID=$!
		for ((i = 0; i < 100; i++)); do
			if grep -q "Server listening on $LC_SSHD_ADDR port $port" \
			    "$log" && lc__listening "$port"; then
				break 2
			fi
			if ! kill -0 "$LC_SSHD_PID" 2>/dev/null; then
				break
			fi
			sleep 0.1
		done
		lc__kill_tree "$LC_SSHD_PID"
		LC_SSHD_PID=
		if ! grep -q "Address already in use" "$log"; then
			lc__show "$log"
			lc_fail "sshd did not start"
		fi
	done
	[[ -n $LC_SSHD_PID ]] || lc_fail "sshd: no usable port"
	lc_on_exit "lc__kill_tree $LC_SSHD_PID"
	LC_SSHD_PORT=$port
	# the readiness probe (lc__listening) was a connection too: wait for
	# sshd to log it, so that a test counting connections starts from a
	# settled log (test_ssh_config_refuse failed when it came late)
	lc_wait_for 'Connection from' "$log" 30

	: >"$LC_KNOWN_HOSTS"
	for i in $LC_SSHD_ADDR $LC_SSHD_ALSO; do
		# known_hosts names port 22 by the bare host
		[[ $port == 22 ]] || i="[$i]:$port"
		printf '%s %s\n' "$i" \
			"$(cut -d' ' -f1,2 "$LC_HOST_KEY")" >>"$LC_KNOWN_HOSTS"
	done
	lc_ssh_config "$LC_SSH_CONFIG"
	SSH_AUTH_SOCK=
	export SSH_AUTH_SOCK LC_SSHD_DIR LC_SSHD_PORT LC_SSHD_PID LC_SSHD_LOG \
		LC_SSHD_CONFIG LC_SSH_CONFIG LC_SSH_HOST LC_USER LC_USER_KEY \
		LC_KNOWN_HOSTS LC_HOST_KEY LC_HOST_KEY_ECDSA
}

# Start "sshd -D" with config $1 and log $2 on a free port (written by
# "lc__write_sshd_config $1 PORT $3 $4"); echoes "PID PORT".
lc__sshd_run() {
	local cfg=$1 log=$2 path=$3 d=$4 extra=$5 sshd port pid attempt i
	sshd=$(lc__sshd_bin)
	for ((attempt = 0; attempt < 20; attempt++)); do
		port=$(lc_free_port)
		lc__write_sshd_config "$cfg.base" "$port" "$path" "$d"
		# first value wins in sshd_config: the extra lines go first
		{ printf '%s' "$extra"; cat "$cfg.base"; } >"$cfg"
		if ! "$sshd" -t -f "$cfg" >"$d/sshd-t.out" 2>&1; then
			lc__show "$d/sshd-t.out"
			lc_fail "sshd -t rejects $cfg"
		fi
		: >"$log"
		"$sshd" -D -f "$cfg" -E "$log" </dev/null >/dev/null &
		pid=$!
		for ((i = 0; i < 100; i++)); do
			if grep -q "Server listening on $LC_SSHD_ADDR port $port" \
			    "$log" && lc__listening "$port"; then
				echo "$pid $port"
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		lc__kill_tree "$pid"
		if ! grep -q "Address already in use" "$log"; then
			lc__show "$log"
			lc_fail "sshd did not start"
		fi
	done
	lc_fail "sshd: no usable port"
}

lc_sshd_extra() {
	local name=$1 d=$LC_SSHD_DIR/$1 extra="" line pid port
	shift
	mkdir -p "$d" || lc_fail "mkdir $d"
	ssh-keygen -q -t ed25519 -N '' -C "lanecp-test-$name" \
		-f "$d/ssh_host_ed25519_key" </dev/null &&
	    ssh-keygen -q -t ecdsa -N '' -C "lanecp-test-$name" \
		-f "$d/ssh_host_ecdsa_key" </dev/null ||
		lc_fail "ssh-keygen failed"
	extra=$'LogLevel DEBUG\n'
	for line in "$@"; do
		extra+="$line"$'\n'
	done
	read -r pid port < <(lc__sshd_run "$d/sshd_config" "$d/sshd.log" \
	    "$(sed -n 's/^SetEnv SHLVL=1 "PATH=\(.*\)"$/\1/p' \
	    "$LC_SSHD_CONFIG")" "$d" "$extra")
	[[ -n $port ]] || lc_fail "sshd $name did not start"
	lc_on_exit "lc__kill_tree $pid"
	lc_wait_for 'Connection from' "$d/sshd.log" 30
	LC_X_PORT=$port
	LC_X_LOG=$d/sshd.log
	LC_X_KNOWN="[$LC_SSHD_ADDR]:$port $(cut -d' ' -f1,2 \
	    "$d/ssh_host_ed25519_key.pub")"
}

lc_ssh_host_block() {
	printf 'Host %s\n' "$1"
	printf '    HostName %s\n    Port %s\n    User %s\n' \
	    "$LC_SSHD_ADDR" "$2" "$LC_USER"
	printf '    IdentityFile %s\n    IdentitiesOnly yes\n' \
	    "$(lc__quote "$LC_USER_KEY")"
	printf '    UserKnownHostsFile %s\n' "$(lc__quote "$3")"
	printf '    GlobalKnownHostsFile /dev/null\n'
	printf '    StrictHostKeyChecking yes\n    ConnectTimeout 10\n'
}

lc_sshd_drop() {
	local p comm
	for p in $(lc__descendants "$LC_SSHD_PID"); do
		read -r comm <"/proc/$p/comm" 2>/dev/null || continue
		if [[ $comm == sshd* ]]; then
			kill -KILL "$p" 2>/dev/null || true
		fi
	done
}

lc_agent_start() {
	local out
	out=$(ssh-agent -s) || lc_fail "ssh-agent failed"
	eval "$out" >/dev/null
	[[ -n ${SSH_AGENT_PID-} ]] || lc_fail "ssh-agent: no pid"
	lc_on_exit "kill $SSH_AGENT_PID"
	export SSH_AUTH_SOCK SSH_AGENT_PID
}

# lc_lanecp ARGS...
#   Runs "$LANECP -F $LC_SSH_CONFIG ARGS..." and fails unless it exits 0.
#   Its stderr is kept in $LC_ERR (and shown on failure); a sanitizer
#   report anywhere in it (local or relayed from a remote agent) fails the
#   test even when the exit status is 0.
# lc_lanecp_expect CODE PATTERN ARGS...
#   The same, but expects exit status CODE and the extended regex PATTERN
#   in stderr (on one line: every lanecp error is one line).
# LC_LANECP_WRAP (an array, empty by default) is put in front of the
# command: netns.sh sets it to "ip netns exec NAME".
LC_ERR=
LC_LANECP_WRAP=()
LC_RC=0
# lc_run_cfg CFG OUT ERR ARGS...: run lanecp with the ssh config CFG and
# ARGS, its stdout to the file OUT ("-": left as it is) and its stderr to
# the file ERR; its status in LC_RC.  A sanitizer report fails the test.
lc_run_cfg() {
	local cfg=$1 out=$2 err=$3
	shift 3
	LC_RC=0
	if [[ $out == - ]]; then
		${LC_LANECP_WRAP[@]+"${LC_LANECP_WRAP[@]}"} \
		    "$LANECP" -F "$cfg" "$@" 2>"$err" || LC_RC=$?
	else
		${LC_LANECP_WRAP[@]+"${LC_LANECP_WRAP[@]}"} \
		    "$LANECP" -F "$cfg" "$@" >"$out" 2>"$err" || LC_RC=$?
	fi
	if grep -Eq 'Sanitizer|runtime error:' "$err"; then
		lc__show "$err"
		lc_fail "sanitizer report from: lanecp $*"
	fi
}
# lc_ok_cfg CFG OUT ERR ARGS...: the same, and a failed copy fails the test
lc_ok_cfg() {
	lc_run_cfg "$@"
	if [[ $LC_RC != 0 ]]; then
		lc__show "$3"
		lc_fail "lanecp ${*:4} exited $LC_RC"
	fi
}
# lc_same A B: the files A and B are byte-identical
lc_same() {
	cmp -s "$1" "$2" || lc_fail "$2 differs from $1"
}
# lc_same_tree A B: B has A's names, contents, modes, mtimes and link
# targets
lc__tree_meta() {
	(cd "$1" && find . -mindepth 1 -printf '%y %p %m %T@ %l\n' | sort)
}
lc_same_tree() {
	diff -r "$1" "$2" >/dev/null || lc_fail "$2 differs from $1"
	diff <(lc__tree_meta "$1") <(lc__tree_meta "$2") >&2 ||
		lc_fail "$2: modes or mtimes differ from $1"
}
# lc_json_check FILE PYTHON: PYTHON's asserts on j, the parsed FILE
lc_json_check() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[2])' "$1" "$2" || lc_fail "--json: $(cat "$1")"
}
lc__lanecp_run() {
	LC_ERR=$LC_SSHD_DIR/lanecp.err
	lc_run_cfg "$LC_SSH_CONFIG" - "$LC_ERR" "$@"
	return "$LC_RC"
}

lc_lanecp() {
	local rc=0
	lc__lanecp_run "$@" || rc=$?
	if [[ $rc != 0 ]]; then
		lc__show "$LC_ERR"
		lc_fail "lanecp $* exited $rc"
	fi
}

lc_lanecp_expect() {
	local want=$1 pat=$2 rc=0
	shift 2
	lc__lanecp_run "$@" || rc=$?
	if [[ $rc != "$want" ]]; then
		lc__show "$LC_ERR"
		lc_fail "lanecp $* exited $rc, expected $want"
	fi
	lc_log_has "$pat" "$LC_ERR"
}

# Pids of processes whose command line contains STRING (from /proc; the
# arguments joined by blanks, one after the last).  Shell builtins only:
# a fork per process took 15 s for 150 processes on a loaded machine, long
# enough for the copy being looked at to end meanwhile.
lc_pids_matching() {
	local p cmd IFS=' '
	local -a args
	for p in /proc/[0-9]*; do
		{ mapfile -d '' -t args <"$p/cmdline"; } 2>/dev/null || continue
		((${#args[@]} > 0)) || continue
		cmd="${args[*]} "
		[[ $cmd == *"$1"* ]] && echo "${p#/proc/}"
	done
	return 0
}

# lc_wait_for PATTERN FILE SECONDS
#   Waits until the extended regex PATTERN shows up in FILE; fails (showing
#   FILE) after SECONDS.
lc_wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	lc__show "$2"
	lc_fail "timed out waiting for /$1/ in $2"
}

# lc_wait_size FILE BYTES SECONDS
#   Waits until FILE holds at least BYTES bytes; fails after SECONDS.
lc_wait_size() {
	local end=$((SECONDS + $3)) n
	while :; do
		n=$(stat -c %s "$1" 2>/dev/null || echo 0)
		((n >= $2)) && return 0
		((SECONDS < end)) || break
		sleep 0.05
	done
	lc_fail "timed out waiting for $1 to reach $2 bytes (has $n)"
}

# lc_wait_no_pids STRING SECONDS
#   Waits until no process's command line contains STRING; fails (naming
#   the pids) after SECONDS.
lc_wait_no_pids() {
	local end=$((SECONDS + $2)) p
	while :; do
		p=$(lc_pids_matching "$1")
		[[ -z $p ]] && return 0
		((SECONDS < end)) || break
		sleep 0.1
	done
	lc_fail "still running $2 s later: $(echo $p) ($1)"
}

lc_kill_stalled_copy() {
	local name=$1 src=$2 dst=$3 fifo=$4 agent=$LC_SSHD_DIR/agent-$1
	local holder copy
	ln -sf "$LANECP" "$agent"
	mkfifo "$fifo"
	sleep 900 <"$fifo" &
	holder=$!
	lc_on_exit "kill $holder"
	"$LANECP" -F "$LC_SSH_CONFIG" -vv -f -T "$agent" "$src" "$dst" \
		2>"$LC_SSHD_DIR/$name.log" &
	copy=$!
	lc_wait_for '[0-9]+ data streams connected' "$LC_SSHD_DIR/$name.log" 60
	[[ -n $(lc_pids_matching "$agent --agent") ]] ||
		lc_fail "$name: no agent process found"
	LC_KILL_T0_MS=$(($(date +%s%N) / 1000000))
	kill -9 "$copy"
	wait "$copy" 2>/dev/null || true
	lc_wait_no_pids "$agent --agent" 60
	kill "$holder" 2>/dev/null || true
}
