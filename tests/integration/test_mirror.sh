#!/usr/bin/env bash
# Mirrors (issue 24): --exclude/--include, -n and --delete over the real
# sshd, pushed to $H: and pulled back.
#
# The round trip: copy a tree with -r -p --exclude '*.tmp'; then at the
# source chmod files (one with its content, one alone: -u skips it for its
# data, -p gives it the mode), move a file's mtime by nanoseconds only,
# delete files, add files, a new excluded *.tmp, remove a directory; at
# the replica an excluded file that --delete must keep.  `-n` lists
# exactly the lines the real run's -v deletions, attribute refreshes and
# copies then name, changes nothing; `-r -p -u --delete --exclude '*.tmp'`
# converges the replica: diff -r and type, mode, mtime and link target
# of every entry equal the source's (the excluded files aside).  Then
# --delete-excluded removes the excluded names too (after -n lists them);
# --max-delete refuses and deletes nothing; a failed copy deletes nothing;
# a symlink in the replica is deleted as a link, never followed.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
umask 022
lc_sshd_start

d=$LC_SSHD_DIR
H=$LC_SSH_HOST

# meta DIR: one line per entry below DIR, the excluded *.tmp names left
# out: type, name, mode, mtime (files and directories) and link target.
meta() {
	python3 - "$1" <<'EOF'
import os, stat, sys
root = sys.argv[1]
out = []
for d, dirs, files in os.walk(root):
    for n in dirs + files:
        p = os.path.join(d, n)
        if n.endswith('.tmp'):
            continue
        st = os.lstat(p)
        rel = os.path.relpath(p, root)
        if stat.S_ISLNK(st.st_mode):
            out.append('l %s -> %s' % (rel, os.readlink(p)))
        else:
            out.append('%s %s %o %d' % ('d' if stat.S_ISDIR(st.st_mode)
                else 'f', rel, stat.S_IMODE(st.st_mode), st.st_mtime))
print('\n'.join(sorted(out)))
EOF
}

src=$d/src
rep=$d/rep
mkdir -p "$src/a/b" "$src/gone/sub" "$src/keepdir"
echo one >"$src/a/one"
echo two >"$src/a/b/two"
echo three >"$src/three"
echo scratch >"$src/a/scratch.tmp"
echo g >"$src/gone/sub/g"
echo k >"$src/keepdir/k"
ln -s a/one "$src/link"
chmod 0750 "$src/a/b"

lc_note "first copy, *.tmp excluded"
lc_lanecp -q -r -p --exclude '*.tmp' "$src/" "$H:$rep"
[[ -e $rep/a/one && ! -e $rep/a/scratch.tmp ]] ||
	lc_fail "--exclude '*.tmp' was copied, or a/one was not"
[[ $(readlink "$rep/link") == a/one ]] || lc_fail "link not copied"

lc_note "an excluded directory is left out, and what is in it"
mkdir -p "$src/cache"
echo c >"$src/cache/c"
lc_lanecp -q -r -p --exclude 'cache/' --exclude '*.tmp' "$src/" "$H:$d/rep2"
[[ ! -e $d/rep2/cache ]] || lc_fail "cache/ was copied"
rm -rf "$src/cache" "$d/rep2"

# changes at the source, and an excluded file at the replica
echo one, longer >"$src/a/one"
chmod 0600 "$src/a/one"
touch -d '2001-02-03 04:05:06' "$src/a/one"
rm "$src/three"
rm -r "$src/gone"
echo new >"$src/a/b/new"
# attributes only: -u leaves the data, -p refreshes the mode, the times
chmod 0600 "$src/a/b/two"
touch -d "@$(stat -c %Y "$src/keepdir/k").25" "$src/keepdir/k"
mkdir "$src/newdir"
echo n >"$src/newdir/n"
echo scratch2 >"$src/newdir/more.tmp"
echo replica-only >"$rep/keepdir/local.tmp"
# an unlisted directory holding an excluded file stays (with that file)
mkdir -p "$rep/olddir"
echo o >"$rep/olddir/o"
echo keep >"$rep/olddir/keep.tmp"

lc_note "-n: what would change, nothing changed"
before=$(meta "$rep"; find "$rep" -printf '%P %T@\n' | sort)
lc_lanecp -n -r -p -u --delete --exclude '*.tmp' "$src/" "$H:$rep" >"$d/dry.out"
after=$(meta "$rep"; find "$rep" -printf '%P %T@\n' | sort)
[[ $before == "$after" ]] || lc_fail "-n changed the replica"
LC_ALL=C sort "$d/dry.out" >"$d/dry.sorted"
cat >"$d/dry.want" <<'EOF'
attrs a/b/two
attrs keepdir/k
delete gone/
delete gone/sub/
delete gone/sub/g
delete olddir/o
delete three
new a/b/new
new newdir/
new newdir/n
update a/one
EOF
diff "$d/dry.want" "$d/dry.sorted" >"$d/dry.diff" ||
	{ lc__show "$d/dry.diff"; lc_fail "-n listed something else"; }
# deepest first: a directory after what it holds
grep -n '^delete gone/sub/g$' "$d/dry.out" | cut -d: -f1 >"$d/l1"
grep -n '^delete gone/$' "$d/dry.out" | cut -d: -f1 >"$d/l2"
(($(cat "$d/l1") < $(cat "$d/l2"))) || lc_fail "-n: gone/ before gone/sub/g"

lc_note "--max-delete 4: refused, nothing deleted (the copy is made)"
lc_lanecp_expect 23 'max-delete 4: 5 entries would be deleted' \
    -v -r -p -u --delete --max-delete 4 --exclude '*.tmp' --json "$src/" \
    "$H:$rep" >"$d/maxdel.json"
[[ -e $rep/three && -e $rep/gone/sub/g ]] || lc_fail "--max-delete deleted"
# the files -n said "attrs" of are the ones this real run refreshed
sed -n 's/^.* \([^ ]*\): up to date, .* updated$/attrs \1/p' "$LC_ERR" |
    LC_ALL=C sort >"$d/real.attrs"
grep '^attrs ' "$d/dry.sorted" | diff - "$d/real.attrs" >"$d/real.diff" ||
	{ lc__show "$d/real.diff"; lc_fail "attribute refreshes differ from -n's"; }
# it copied (the deletions come after): -n's "update" is its "updated",
# -n's new files its "copied"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert (j["copied"], j["updated"]) == (2, 1), j' "$d/maxdel.json" ||
	lc_fail "--json: not 2 copied (a/b/new, newdir/n) and 1 updated (a/one): $(cat "$d/maxdel.json")"
lc_log_has '^lanecp: a/one: updated, [0-9]+ bytes$' "$LC_ERR"
lc_log_has '^lanecp: a/b/new: done, [0-9]+ bytes$' "$LC_ERR"

lc_note "the real run does what -n said"
lc_lanecp -v -r -p -u --delete --max-delete 5 --exclude '*.tmp' --json \
    "$src/" "$H:$rep" >"$d/real.json"
grep -o 'deleting [^ ]*' "$LC_ERR" | sed 's/^deleting /delete /' | sort >"$d/real.del"
grep '^delete ' "$d/dry.sorted" | diff - "$d/real.del" >"$d/real.diff" ||
	{ lc__show "$d/real.diff"; lc_fail "deletions differ from -n's"; }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["deleted"] == 5, j; assert "three" in j["deleted_names"], j' "$d/real.json" ||
	lc_fail "--json does not count or name the deletions: $(cat "$d/real.json")"
[[ $(stat -c %y "$src/keepdir/k") == "$(stat -c %y "$rep/keepdir/k")" ]] ||
	lc_fail "keepdir/k: its mtime's nanoseconds were not refreshed"
[[ -e $rep/keepdir/local.tmp && -e $rep/olddir/keep.tmp ]] ||
	lc_fail "an excluded file was deleted"
diff -r -x '*.tmp' -x olddir --no-dereference "$src" "$rep" >"$d/diff" ||
	{ lc__show "$d/diff"; lc_fail "the replica differs"; }
diff <(meta "$src") <(meta "$rep" | grep -v ' olddir') >"$d/meta.diff" ||
	{ lc__show "$d/meta.diff"; lc_fail "metadata differ"; }

lc_note "converged: -n lists nothing, a second run deletes nothing"
lc_lanecp -n -r -p -u --delete --exclude '*.tmp' "$src/" "$H:$rep" >"$d/dry2.out"
[[ ! -s $d/dry2.out ]] || { lc__show "$d/dry2.out"; lc_fail "-n after convergence"; }
lc_lanecp -n --json -r -p -u --delete --exclude '*.tmp' "$src/" "$H:$rep" >"$d/dry2.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["dry_attrs"] == 0 and j["dry_new"] == 0, j' "$d/dry2.json" ||
	lc_fail "-n --json after convergence counts something: $(cat "$d/dry2.json")"

lc_note "--delete-excluded: -n lists the excluded names at the target, the run deletes them"
lc_lanecp -n -r -p -u --delete-excluded --exclude '*.tmp' "$src/" "$H:$rep" >"$d/dry4.out"
LC_ALL=C sort "$d/dry4.out" >"$d/dry4.sorted"
printf '%s\n' 'delete keepdir/local.tmp' 'delete olddir/' 'delete olddir/keep.tmp' |
    diff - "$d/dry4.sorted" >"$d/dry4.diff" ||
	{ lc__show "$d/dry4.diff"; lc_fail "-n --delete-excluded listed something else"; }
lc_lanecp -v -r -p -u --delete-excluded --exclude '*.tmp' "$src/" "$H:$rep"
grep -o 'deleting [^ ]*' "$LC_ERR" | sed 's/^deleting /delete /' | LC_ALL=C sort |
    diff "$d/dry4.sorted" - >"$d/real4.diff" ||
	{ lc__show "$d/real4.diff"; lc_fail "--delete-excluded deleted other than -n said"; }
[[ -z $(find "$rep" -name '*.tmp') && ! -e $rep/olddir ]] ||
	lc_fail "--delete-excluded left an excluded name"
diff -r -x '*.tmp' --no-dereference "$src" "$rep" >"$d/diff" ||
	{ lc__show "$d/diff"; lc_fail "the replica differs after --delete-excluded"; }
lc_lanecp_expect 2 'delete-excluded goes with -r' --delete-excluded "$src/three-gone" "$H:$rep"

lc_note "a symlink to a directory is deleted as a link, its target kept"
mkdir -p "$d/outside"
echo precious >"$d/outside/p"
ln -s "$d/outside" "$rep/a/evil"
lc_lanecp -q -l "$d/night.log" -r -p -u --delete --exclude '*.tmp' "$src/" "$H:$rep"
[[ ! -L $rep/a/evil && -e $d/outside/p ]] ||
	lc_fail "the link was followed, or not deleted"
# the -l log names a deletion without -v (a nightly log says what went)
lc_log_has 'deleting a/evil$' "$d/night.log"

lc_note "-O: a file at the source, a directory at the target: kept, not a lie"
# -O skips it and the scan goes into it: what it holds is a candidate
# in a directory listed as a file, which the controller takes
mkdir -p "$d/os" "$d/ot/x"
echo x >"$d/os/x"
echo stale >"$d/ot/x/stale"
lc_lanecp -q -r -O --delete "$d/os/" "$H:$d/ot/"
[[ -d $d/ot/x && ! -e $d/ot/x/stale ]] || lc_fail "-O --delete: x/stale kept, or x replaced"

lc_note "a failed copy deletes nothing"
echo extra >"$rep/extra"
echo x >"$src/unreadable"
chmod 000 "$src/unreadable"
# root reads any file: the local source end runs without the capability
LC_LANECP_WRAP=()
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null &&
    setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
	LC_LANECP_WRAP=(setpriv --bounding-set -dac_override,-dac_read_search)
fi
if [[ $(id -u) != 0 || ${#LC_LANECP_WRAP[@]} != 0 ]]; then
	lc_lanecp_expect 23 'nothing deleted' \
	    -r -p -u --delete --exclude '*.tmp' "$src/" "$H:$rep"
	[[ -e $rep/extra ]] || lc_fail "deleted after a failed copy"
else
	lc_skip "failed copy: root reads a 000 file and there is no setpriv"
fi
LC_LANECP_WRAP=()
rm -f "$src/unreadable"

lc_note "-n --delete into a directory that lacks the root: all new, nothing made"
mkdir -p "$d/pull0"
lc_lanecp -n -r -p -u --delete --exclude '*.tmp' "$H:$src" "$d/pull0" >"$d/dry3.out"
grep -qx 'new src/' "$d/dry3.out" && grep -qx 'new src/a/one' "$d/dry3.out" ||
	{ lc__show "$d/dry3.out"; lc_fail "-n: the new root not listed"; }
[[ -z $(ls -A "$d/pull0") ]] || lc_fail "-n made something in the target"

lc_note "pull: --delete in a local target, src without a slash"
mkdir -p "$d/pull/src"
echo stale >"$d/pull/src/stale"
echo outside >"$d/pull/other"
lc_lanecp -q -r -p -u --delete --exclude '*.tmp' "$H:$src" "$d/pull"
[[ ! -e $d/pull/src/stale && -e $d/pull/other ]] ||
	lc_fail "pull --delete: stale kept, or outside the root deleted"
diff -r -x '*.tmp' --no-dereference "$src" "$d/pull/src" >"$d/diff" ||
	{ lc__show "$d/diff"; lc_fail "the pulled replica differs"; }
echo ok
