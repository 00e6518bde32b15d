#!/usr/bin/env bash
#
# ssh_config keywords lanecp does not implement but that change where or
# how ssh connects (BindAddress, ...) refuse the host before any
# connection: exit 2, one line naming keyword, file, line and host,
# nothing written at the target.  ProxyJump and ProxyCommand are
# implemented (test_proxyjump.sh); here only that they are no longer
# refused, and that inside a Match exec block they still are.  Also the files a user's setup feeds the
# ssh module that fuzzing found bugs in (issue #9): a malformed hashed
# known_hosts line is skipped with a warning, an identity file whose END
# marker overlaps BEGIN is just not a key.
#
set -u -o pipefail
# shellcheck source=lib.sh
. "${LC_SRC_DIR:?}/tests/integration/lib.sh"

# shellcheck disable=SC2119  # no extra PATH dirs: $LANECP's directory
lc_sshd_start
T=$LC_SSHD_DIR
H=$LC_SSH_HOST
mkdir -p "$T/dst" "$T/src"
head -c 300000 /dev/urandom >"$T/src/f"

connections() {
	grep -c 'Connection from' "$LC_SSHD_LOG" || true
}

# refused CFG PATTERN: lanecp with -F CFG exits 2 with PATTERN, makes no
# connection and writes nothing.
refused() {
	local before
	before=$(connections)
	LC_SSH_CONFIG=$1 lc_lanecp_expect 2 "$2" "$T/src/f" "$H:$T/dst/"
	[[ $(wc -l <"$LC_ERR") == 1 ]] || {
		lc__show "$LC_ERR"
		lc_fail "expected one error line"
	}
	[[ -z $(ls -A "$T/dst") ]] || lc_fail "refused copy wrote $(ls -A "$T/dst")"
	[[ $(connections) == "$before" ]] || lc_fail "refused copy connected"
}

lc_note "ProxyJump nosuchjump.invalid: used, not refused: exit 3 naming the jump host"
lc_ssh_config "$T/cfg_jump" ProxyJump=nosuchjump.invalid
before=$(connections)
LC_SSH_CONFIG=$T/cfg_jump lc_lanecp_expect 3 \
	"^lanecp: jump host nosuchjump\.invalid: cannot resolve nosuchjump\.invalid" \
	"$T/src/f" "$H:$T/dst/"
[[ $(connections) == "$before" ]] || lc_fail "copy skipped the jump host"

lc_note "ProxyCommand with a token lanecp cannot expand: exit 2 naming file and line"
lc_ssh_config "$T/cfg_cmd" ProxyCommand="ssh -W '%h:%p' -S %C gw"
refused "$T/cfg_cmd" "$(lc_re "$T/cfg_cmd") line [0-9]+: bad value for ProxyCommand: .*unknown token %C"

lc_note "BindAddress is refused"
lc_ssh_config "$T/cfg_bind" BindAddress=127.0.0.1
line=$(grep -n BindAddress "$T/cfg_bind" | cut -d: -f1)
refused "$T/cfg_bind" "^lanecp: $(lc_re "$T/cfg_bind") line $line: BindAddress is not supported by lanecp .*refusing to connect to $H\$"

lc_note "ProxyJump inside a Match exec block lanecp cannot evaluate: refused"
lc_ssh_config "$T/cfg_exec"
printf 'Match exec true\n    ProxyJump nosuchjump.invalid\n' >>"$T/cfg_exec"
refused "$T/cfg_exec" "ProxyJump inside 'Match exec' \\($(lc_re "$T/cfg_exec") line [0-9]+\\)"

lc_note "ProxyJump none / ProxyCommand none: a direct connection, the copy works"
lc_ssh_config "$T/cfg_none" ProxyJump=none
printf 'Host *\n    ProxyCommand nc %%h %%p\n' >>"$T/cfg_none"
before=$(connections)
LC_SSH_CONFIG=$T/cfg_none lc_lanecp "$T/src/f" "$H:$T/dst/"
# (and the "no connection" checks above can see one)
[[ $(connections) -gt $before ]] || lc_fail "sshd logged no connection"
cmp "$T/src/f" "$T/dst/f" || lc_fail "copy with ProxyJump none differs"
rm -f "$T/dst/f"

lc_note "a hashed known_hosts line with a bad hash is skipped with a warning"
{
	echo '|1|| ssD6NA5d5tkJBrq0D6Ln'
	cat "$LC_KNOWN_HOSTS"
} >"$T/kh_bad"
lc_ssh_config "$T/cfg_kh" UserKnownHostsFile="$T/kh_bad"
LC_SSH_CONFIG=$T/cfg_kh lc_lanecp "$T/src/f" "$H:$T/dst/"
lc_log_has "$(lc_re "$T/kh_bad"):1: malformed hashed host name, line ignored" "$LC_ERR"
cmp "$T/src/f" "$T/dst/f" || lc_fail "copy with a bad known_hosts line differs"
rm -f "$T/dst/f"

lc_note "an identity file whose END marker overlaps BEGIN is not a key"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----END OPENSSH PRIVATE KEY-----' >"$T/id_overlap"
chmod 600 "$T/id_overlap"
lc_lanecp -i "$T/id_overlap" "$T/src/f" "$H:$T/dst/"
cmp "$T/src/f" "$T/dst/f" || lc_fail "copy with a bad -i file differs"
echo PASS
