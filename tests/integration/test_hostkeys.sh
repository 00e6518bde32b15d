#!/usr/bin/env bash
#
# Host keys that known_hosts marks, and RevokedHostKeys (issue 20 item 3),
# with real copies against the fixture sshd:
#  * a key marked @revoked is refused (exit 4, one line naming file and
#    line, nothing written, no authentication) in the user's file and in
#    the system file (GlobalKnownHostsFile, a temp file here: the real
#    /etc/ssh is never touched), next to a plain line for the same key or
#    alone, with hashed, wildcard and other hosts' patterns (lanecp matches
#    @revoked lines by key), under StrictHostKeyChecking yes, accept-new
#    (nothing recorded) and no, and for a jump host;
#  * RevokedHostKeys: a key list and KRLs made by ssh-keygen -k (explicit
#    key, SHA-1 and SHA-256 hashes, a certificate section) revoke the key,
#    other keys do not; a missing or malformed file refuses every host
#    (exit 4) as ssh does; "none" turns it off; inside a Match block
#    lanecp cannot evaluate it is refused (exit 2);
#  * @cert-authority lines: a host they cover whose key is not otherwise
#    known is refused with a line saying that a CA vouches for its keys
#    and that lanecp cannot check certificates (no accept-new hint); under
#    accept-new its plain key is recorded, as ssh does, with a warning.
#
set -u -o pipefail
# shellcheck source=lib.sh
. "${LC_SRC_DIR:?}/tests/integration/lib.sh"

# shellcheck disable=SC2119  # no extra PATH dirs: $LANECP's directory
lc_sshd_start
T=$LC_SSHD_DIR
H=$LC_SSH_HOST
NAME="[127.0.0.1]:$LC_SSHD_PORT"
KEY=$(cut -d' ' -f1,2 "$LC_HOST_KEY")
KEY_ECDSA=$(cut -d' ' -f1,2 "$LC_HOST_KEY_ECDSA")
FP=$(lc_re "$(ssh-keygen -lf "$LC_HOST_KEY" | awk '{print $2}')")
RNAME=$(lc_re "$NAME")
mkdir -p "$T/src" "$T/dst"
head -c 200000 /dev/urandom >"$T/src/f"

# the user's and the system file for most cases
echo "$NAME $KEY" >"$T/plain"
echo "@revoked $NAME $KEY" >"$T/revoked"

accepted() {
	grep -c 'Accepted publickey' "$LC_SSHD_LOG" || true
}

# refused CODE PATTERN CFG: lanecp with -F CFG exits CODE with PATTERN on
# its only line, writes nothing and never authenticates.
refused() {
	local before
	before=$(accepted)
	LC_SSH_CONFIG=$3 lc_lanecp_expect "$1" "$2" "$T/src/f" "$H:$T/dst/"
	printf '    %s\n' "$(cat "$LC_ERR")"
	[[ $(wc -l <"$LC_ERR") == 1 ]] || {
		lc__show "$LC_ERR"
		lc_fail "expected one error line"
	}
	[[ -z $(ls -A "$T/dst") ]] || lc_fail "refused copy wrote $(ls -A "$T/dst")"
	[[ $(accepted) == "$before" ]] || lc_fail "refused copy authenticated"
}

# refused_nossh CODE PATTERN CFG: refused as above with no ssh program on
# lanecp's PATH (libssh2's own refusal, not the OpenSSH client's)
refused_nossh() {
	local before rc=0
	before=$(accepted)
	env PATH=/nonexistent "$LANECP" -F "$3" "$T/src/f" "$H:$T/dst/" \
	    2>"$T/nossh.err" || rc=$?
	printf '    %s\n' "$(cat "$T/nossh.err")"
	[[ $rc == "$1" ]] || {
		lc__show "$T/nossh.err"
		lc_fail "no ssh: exit $rc, expected $1"
	}
	lc_log_has "$2" "$T/nossh.err"
	[[ $(wc -l <"$T/nossh.err") == 1 ]] || {
		lc__show "$T/nossh.err"
		lc_fail "expected one error line"
	}
	[[ -z $(ls -A "$T/dst") ]] || lc_fail "refused copy wrote $(ls -A "$T/dst")"
	[[ $(accepted) == "$before" ]] || lc_fail "refused copy authenticated"
}

# copies CFG: the copy works with -F CFG
copies() {
	LC_SSH_CONFIG=$1 lc_lanecp "$T/src/f" "$H:$T/dst/"
	cmp "$T/src/f" "$T/dst/f" || lc_fail "copy differs"
	rm -f "$T/dst/f"
}

# revoked_msg FILE LINE: the pattern of the refusal
revoked_msg() {
	printf '^lanecp: REVOKED HOST KEY for %s: server offers ED25519 key %s, which %s line %s marks as revoked' \
	    "$RNAME" "$FP" "$(lc_re "$1")" "$2"
}

lc_note "@revoked in the system file, the plain line in the user's: refused"
lc_ssh_config "$T/cfg_sys" UserKnownHostsFile="$T/plain" \
	GlobalKnownHostsFile="$T/revoked"
refused 4 "$(revoked_msg "$T/revoked" 1)" "$T/cfg_sys"

lc_note "@revoked in the user's file, the plain line in the system file: refused"
{ echo "# revoked by the user"; echo "@revoked $NAME $KEY"; } >"$T/user_rev"
lc_ssh_config "$T/cfg_user" UserKnownHostsFile="$T/user_rev" \
	GlobalKnownHostsFile="$T/plain"
refused 4 "$(revoked_msg "$T/user_rev" 2)" "$T/cfg_user"

lc_note "@revoked after the plain line in the same file: refused"
cat "$T/plain" "$T/revoked" >"$T/both"
lc_ssh_config "$T/cfg_both" UserKnownHostsFile="$T/both"
refused 4 "$(revoked_msg "$T/both" 2)" "$T/cfg_both"

lc_note "only the @revoked line: revoked, not 'not known', no accept-new hint"
lc_ssh_config "$T/cfg_only" UserKnownHostsFile="$T/revoked"
refused 4 "$(revoked_msg "$T/revoked" 1)" "$T/cfg_only"
lc_log_lacks "not known|accept-new" "$LC_ERR"

lc_note "accept-new with a revoked key: refused, nothing recorded"
cp "$T/revoked" "$T/an_rev"
lc_ssh_config "$T/cfg_an" UserKnownHostsFile="$T/an_rev" \
	StrictHostKeyChecking=accept-new
refused 4 "$(revoked_msg "$T/an_rev" 1)" "$T/cfg_an"
cmp -s "$T/an_rev" "$T/revoked" || lc_fail "accept-new recorded a revoked key"
: >"$T/an_empty"
lc_ssh_config "$T/cfg_an2" UserKnownHostsFile="$T/an_empty" \
	GlobalKnownHostsFile="$T/revoked" StrictHostKeyChecking=accept-new
refused 4 "$(revoked_msg "$T/revoked" 1)" "$T/cfg_an2"
[[ ! -s $T/an_empty ]] || lc_fail "accept-new recorded a revoked key"

lc_note "StrictHostKeyChecking no with a revoked key: refused too"
lc_ssh_config "$T/cfg_no" UserKnownHostsFile="$T/both" \
	StrictHostKeyChecking=no
refused 4 "$(revoked_msg "$T/both" 2)" "$T/cfg_no"

# hashed MARKER KEY...: "MARKER |1|salt|hash KEY" for NAME (ssh-keygen -H
# leaves marker lines alone: hash a plain line, then add the marker)
hashed() {
	local m=$1 f=$T/hashed.tmp
	shift
	echo "$NAME $*" >"$f"
	ssh-keygen -q -H -f "$f" >/dev/null 2>&1 || lc_fail "ssh-keygen -H failed"
	grep -q '^|1|' "$f" || lc_fail "not hashed: $(cat "$f")"
	printf '%s %s\n' "$m" "$(cat "$f")"
	rm -f "$f" "$f.old"
}

lc_note "@revoked with a hashed host name: refused"
hashed @revoked "$KEY" >"$T/rev_hashed"
lc_ssh_config "$T/cfg_hashed" UserKnownHostsFile="$T/plain" \
	GlobalKnownHostsFile="$T/rev_hashed"
refused 4 "$(revoked_msg "$T/rev_hashed" 1)" "$T/cfg_hashed"

lc_note "@revoked with a wildcard and with another host's name: matched by key"
echo "@revoked * $KEY" >"$T/rev_star"
lc_ssh_config "$T/cfg_star" UserKnownHostsFile="$T/plain" \
	GlobalKnownHostsFile="$T/rev_star"
refused 4 "$(revoked_msg "$T/rev_star" 1)" "$T/cfg_star"
echo "@revoked other.example.org,!$NAME $KEY" >"$T/rev_other"
lc_ssh_config "$T/cfg_other" UserKnownHostsFile="$T/plain" \
	GlobalKnownHostsFile="$T/rev_other"
refused 4 "$(revoked_msg "$T/rev_other" 1)" "$T/cfg_other"

lc_note "another key revoked (the ECDSA one, a malformed line): the copy works"
{
	echo "@revoked * $KEY_ECDSA"
	echo "@revoked * ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA"
	echo "@revoked"
} >"$T/rev_ecdsa"
lc_ssh_config "$T/cfg_ecdsa" UserKnownHostsFile="$T/plain" \
	GlobalKnownHostsFile="$T/rev_ecdsa"
copies "$T/cfg_ecdsa"
lc_log_has "$(lc_re "$T/rev_ecdsa") line 2: cannot read the key of this @revoked line, ignored" "$LC_ERR"

lc_note "accept-new records a new key when only an old one is revoked (as ssh)"
: >"$T/an_new"
lc_ssh_config "$T/cfg_an_new" UserKnownHostsFile="$T/an_new" \
	GlobalKnownHostsFile="$T/rev_ecdsa" StrictHostKeyChecking=accept-new
copies "$T/cfg_an_new"
grep -qxF "$NAME $KEY" "$T/an_new" || lc_fail "accept-new did not record the key"

# --- RevokedHostKeys ---

lc_note "RevokedHostKeys: a key list with the host key"
{
	echo "# revoked host keys"
	echo ""
	echo "$KEY_ECDSA old ecdsa key"
	echo "  $KEY   the test host"
} >"$T/revlist"
lc_ssh_config "$T/cfg_rl" RevokedHostKeys="$T/revlist"
refused 4 "^lanecp: REVOKED HOST KEY for $RNAME: server offers ED25519 key $FP, which RevokedHostKeys $(lc_re "$T/revlist") line 4 lists" "$T/cfg_rl"
lc_ssh_config "$T/cfg_rl_no" RevokedHostKeys="$T/revlist" \
	StrictHostKeyChecking=no
refused 4 "REVOKED HOST KEY" "$T/cfg_rl_no"

lc_note "RevokedHostKeys: other keys only, an empty file, none: the copy works"
grep -v "$KEY" "$T/revlist" >"$T/revlist_other"
lc_ssh_config "$T/cfg_rl_other" RevokedHostKeys="$T/revlist_other"
copies "$T/cfg_rl_other"
: >"$T/revlist_empty"
lc_ssh_config "$T/cfg_rl_empty" RevokedHostKeys="$T/revlist_empty"
copies "$T/cfg_rl_empty"
lc_ssh_config "$T/cfg_rl_none" RevokedHostKeys=none
printf 'Host *\n    RevokedHostKeys %s\n' "$T/revlist" >>"$T/cfg_rl_none"
copies "$T/cfg_rl_none"

lc_note "RevokedHostKeys missing, a directory or malformed: every host refused (as ssh)"
lc_ssh_config "$T/cfg_rl_missing" RevokedHostKeys="$T/no_such_file"
refused 4 "^lanecp: cannot check the host key of $RNAME against RevokedHostKeys $(lc_re "$T/no_such_file"): .*No such file or directory" "$T/cfg_rl_missing"
lc_ssh_config "$T/cfg_rl_dir" RevokedHostKeys="$T/dst"
refused 4 "RevokedHostKeys $(lc_re "$T/dst"): .*directory" "$T/cfg_rl_dir"
{ echo "$KEY_ECDSA"; echo "$NAME $KEY"; } >"$T/revlist_bad"
lc_ssh_config "$T/cfg_rl_bad" RevokedHostKeys="$T/revlist_bad"
refused 4 "RevokedHostKeys $(lc_re "$T/revlist_bad") line 2: not a public key" "$T/cfg_rl_bad"

lc_note "RevokedHostKeys: KRLs from ssh-keygen -k"
krl() {
	local out=$1
	shift
	ssh-keygen -k -f "$out" "$@" >/dev/null 2>&1 || lc_fail "ssh-keygen -k $*"
	[[ $(head -c 6 "$out") == SSHKRL ]] || lc_fail "$out is not a KRL"
}
krl "$T/krl_key" "$LC_HOST_KEY"
lc_ssh_config "$T/cfg_krl" RevokedHostKeys="$T/krl_key"
refused 4 "^lanecp: REVOKED HOST KEY for $RNAME: server offers ED25519 key $FP, which the RevokedHostKeys KRL $(lc_re "$T/krl_key") revokes" "$T/cfg_krl"
for how in sha1 sha256; do
	echo "$how: $KEY" >"$T/spec_$how"
	krl "$T/krl_$how" "$T/spec_$how"
	lc_ssh_config "$T/cfg_krl_$how" RevokedHostKeys="$T/krl_$how"
	refused 4 "which the RevokedHostKeys KRL $(lc_re "$T/krl_$how") revokes" "$T/cfg_krl_$how"
done
echo "hash: $(ssh-keygen -lf "$LC_HOST_KEY" | awk '{print $2}')" >"$T/spec_hash"
krl "$T/krl_hash" "$T/spec_hash"
lc_ssh_config "$T/cfg_krl_hash" RevokedHostKeys="$T/krl_hash"
refused 4 "which the RevokedHostKeys KRL" "$T/cfg_krl_hash"
# the ECDSA key by key, SHA-1 and SHA-256, and certificates by id: not ours
ssh-keygen -q -t ed25519 -N '' -f "$T/ca" </dev/null
{
	echo "key: $KEY_ECDSA"
	echo "sha1: $KEY_ECDSA"
	echo "sha256: $KEY_ECDSA"
	echo "id: some-host"
	echo "serial: 5-9"
} >"$T/spec_other"
krl "$T/krl_other" -s "$T/ca.pub" "$T/spec_other"
ssh-keygen -Q -f "$T/krl_other" "$LC_HOST_KEY" >/dev/null 2>&1 ||
	lc_fail "ssh-keygen says krl_other revokes the host key"
lc_ssh_config "$T/cfg_krl_other" RevokedHostKeys="$T/krl_other"
copies "$T/cfg_krl_other"
# a KRL cut short
head -c 40 "$T/krl_key" >"$T/krl_short"
lc_ssh_config "$T/cfg_krl_short" RevokedHostKeys="$T/krl_short"
refused 4 "RevokedHostKeys $(lc_re "$T/krl_short"): .*malformed KRL" "$T/cfg_krl_short"

lc_note "RevokedHostKeys inside a Match block lanecp cannot evaluate: refused"
lc_ssh_config "$T/cfg_rl_exec"
printf 'Match exec true\n    RevokedHostKeys %s\n' "$T/revlist" >>"$T/cfg_rl_exec"
refused 2 "RevokedHostKeys inside 'Match exec'" "$T/cfg_rl_exec"

# --- @cert-authority ---

CA_LINE="@cert-authority [127.0.0.?]:$LC_SSHD_PORT $(cut -d' ' -f1,2 "$T/ca.pub")"
lc_note "@cert-authority only: lanecp goes over ssh, which checks host certificates (the host has none): refused"
{ echo "# our CA"; echo "$CA_LINE"; } >"$T/ca_kh"
: >"$T/ca_user"
lc_ssh_config "$T/cfg_ca" UserKnownHostsFile="$T/ca_user" \
	GlobalKnownHostsFile="$T/ca_kh"
refused 4 "Host key verification failed" "$T/cfg_ca"
LC_SSH_CONFIG=$T/cfg_ca lc_lanecp_expect 4 "known_hosts vouches for it only through @cert-authority, and libssh2 cannot check host certificates; going over the OpenSSH client" \
    -v "$T/src/f" "$H:$T/dst/"
[[ ! -s $T/ca_user ]] || lc_fail "a key was recorded"

lc_note "@cert-authority only, no ssh: refused, naming the CA line, no accept-new hint"
refused_nossh 4 "^lanecp: host key for $RNAME is vouched for by a certificate authority \(@cert-authority in $(lc_re "$T/ca_kh") line 2\), and lanecp cannot check host certificates yet; the host offers ED25519 key $FP: add it to $(lc_re "$T/ca_user") once you have checked it.*no ssh program is on the PATH" "$T/cfg_ca"
lc_log_lacks "accept-new|not known" "$T/nossh.err"

lc_note "@cert-authority with a hashed host name: the same"
hashed @cert-authority "$(cut -d' ' -f1,2 "$T/ca.pub")" >"$T/ca_h"
lc_ssh_config "$T/cfg_ca_h" UserKnownHostsFile="$T/ca_user" \
	GlobalKnownHostsFile="$T/ca_h"
refused 4 "Host key verification failed" "$T/cfg_ca_h"
refused_nossh 4 "certificate authority \(@cert-authority in $(lc_re "$T/ca_h") line 1\)" "$T/cfg_ca_h"

lc_note "@cert-authority and the host's plain key: the copy works"
lc_ssh_config "$T/cfg_ca_plain" UserKnownHostsFile="$T/plain" \
	GlobalKnownHostsFile="$T/ca_kh"
copies "$T/cfg_ca_plain"

lc_note "@cert-authority for other hosts only: the usual 'not known'"
echo "@cert-authority *.example.org $(cut -d' ' -f1,2 "$T/ca.pub")" >"$T/ca_other"
lc_ssh_config "$T/cfg_ca_other" UserKnownHostsFile="$T/ca_user" \
	GlobalKnownHostsFile="$T/ca_other"
refused 4 "host key for $RNAME is not known" "$T/cfg_ca_other"

lc_note "@cert-authority under accept-new: the plain key is recorded (as ssh), with a warning"
lc_ssh_config "$T/cfg_ca_an" UserKnownHostsFile="$T/ca_user" \
	GlobalKnownHostsFile="$T/ca_kh" StrictHostKeyChecking=accept-new
copies "$T/cfg_ca_an"
lc_log_has "$RNAME is vouched for by a certificate authority \(@cert-authority in $(lc_re "$T/ca_kh") line 2\), and lanecp cannot check host certificates; accepting its ED25519 key $FP on first use \(StrictHostKeyChecking accept-new\)" "$LC_ERR"
grep -qxF "$NAME $KEY" "$T/ca_user" || lc_fail "accept-new did not record the key"

# --- jump hosts ---

lc_sshd_extra bastion
BKEY=$(cut -d' ' -f1,2 "$LC_SSHD_DIR/bastion/ssh_host_ed25519_key.pub")
BNAME=$(lc_re "[127.0.0.1]:$LC_X_PORT")
printf '%s\n' "$LC_X_KNOWN" "$NAME $KEY" >"$T/kh_jump"
mkjump() {
	local out=$1 global=$2
	lc_ssh_config "$out" UserKnownHostsFile="$T/kh_jump" \
		GlobalKnownHostsFile="$global"
	lc_ssh_host_block bastion "$LC_X_PORT" "$T/kh_jump" |
	    sed "s|GlobalKnownHostsFile .*|GlobalKnownHostsFile $global|" >>"$out"
}

lc_note "through a jump host whose keys are fine: the copy works"
mkjump "$T/cfg_jump_ok" /dev/null
LC_SSH_CONFIG=$T/cfg_jump_ok lc_lanecp -J bastion "$T/src/f" "$H:$T/dst/"
cmp "$T/src/f" "$T/dst/f" || lc_fail "copy through the bastion differs"
rm -f "$T/dst/f"

lc_note "a jump host with a revoked key: refused, naming the jump host"
echo "@revoked * $BKEY" >"$T/rev_bastion"
mkjump "$T/cfg_jump_rev" "$T/rev_bastion"
LC_SSH_CONFIG=$T/cfg_jump_rev lc_lanecp_expect 4 "^lanecp: jump host bastion: REVOKED HOST KEY for $BNAME: .*$(lc_re "$T/rev_bastion") line 1 marks as revoked" \
	-J bastion "$T/src/f" "$H:$T/dst/"
[[ $(wc -l <"$LC_ERR") == 1 ]] || { lc__show "$LC_ERR"; lc_fail "expected one error line"; }
[[ -z $(ls -A "$T/dst") ]] || lc_fail "refused copy wrote $(ls -A "$T/dst")"

lc_note "the target's key revoked, reached through a jump host: refused"
mkjump "$T/cfg_jump_trev" "$T/revoked"
LC_SSH_CONFIG=$T/cfg_jump_trev lc_lanecp_expect 4 "$(revoked_msg "$T/revoked" 1)" \
	-J bastion "$T/src/f" "$H:$T/dst/"
[[ -z $(ls -A "$T/dst") ]] || lc_fail "refused copy wrote $(ls -A "$T/dst")"

lc_note "all host key marker checks passed"
