#!/usr/bin/env bash
#
# The layer rule of src/ (src/CMakeLists.txt, docs/ARCHITECTURE.md):
#  1. the build refuses an upward include: a probe file linked like the
#     fs layer compiles with a header from below (wire.h) and fails, for
#     want of the header, with one from above (ssh.h);
#  2. a folder's internal headers (*_int.h) are included only by the
#     files of that folder (and by the unit tests and fuzzers in tests/,
#     which are white-box);
#  3. no header is left in include/: every header belongs to its layer.
set -euo pipefail
: "${LC_SRC_DIR:?}" "${LC_BUILD_DIR:?}" "${LC_CMAKE:?}"
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

"$LC_CMAKE" --build "$LC_BUILD_DIR" --target lc_probe_down >"$T/down" 2>&1 ||
	{ cat "$T/down" >&2; fail "a lower layer's header does not compile in fs"; }
if "$LC_CMAKE" --build "$LC_BUILD_DIR" --target lc_probe_up >"$T/up" 2>&1; then
	fail "fs compiled an include of ssh.h: the layer rule is not enforced"
fi
grep -q 'ssh\.h' "$T/up" && grep -Eq 'No such file|not found' "$T/up" ||
	{ cat "$T/up" >&2; fail "the upward probe failed, but not for want of ssh.h"; }
echo "ok: an upward include (fs -> ssh.h) fails to compile"

cd "$LC_SRC_DIR"
bad=0
while IFS= read -r hdr; do
	dir=$(dirname "$hdr") name=$(basename "$hdr")
	while IFS= read -r user; do
		[[ $(dirname "$user") == "$dir" ]] && continue
		[[ $user == tests/unit/* || $user == tests/fuzz/* ]] && continue
		printf 'FAIL: %s includes %s, internal to %s\n' "$user" "$name" "$dir" >&2
		bad=1
	done < <(grep -rlE "#include \"$name\"" src cmd tests bench || true)
done < <(find src -name '*_int.h')
[[ $bad == 0 ]] || exit 1
echo "ok: internal headers stay in their folder"
[[ ! -d include ]] || fail "include/ exists: headers belong to their layer's folder"
echo "ok: no include/ folder"
