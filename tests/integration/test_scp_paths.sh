#!/usr/bin/env bash
# Remote paths as scp writes them (issue 14), push and pull, a file and a
# tree (-r), through the fixture sshd:
#   * host:~/x and host:~ expand to the remote HOME (set for the remote
#     session with sshd's SetEnv, so the test user's real home is not
#     touched by these), host:~user/x to user's home from the password
#     file (the real one: written under a unique temp directory there);
#   * host: (the login directory) and relative remote paths are relative
#     to the login directory, as scp; host:~ with -r copies the home
#     directory's contents (it has no name of its own to copy to);
#   * host:~nosuchuser/x fails with one line naming it and the remote
#     status (6), and no file is made;
#   * names with spaces and shell characters ($, `, ;, ', ", *, &, |, <,
#     newline-free) travel in the protocol, not through a shell: copied
#     as they are, and nothing they would run if a shell saw them runs;
#   * a local "~" is not expanded (the local shell does that, as with scp).
# A port on the command line (issue 24 item 4), with a client config that
# has no Port line (so port 22 unless the command line says otherwise):
#   * ssh://host:PORT/path push, pull and host to host (relative to the
#     login directory; //abs absolute), a tree with -r, %XX decoded;
#   * -o Port=PORT and -o "Port PORT", over libssh2 and over --ssh (the
#     OpenSSH client gets -p and -o);
#   * host:PORT:path, an unknown or refused -o keyword: exit 2 naming it.
# scp's habits (issue 24 item 5): -P PORT, -l LIMIT (no file made) and
# -c CIPHER each exit 2 naming scp's meaning and lanecp's spelling.
# a literal ~ in quotes is what these tests send (the remote expands it)
# shellcheck disable=SC2088
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"

# HOME for the remote sessions: a directory of our own (sshd's SetEnv is
# applied after it sets HOME from the password file)
rhome=$(mktemp -d)
lc_on_exit rm -rf "$rhome"
# shellcheck disable=SC2034  # read by lc_sshd_start
LC_SSHD_SETENV="\"HOME=$rhome\""
lc_sshd_start
d=$LC_SSHD_DIR
H=$LC_SSH_HOST
"$LC_TOOLS_DIR/lc_sshexec" -F "$LC_SSH_CONFIG" "$H" 'echo "home=$HOME"' \
    >"$d/env.out" 2>&1 || true
if ! grep -qx "home=$rhome" "$d/env.out"; then
	lc__show "$d/env.out"
	lc_fail "sshd's SetEnv HOME did not reach the session"
fi

# the real home of the remote user (the same user): ~user and relative
real_home=$(getent passwd "$LC_USER" | cut -d: -f6)
[[ -n $real_home && -d $real_home ]] || lc_fail "no home for $LC_USER"
sub=$(mktemp -d "$real_home/.lanecp-test-scp-paths.XXXXXX")
lc_on_exit rm -rf "$sub"
rel=${sub#"$real_home"/}

mkdir -p "$d/local/tree/sub" "$d/back"
head -c 300000 /dev/urandom >"$d/local/f"
head -c 5000 /dev/urandom >"$d/local/tree/sub/g"
echo small >"$d/local/tree/s"

lc_note "push to host:~/dir/ and host:~/name"
mkdir -p "$rhome/backups"
lc_lanecp "$d/local/f" "$H:~/backups/"
cmp "$d/local/f" "$rhome/backups/f" || lc_fail "~/backups/ push differs"
lc_lanecp "$d/local/f" "$H:~/backups/renamed"
cmp "$d/local/f" "$rhome/backups/renamed" || lc_fail "~/x push differs"
[[ ! -e "$real_home/backups/renamed" ]] ||
	lc_fail "~ went to the real home, not HOME"
[[ ! -e "$d/local/~" && ! -e "$HOME/~" ]] || lc_fail "a literal ~ was made"

lc_note "pull from host:~/x"
lc_lanecp "$H:~/backups/renamed" "$d/back/"
cmp "$d/local/f" "$d/back/renamed" || lc_fail "~/x pull differs"

lc_note "tree push to host:~ and pull back from host:~/tree"
lc_lanecp -r "$d/local/tree" "$H:~"
diff -r "$d/local/tree" "$rhome/tree" || lc_fail "-r push to ~ differs"
lc_lanecp -r "$H:~/tree" "$d/back/"
diff -r "$d/local/tree" "$d/back/tree" || lc_fail "-r pull of ~/tree differs"

lc_note "push to host: (the login directory) and a relative path"
lc_lanecp "$d/local/f" "$H:$rel/"
cmp "$d/local/f" "$sub/f" || lc_fail "relative push differs"
lc_lanecp -r "$d/local/tree" "$H:$rel"
diff -r "$d/local/tree" "$sub/tree" || lc_fail "relative -r push differs"
lc_lanecp "$H:$rel/f" "$d/back/rel-f"
cmp "$d/local/f" "$d/back/rel-f" || lc_fail "relative pull differs"

lc_note "host:~user/x: the user's home from the password file"
lc_lanecp "$d/local/f" "$H:~$LC_USER/$rel/tilde-user"
cmp "$d/local/f" "$sub/tilde-user" || lc_fail "~user push differs"
lc_lanecp -r "$H:~$LC_USER/$rel/tree" "$d/back/tu/"
diff -r "$d/local/tree" "$d/back/tu/tree" || lc_fail "~user -r pull differs"

lc_note "host:~ with -r copies the home directory's contents"
mkdir -p "$d/home-copy"
lc_lanecp -r "$H:~" "$d/home-copy"
diff -r "$rhome" "$d/home-copy" || lc_fail "-r pull of ~ differs"

lc_note "host: alone is the login directory, push and pull"
uniq=$rel.f
lc_on_exit rm -f "$real_home/$uniq"
cp "$d/local/f" "$d/local/$uniq"
lc_lanecp "$d/local/$uniq" "$H:"
cmp "$d/local/f" "$real_home/$uniq" || lc_fail "push to host: differs"
lc_lanecp "$H:$uniq" "$d/back/"
cmp "$d/local/f" "$d/back/$uniq" || lc_fail "pull from host:NAME differs"

lc_note "~nosuchuser: one line naming it, exit 6, nothing made"
lc_lanecp_expect 6 '~lanecp-no-such-user-x: no such user' \
    "$d/local/f" "$H:~lanecp-no-such-user-x/f"
[[ $(grep -c . "$LC_ERR") == 1 ]] || { lc__show "$LC_ERR"; lc_fail \
    "more than one line for an unknown user"; }
lc_lanecp_expect 6 '~lanecp-no-such-user-x: no such user' \
    "$H:~lanecp-no-such-user-x/f" "$d/back/"

lc_note "names with spaces and shell characters, file and tree"
odd='a b $(touch PWNED) `touch PWNED2`; echo x & y | z <w> '"'"'q'"'"' "dq" *'
mkdir -p "$d/local/odd dir/$odd"
head -c 70000 /dev/urandom >"$d/local/odd dir/$odd/$odd.bin"
cp "$d/local/f" "$d/local/$odd"
lc_lanecp "$d/local/$odd" "$H:~/backups/$odd"
cmp "$d/local/f" "$rhome/backups/$odd" || lc_fail "odd name push differs"
lc_lanecp "$H:~/backups/$odd" "$d/back/$odd"
cmp "$d/local/f" "$d/back/$odd" || lc_fail "odd name pull differs"
lc_lanecp -r "$d/local/odd dir" "$H:$rel/$odd"
diff -r "$d/local/odd dir" "$sub/$odd/odd dir" || lc_fail "odd tree push differs"
lc_lanecp -r "$H:$rel/$odd/odd dir" "$d/back/t $odd"
diff -r "$d/local/odd dir" "$d/back/t $odd/odd dir" ||
	lc_fail "odd tree pull differs"
for w in "$rhome" "$real_home" "$sub" "$d" "$d/back"; do
	[[ ! -e "$w/PWNED" && ! -e "$w/PWNED2" ]] ||
		lc_fail "a shell ran part of a file name (in $w)"
done

lc_note "a local ~ stays literal (the local shell expands it, as scp)"
lc_lanecp_expect 5 "~/lanecp-no-such-file: No such file" \
    "~/lanecp-no-such-file" "$H:~/backups/"

lc_note "ssh://host:PORT/path: push and pull with a config without Port"
P=$LC_SSHD_PORT
lc_ssh_config "$d/noport.cfg" Port=
np() { lc_run_cfg "$d/noport.cfg" - "$d/np.err" "$@"; }
np_ok() {
	np "$@"
	[[ $LC_RC == 0 ]] || { lc__show "$d/np.err"; lc_fail "lanecp $* exited $LC_RC"; }
}
np_expect() {
	local want=$1 pat=$2
	shift 2
	np "$@"
	[[ $LC_RC == "$want" ]] || { lc__show "$d/np.err"; lc_fail \
	    "lanecp $* exited $LC_RC, expected $want"; }
	lc_log_has "$pat" "$d/np.err"
}
np_ok "$d/local/f" "ssh://$H:$P/$rel/url-f"
cmp "$d/local/f" "$sub/url-f" || lc_fail "ssh:// relative push differs"
np_ok "ssh://$LC_USER@$H:$P/$sub/url-f" "$d/back/url-abs"
cmp "$d/local/f" "$d/back/url-abs" || lc_fail "ssh:// //abs pull differs"
np_ok -r "$d/local/tree" "scp://$H:$P/$rel/url%20tree"
diff -r "$d/local/tree" "$sub/url tree/tree" || lc_fail "scp:// -r push differs"
np_ok -r "ssh://$H:$P/$rel/url%20tree/tree" "$d/back/url-tree"
diff -r "$d/local/tree" "$d/back/url-tree/tree" || lc_fail "ssh:// -r pull differs"
np_ok "ssh://$H:$P/$rel/url-f" "scp://$LC_USER@$H:$P/$rel/url-h2h"
cmp "$d/local/f" "$sub/url-h2h" || lc_fail "ssh:// host to host differs"

lc_note "-o Port=PORT and -o 'Port PORT', libssh2 and --ssh"
np_ok -o "Port=$P" "$d/local/f" "$H:$rel/o-f"
cmp "$d/local/f" "$sub/o-f" || lc_fail "-o Port= push differs"
np_ok -o "Port $P" -o StrictHostKeyChecking=yes "$H:$rel/o-f" "$d/back/o-f"
cmp "$d/local/f" "$d/back/o-f" || lc_fail "-o 'Port N' pull differs"
if command -v ssh >/dev/null; then
	np_ok --ssh -o "Port=$P" "$d/local/f" "$H:$rel/o-ssh"
	cmp "$d/local/f" "$sub/o-ssh" || lc_fail "--ssh -o Port= push differs"
	np_ok --ssh "ssh://$H:$P/$rel/o-ssh" "$d/back/o-ssh"
	cmp "$d/local/f" "$d/back/o-ssh" || lc_fail "--ssh ssh:// pull differs"
	# a keyword only ssh knows goes to ssh with --ssh, and ssh judges it
	np_ok --ssh -o Compression=no -o "Port=$P" "$d/local/f" "$H:$rel/o-ssh2"
	np_expect 2 "Bad configuration option" --ssh -o NoSuchKeyword=1 \
	    -o "Port=$P" "$d/local/f" "$H:$rel/o-ssh3"
else
	lc_note "SKIPPED: -o with --ssh (no ssh program)"
fi
np_expect 2 "-o Compression: not an ssh_config keyword lanecp knows" \
    -o Compression=yes "$d/local/f" "$H:$rel/x"
np_expect 2 "-o BindAddress: BindAddress is not supported" \
    -o BindAddress=127.0.0.1 "$d/local/f" "$H:$rel/x"
np_expect 2 "-o Port: bad value for Port: '0'" -o Port=0 "$d/local/f" "$H:$rel/x"
np_expect 2 "a port goes in ssh://\[user@\]host:$P/path" \
    "$d/local/f" "$LC_USER@$H:$P:$rel/x"
np_expect 2 "bad port" "$d/local/f" "ssh://$H:99999/x"
[[ ! -e $sub/x ]] || lc_fail "a refused command line copied"

lc_note "scp habits: -P PORT, -l LIMIT, -c CIPHER"
np_expect 2 "-P $P: lanecp's -P is the progress interval.*-o Port=$P" \
    -P "$P" "$d/local/f" "$H:$rel/x"
(cd "$d" && np_expect 2 "-l 10000: lanecp's -l is a log file.*-x 1250000" \
    -l 10000 "$d/local/f" "$H:$rel/x")
[[ ! -e $d/10000 ]] || lc_fail "-l 10000 made a log file named 10000"
np_expect 2 "-c aes128-gcm@openssh.com: lanecp's -c is compression" \
    -c aes128-gcm@openssh.com "$d/local/f" "$H:$rel/x"
[[ ! -e $sub/x ]] || lc_fail "an scp habit copied"
# bbcp's meanings stay: -P 2 progress lines, -l to an existing name
np_ok -P 2 -o "Port=$P" "$d/local/f" "$H:$rel/p2"
echo >"$d/12345"
(cd "$d" && np_ok -l 12345 -o "Port=$P" "$d/local/f" "$H:$rel/l1")
grep -q "lanecp" "$d/12345" || lc_fail "-l to an existing all-digit file wrote no log"
