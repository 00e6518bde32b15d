#!/usr/bin/env bash
#
# The SSH server matrix of issue 22 ("Tests"): each case its own server on
# a loopback port, each copying push, pull and host to host (-r H:dir
# H:dir2) byte-identical, and asserting the transport --json names
# ("ssh", and on a fallback "ssh_why" with its reason):
#  1. an RSA-only host key server (with only that key in known_hosts):
#     libssh2 1.10 has no rsa-sha2 host keys, lanecp goes over ssh by
#     itself; a server that also has an ed25519 key while known_hosts
#     holds only its RSA key: over ssh as well (ssh connects), not "host
#     key is not known" (without ssh: exit 4 saying why);
#  2. a host certificate, known_hosts only "@cert-authority": over ssh by
#     itself; a host certificate of another CA: exit 4, one line, nothing
#     written;
#  3. a user certificate (TrustedUserCAKeys, the key not in
#     authorized_keys), named by CertificateFile and beside the key: over
#     ssh by itself; an expired one: exit 3, one line;
#  4. KexAlgorithms sntrup761x25519-sha512@openssh.com only: over ssh;
#  5. ControlMaster auto + ControlPersist: a second --ssh copy opens no
#     new TCP connection to the server, --via-ssh one per data stream (its
#     ssh -W bypass the master); the master is stopped at the end;
#  6. dropbear, a second server implementation (under unshare -m with a
#     temp dir over root's home: dropbear reads ~/.ssh/authorized_keys),
#     with libssh2 and with --ssh; the agent is pushed (dropbear's session
#     PATH has no lanecp).
#
set -u -o pipefail
# shellcheck source=lib.sh
. "${LC_SRC_DIR:?}/tests/integration/lib.sh"

command -v ssh >/dev/null || { echo "SKIPPED: no ssh client"; exit 77; }

# shellcheck disable=SC2119
lc_sshd_start
T=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$T/src/sub" "$T/out"
head -c 1500000 /dev/urandom >"$T/src/big"
head -c 1234 /dev/urandom >"$T/src/small"
head -c 77 /dev/urandom >"$T/src/sub/tiny"
SSHD_PATH=$(sed -n 's/^SetEnv SHLVL=1 "PATH=\(.*\)"$/\1/p' "$LC_SSHD_CONFIG")

# run lanecp with config $1, the rest as arguments; status in RC, stderr
# in $T/err, stdout in $T/json (lib.sh: lc_run_cfg)
run() { lc_run_cfg "$1" "$T/json" "$T/err" "${@:2}"; RC=$LC_RC; }
ok() { lc_ok_cfg "$1" "$T/json" "$T/err" "${@:2}"; }
same() { lc_same "$@"; }
# the last run failed with exit $1 and one line matching $2, and wrote
# nothing to $3
fails() {
	[[ $RC == "$1" ]] || { lc__show "$T/err"; lc_fail "$4: exit $RC, want $1"; }
	[[ $(wc -l <"$T/err") == 1 ]] || { lc__show "$T/err"; lc_fail "$4: not one line"; }
	lc_log_has "$2" "$T/err"
	[[ ! -e $3 ]] || lc_fail "$4: $3 was written"
}
# --json of the last run says transport $1 and, unless $2 is empty, an
# ssh_why matching $2
says() {
	grep -q "\"ssh\":\"$1\"" "$T/json" ||
		lc_fail "$3: --json does not say $1: $(cat "$T/json")"
	if [[ -n $2 ]]; then
		grep -Eq "\"ssh_why\":\"[^\"]*$2" "$T/json" ||
			lc_fail "$3: ssh_why is not /$2/: $(cat "$T/json")"
	elif grep -q '"ssh_why":"[^"]' "$T/json"; then
		lc_fail "$3: an ssh_why without a fallback: $(cat "$T/json")"
	fi
}

# copies CFG HOST NAME TRANSPORT WHY [lanecp options]: push, pull and host
# to host, byte-identical, each over TRANSPORT (with WHY as in says)
copies() {
	local cfg=$1 h=$2 what=$3 tr=$4 why=$5
	shift 5
	rm -rf "${T:?}/out"/*
	ok "$cfg" --json "$@" "$T/src/big" "$h:$T/out/push"
	same "$T/src/big" "$T/out/push"
	says "$tr" "$why" "$what push"
	ok "$cfg" --json "$@" "$h:$T/src/small" "$T/out/pull"
	same "$T/src/small" "$T/out/pull"
	says "$tr" "$why" "$what pull"
	ok "$cfg" --json "$@" -r "$h:$T/src" "$h:$T/out/h2h"
	same "$T/src/big" "$T/out/h2h/src/big"
	same "$T/src/small" "$T/out/h2h/src/small"
	same "$T/src/sub/tiny" "$T/out/h2h/src/sub/tiny"
	says "$tr" "$why" "$what h2h"
}

# xsshd NAME [sshd_config line...]: like lc_sshd_extra, with the host keys
# already in $T/NAME (ssh_host_ed25519_key and ssh_host_ecdsa_key, which
# the fixture's config names; more through the lines); sets X_PORT, X_LOG
xsshd() {
	local name=$1 d=$T/$1 extra="" line pid port
	shift
	extra=$'LogLevel DEBUG\n'
	for line in "$@"; do
		extra+="$line"$'\n'
	done
	read -r pid port < <(lc__sshd_run "$d/sshd_config" "$d/sshd.log" \
	    "$SSHD_PATH" "$d" "$extra")
	[[ -n $port ]] || lc_fail "sshd $name did not start"
	lc_on_exit "lc__kill_tree $pid"
	lc_wait_for 'Connection from' "$d/sshd.log" 30
	X_PORT=$port
	X_LOG=$d/sshd.log
}
# hostkeys NAME TYPE...: host keys $T/NAME/ssh_host_TYPE_key
hostkeys() {
	local d=$T/$1 t
	shift
	mkdir -p "$d"
	for t in "$@"; do
		ssh-keygen -q -t "$t" -N '' -C "lanecp-test-$t" \
		    -f "$d/ssh_host_${t}_key" </dev/null ||
			lc_fail "ssh-keygen $t"
	done
}
# known NAME PORT TYPE: a known_hosts line for that key of sshd NAME
known() {
	echo "[127.0.0.1]:$2 $(cut -d' ' -f1,2 "$T/$1/ssh_host_$3_key.pub")"
}

lc_note "1. RSA-only host key: libssh2 has no rsa-sha2 host keys, over ssh"
# only an RSA host key (the fixture's HostKey lines name files not there)
hostkeys rsa rsa
xsshd rsa "HostKey $T/rsa/ssh_host_rsa_key"
lc_log_has 'Unable to load host key: .*ssh_host_ed25519_key' "$X_LOG"
known rsa "$X_PORT" rsa >"$T/rsa.known"
lc_ssh_host_block "$H" "$X_PORT" "$T/rsa.known" >"$T/ssh_config_rsa"
ok "$T/ssh_config_rsa" -v "$T/src/small" "$H:$T/out/rsa1"
same "$T/src/small" "$T/out/rsa1"
lc_log_has 'going over the OpenSSH client' "$T/err"
copies "$T/ssh_config_rsa" "$H" rsa-only openssh 'algorithm in common'

lc_note "1b. known_hosts has only the RSA key of a server with ed25519 too"
hostkeys rsa2 ed25519 ecdsa rsa
xsshd rsa2 "HostKey $T/rsa2/ssh_host_rsa_key"
known rsa2 "$X_PORT" rsa >"$T/rsa2.known"
lc_ssh_host_block "$H" "$X_PORT" "$T/rsa2.known" >"$T/ssh_config_rsa2"
ssh -F "$T/ssh_config_rsa2" "$H" true </dev/null ||
	lc_fail "ssh itself does not connect with only the RSA key known"
copies "$T/ssh_config_rsa2" "$H" rsa-known openssh 'libssh2 cannot ask for'
# without ssh: refused (exit 4), saying why rather than "not known"
RC=0
env PATH=/nonexistent "$LANECP" -F "$T/ssh_config_rsa2" "$T/src/small" \
    "$H:$T/out/rsa2" >"$T/json" 2>"$T/err" || RC=$?
fails 4 'only keys of a type libssh2 .* cannot ask for \(rsa-sha2-512\).*no ssh program' \
    "$T/out/rsa2" "RSA known, no ssh"
lc_log_lacks 'accept-new' "$T/err"

lc_note "2. host certificate, known_hosts only @cert-authority: over ssh"
ssh-keygen -q -t ed25519 -N '' -C lanecp-test-host-ca -f "$T/host_ca" \
    </dev/null || lc_fail "ssh-keygen host CA"
ssh-keygen -q -t ed25519 -N '' -C lanecp-test-other-ca -f "$T/other_ca" \
    </dev/null || lc_fail "ssh-keygen other CA"
hostkeys hcert ed25519 ecdsa
ssh-keygen -q -s "$T/host_ca" -I lanecp-test-host -h -n "127.0.0.1,$H" \
    "$T/hcert/ssh_host_ed25519_key.pub" || lc_fail "signing the host key"
xsshd hcert "HostCertificate $T/hcert/ssh_host_ed25519_key-cert.pub"
echo "@cert-authority [127.0.0.1]:$X_PORT,$H $(cut -d' ' -f1,2 \
    "$T/host_ca.pub")" >"$T/hcert.known"
lc_ssh_host_block "$H" "$X_PORT" "$T/hcert.known" >"$T/ssh_config_hcert"
copies "$T/ssh_config_hcert" "$H" host-cert openssh 'cert-authority'
echo "@cert-authority [127.0.0.1]:$X_PORT,$H $(cut -d' ' -f1,2 \
    "$T/other_ca.pub")" >"$T/hcert_other.known"
lc_ssh_host_block "$H" "$X_PORT" "$T/hcert_other.known" \
    >"$T/ssh_config_hcert_other"
run "$T/ssh_config_hcert_other" "$T/src/small" "$H:$T/out/hc"
fails 4 'Host key verification failed' "$T/out/hc" "host cert of another CA"
run "$T/ssh_config_hcert_other" "$H:$T/src/small" "$T/out/hc"
fails 4 'Host key verification failed' "$T/out/hc" "host cert of another CA (pull)"

lc_note "3. user certificate (TrustedUserCAKeys, key not authorized): over ssh"
ssh-keygen -q -t ed25519 -N '' -C lanecp-test-user-ca -f "$T/user_ca" \
    </dev/null || lc_fail "ssh-keygen user CA"
mkdir -p "$T/ucert"
for k in id_cert id_near id_old; do
	ssh-keygen -q -t ed25519 -N '' -C "lanecp-test-$k" -f "$T/ucert/$k" \
	    </dev/null || lc_fail "ssh-keygen $k"
done
# CertificateFile names it (not KEY-cert.pub)
ssh-keygen -q -s "$T/user_ca" -I lanecp-test-user -n "$LC_USER" \
    -V -5m:+1h "$T/ucert/id_cert.pub" || lc_fail "signing id_cert"
mv "$T/ucert/id_cert-cert.pub" "$T/ucert/cert_of_id_cert.pub"
# KEY-cert.pub beside the key, and no CertificateFile
ssh-keygen -q -s "$T/user_ca" -I lanecp-test-near -n "$LC_USER" \
    -V -5m:+1h "$T/ucert/id_near.pub" || lc_fail "signing id_near"
# expired
ssh-keygen -q -s "$T/user_ca" -I lanecp-test-old -n "$LC_USER" \
    -V 20200101:20200102 "$T/ucert/id_old.pub" || lc_fail "signing id_old"
hostkeys ucert ed25519 ecdsa
xsshd ucert "TrustedUserCAKeys $T/user_ca.pub"
known ucert "$X_PORT" ed25519 >"$T/ucert.known"
{
	lc_ssh_host_block "$H" "$X_PORT" "$T/ucert.known" |
	    grep -v IdentityFile
	echo "    IdentityFile $T/ucert/id_cert"
	echo "    CertificateFile $T/ucert/cert_of_id_cert.pub"
} >"$T/ssh_config_ucert"
copies "$T/ssh_config_ucert" "$H" user-cert openssh 'a CertificateFile'
{
	lc_ssh_host_block "$H" "$X_PORT" "$T/ucert.known" |
	    grep -v IdentityFile
	echo "    IdentityFile $T/ucert/id_near"
} >"$T/ssh_config_unear"
ok "$T/ssh_config_unear" --json "$T/src/small" "$H:$T/out/unear"
same "$T/src/small" "$T/out/unear"
says openssh 'certificate beside the key' "KEY-cert.pub"
{
	lc_ssh_host_block "$H" "$X_PORT" "$T/ucert.known" |
	    grep -v IdentityFile
	echo "    IdentityFile $T/ucert/id_old"
	echo "    BatchMode yes"
} >"$T/ssh_config_uold"
run "$T/ssh_config_uold" "$T/src/small" "$H:$T/out/uold"
fails 3 'Permission denied' "$T/out/uold" "expired user certificate"
lc_log_has 'expired|outside' "$T/ucert/sshd.log"

lc_note "4. KexAlgorithms sntrup761x25519-sha512 only: over ssh"
hostkeys sntrup ed25519 ecdsa
xsshd sntrup "KexAlgorithms sntrup761x25519-sha512@openssh.com"
known sntrup "$X_PORT" ed25519 >"$T/sntrup.known"
lc_ssh_host_block "$H" "$X_PORT" "$T/sntrup.known" >"$T/ssh_config_sntrup"
copies "$T/ssh_config_sntrup" "$H" sntrup openssh 'algorithm in common'

lc_note "5. ControlMaster: a second --ssh copy opens no new connection"
hostkeys cm ed25519 ecdsa
xsshd cm
known cm "$X_PORT" ed25519 >"$T/cm.known"
{
	lc_ssh_host_block "$H" "$X_PORT" "$T/cm.known"
	echo "    ControlMaster auto"
	echo "    ControlPath $T/cm-%C"
	echo "    ControlPersist 60"
} >"$T/ssh_config_cm"
lc_on_exit "ssh -F '$T/ssh_config_cm' -O exit '$H'"
ok "$T/ssh_config_cm" --json --ssh "$T/src/big" "$H:$T/out/cm1"
same "$T/src/big" "$T/out/cm1"
says openssh '' "ControlMaster first"
ssh -F "$T/ssh_config_cm" -O check "$H" 2>"$T/cm.check" ||
	{ lc__show "$T/cm.check"; lc_fail "no ControlMaster after the first copy"; }
conns=$(grep -c 'Connection from' "$X_LOG")
copies "$T/ssh_config_cm" "$H" controlmaster openssh '' --ssh
[[ $(grep -c 'Connection from' "$X_LOG") == "$conns" ]] ||
	lc_fail "ControlMaster: the later copies opened new connections" \
	    "($conns, then $(grep -c 'Connection from' "$X_LOG"))"
# --via-ssh: the control connection through the master, each data stream
# its own TCP connection (ssh -W with ControlPath=none), not a channel of
# the master's one connection
ok "$T/ssh_config_cm" --ssh --via-ssh -s 2 "$T/src/big" "$H:$T/out/cmvia"
same "$T/src/big" "$T/out/cmvia"
[[ $(grep -c 'Connection from' "$X_LOG") == $((conns + 2)) ]] ||
	lc_fail "ControlMaster --via-ssh -s 2: $((conns + 2)) connections" \
	    "expected, $(grep -c 'Connection from' "$X_LOG") seen"
ssh -F "$T/ssh_config_cm" -O exit "$H" 2>/dev/null ||
	lc_fail "ssh -O exit: no master to stop"
lc_wait_no_pids "$T/cm-" 10

lc_note "6. dropbear: libssh2 and --ssh"
DB=$(command -v dropbear || echo /usr/sbin/dropbear)
if [[ ! -x $DB ]] || ! command -v dropbearkey >/dev/null; then
	lc_skip "dropbear not found (install dropbear-bin)"
elif ! unshare -m true 2>/dev/null; then
	lc_skip "unshare -m not permitted here: dropbear needs its own home"
else
	D=$T/dropbear
	mkdir -p "$D/home/.ssh" "$D/cache"
	chmod 0700 "$D/home" "$D/home/.ssh"
	cp "$LC_USER_KEY.pub" "$D/home/.ssh/authorized_keys"
	chmod 0600 "$D/home/.ssh/authorized_keys"
	dropbearkey -t ed25519 -f "$D/host_key" >"$D/keygen.out" 2>&1 ||
		{ lc__show "$D/keygen.out"; lc_fail "dropbearkey"; }
	home=$(getent passwd "$LC_USER" | cut -d: -f6)
	started=
	for ((attempt = 0; attempt < 20; attempt++)); do
		port=$(lc_free_port)
		: >"$D/log"
		# its own mount namespace: the temp home over the real one
		# shellcheck disable=SC2016
		unshare -m sh -c 'mount --bind "$1" "$2" && exec "$3" -F -E \
		    -s -p "127.0.0.1:$4" -r "$5" -P "$6"' sh "$D/home" "$home" \
		    "$DB" "$port" "$D/host_key" "$D/pid" </dev/null \
		    >/dev/null 2>"$D/log" &
		dbpid=$!
		lc_on_exit "lc__kill_tree $dbpid"
		for ((i = 0; i < 100; i++)); do
			if lc__listening "$port"; then
				started=1
				break 2
			fi
			kill -0 "$dbpid" 2>/dev/null || break
			sleep 0.1
		done
		lc__kill_tree "$dbpid"
		grep -q 'in use' "$D/log" || break
	done
	if [[ -z $started ]]; then
		lc__show "$D/log"
		lc_skip "dropbear did not start"
	else
		lc_wait_for 'connection from' "$D/log" 30
		echo "[127.0.0.1]:$port $(dropbearkey -y -f "$D/host_key" |
		    grep '^ssh-')" | cut -d' ' -f1-3 >"$D/known"
		lc_ssh_host_block "$H" "$port" "$D/known" >"$T/ssh_config_db"
		ok "$T/ssh_config_db" -v --json "$T/src/small" "$H:$T/out/db0"
		same "$T/src/small" "$T/out/db0"
		says libssh2 '' "dropbear first"
		lc_log_has 'pushed agent to' "$T/err"
		copies "$T/ssh_config_db" "$H" dropbear libssh2 ''
		copies "$T/ssh_config_db" "$H" "dropbear --ssh" openssh '' --ssh
	fi
fi

lc_note "ok"
