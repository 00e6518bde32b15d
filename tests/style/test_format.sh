#!/usr/bin/env bash
#
# The house style is the repository's .clang-format: every tracked C file
# must be as clang-format writes it, except those in format-legacy.txt,
# which were written before the check existed.  The list only shrinks:
# a listed file that is formatted now, or that no longer exists, fails
# the test too, so that the list stays exact.
#
# clang-format's output differs between releases: the check needs the one
# the file was tuned with (14, Debian 12's), and reports SKIPPED otherwise.
set -euo pipefail
: "${LC_SRC_DIR:?}"
cd "$LC_SRC_DIR"
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
	echo "SKIPPED: no clang-format (scripts/deps.sh test installs it)"
	exit 77
fi
ver=$("$cf" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$ver" != 14 ]; then
	echo "SKIPPED: $cf is version $ver; .clang-format is checked with 14"
	exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIPPED: $LC_SRC_DIR is not a git work tree (the check lists tracked files)"
	exit 77
fi

legacy=tests/style/format-legacy.txt
bad=0
declare -A old=()
while IFS= read -r f; do
	case "$f" in '' | '#'*) continue ;; esac
	old[$f]=1
	if [ ! -f "$f" ]; then
		echo "FAIL: $legacy lists $f, which does not exist: remove the line"
		bad=1
	fi
done <"$legacy"

# one clang-format for every file (one per file took minutes on a loaded
# machine): the files it would change are those it warns about
mapfile -t files < <(git ls-files -- '*.c' '*.h')
declare -A unformatted=()
while IFS= read -r f; do
	unformatted[$f]=1
done < <("$cf" --dry-run "${files[@]}" 2>&1 |
	sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: .*clang-format-violations.*/\1/p' |
	sort -u)
n=${#files[@]}
for f in "${files[@]}"; do
	if [ -z "${unformatted[$f]:-}" ]; then
		if [ -n "${old[$f]:-}" ]; then
			echo "FAIL: $f is formatted now: remove it from $legacy"
			bad=1
		fi
	elif [ -z "${old[$f]:-}" ]; then
		echo "FAIL: $f is not formatted: run $cf -i $f"
		"$cf" "$f" | diff -u "$f" - | head -20 || true
		bad=1
	fi
done
[ "$bad" -eq 0 ] || exit 1
echo "ok: $n C files, ${#old[@]} of them legacy, the rest as clang-format writes them"
