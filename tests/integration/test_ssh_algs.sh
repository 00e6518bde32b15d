#!/usr/bin/env bash
#
# The algorithms lanecp offers over libssh2 (src/ssh/ssh_algs.c, issue 22
# item 3): ssh's defaults, in ssh's order, less what libssh2 lacks, and
# nothing ssh itself no longer offers.  Real sshds, each allowing one set:
#  * a server that allows only algorithms ssh offers and libssh2 has, but
#    not libssh2's own first choices (aes256-ctr, hmac-sha2-512,
#    diffie-hellman-group16-sha512): the copy works, and -vv names the
#    lists offered;
#  * servers that allow only what libssh2 implements but ssh refuses by
#    default (aes128-cbc; diffie-hellman-group14-sha1): lanecp refuses them
#    as the system's ssh does, never offering a weaker algorithm: it goes
#    over ssh (issue 22 item 2), which says what the server offered (exit
#    3, one line); with no ssh on the PATH, libssh2's line says that no
#    algorithm is in common.
#
set -u -o pipefail
# shellcheck source=lib.sh
. "${LC_SRC_DIR:?}/tests/integration/lib.sh"

# shellcheck disable=SC2119  # no extra PATH dirs: $LANECP's directory
lc_sshd_start
T=$LC_SSHD_DIR

lc_sshd_extra strong "Ciphers aes256-ctr" "MACs hmac-sha2-512" \
    "KexAlgorithms diffie-hellman-group16-sha512"
SPORT=$LC_X_PORT SKNOWN=$LC_X_KNOWN
lc_sshd_extra cbc "Ciphers aes128-cbc"
CPORT=$LC_X_PORT CKNOWN=$LC_X_KNOWN
lc_sshd_extra sha1kex "KexAlgorithms diffie-hellman-group14-sha1"
KPORT=$LC_X_PORT KKNOWN=$LC_X_KNOWN

cat "$LC_KNOWN_HOSTS" >"$T/kh"
printf '%s\n%s\n%s\n' "$SKNOWN" "$CKNOWN" "$KKNOWN" >>"$T/kh"
lc_ssh_config "$T/cfg" UserKnownHostsFile="$T/kh"
{
	lc_ssh_host_block strong "$SPORT" "$T/kh"
	lc_ssh_host_block cbc "$CPORT" "$T/kh"
	lc_ssh_host_block sha1kex "$KPORT" "$T/kh"
} >>"$T/cfg"
export LC_SSH_CONFIG=$T/cfg

mkdir -p "$T/dst"
head -c 1000000 /dev/urandom >"$T/f"

lc_note "ssh's algorithms that libssh2 has, not libssh2's first choices"
lc_lanecp -vv "$T/f" "strong:$T/dst/"
cmp "$T/f" "$T/dst/f" || lc_fail "copy differs"
# (only the offer lines: other debug lines hold hex digests)
grep -E ' (key exchange|cipher|MAC) algorithms: ' "$LC_ERR" >"$T/offers"
lc_log_has "cipher algorithms: aes128-ctr,aes192-ctr,aes256-ctr" "$T/offers"
lc_log_lacks "cbc|arcfour|3des|blowfish" "$T/offers"
lc_log_has "key exchange algorithms: curve25519-sha256," "$T/offers"
lc_log_lacks "group14-sha1|group1-sha1|exchange-sha1" "$T/offers"
lc_log_has "MAC algorithms: .*hmac-sha2-256" "$T/offers"
lc_log_lacks "hmac-md5|ripemd" "$T/offers"
lc_log_has "cipher aes256-ctr" "$LC_ERR"

for hp in cbc:$CPORT sha1kex:$KPORT; do
	h=${hp%:*}
	lc_note "$h: refused as ssh refuses it"
	if ssh -F "$T/cfg" -o BatchMode=yes "$h" true </dev/null \
	    >"$T/ssh.out" 2>&1; then
		lc_fail "the system's ssh connected to $h: the test's premise is wrong"
	fi
	rm -f "$T/dst/f"
	# lanecp tries ssh (issue 22 item 2), which refuses it too and
	# says what the server offered
	lc_lanecp_expect 3 "port ${hp#*:}: no matching (cipher|key exchange method) found\. Their offer: " \
	    "$T/f" "$h:$T/dst/"
	[[ $(grep -c . "$LC_ERR") == 1 ]] || {
		lc__show "$LC_ERR"
		lc_fail "$h: expected one line"
	}
	[[ ! -e $T/dst/f ]] || lc_fail "$h: a file was written"
	# with no ssh, libssh2's own line
	rc=0
	env PATH=/nonexistent "$LANECP" -F "$LC_SSH_CONFIG" "$T/f" \
	    "$h:$T/dst/" 2>"$T/err" || rc=$?
	[[ $rc == 3 && $(grep -c . "$T/err") == 1 ]] || {
		lc__show "$T/err"
		lc_fail "$h, no ssh: exit $rc, want 3 and one line"
	}
	lc_log_has "port ${hp#*:}: the server and libssh2 .* have no key exchange, cipher or MAC algorithm in common.*no ssh program is on the PATH" "$T/err"
	[[ ! -e $T/dst/f ]] || lc_fail "$h: a file was written"
done
echo "PASS"
