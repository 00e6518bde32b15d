#!/usr/bin/env bash
#
# The Debian package (cmake/Package.cmake, cmake/Install.cmake): cpack -G
# DEB from this build into a temp dir, then with dpkg-deb:
#   - the control fields: Package, Version (the project's), Architecture
#     (dpkg's), Maintainer, Section, Description, and Depends computed by
#     dpkg-shlibdeps (libssh2, libssl, zlib, libc);
#   - exactly the files cmake/Install.cmake lists (a new install() rule
#     needs its line here), each equal to its source (the man page
#     gzipped);
#   - the binary runs (--version names the package's version) and has no
#     test hooks: it refuses --test-hooks (scripts/test's product check)
#     and holds none of the hooks' LANECP_TEST_* names nor their
#     "test hook" log lines (the hidden LANECP_* settings are there).
# Only a product build (Release, -DLC_TEST_HOOKS=OFF) makes a package: in
# a test-hook build this reports SKIPPED (scripts/test runs it in its
# product build).
set -euo pipefail

skip() {
	printf 'SKIPPED: %s\n' "$*"
	exit 77
}
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}
note() {
	printf '=== %s\n' "$*"
}

: "${LANECP:?}" "${LC_SRC_DIR:?}" "${LC_BUILD_DIR:?}" "${LC_VERSION:?}"
: "${LC_CMAKE:=cmake}" "${LC_CPACK:=cpack}"
if [[ ${LC_HOOKS:-0} == 1 ]] || "$LANECP" --test-hooks >/dev/null 2>&1; then
	skip "this build has the test hooks: packages come from a product build" \
		"(-DLC_TEST_HOOKS=OFF; scripts/test product checks one)"
fi
for t in dpkg dpkg-deb dpkg-shlibdeps gzip; do
	command -v "$t" >/dev/null ||
		skip "$t is not installed (scripts/deps.sh test installs dpkg-dev)"
done

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

note "cpack -G DEB"
# install (and so cpack) builds nothing itself (cmake/Install.cmake)
"$LC_CMAKE" --build "$LC_BUILD_DIR" --target lanecp lanecp_man >"$T/build.log" 2>&1 ||
	{ cat "$T/build.log" >&2; fail "cmake --build lanecp lanecp_man"; }
"$LC_CPACK" -G DEB -B "$T/out" --config "$LC_BUILD_DIR/CPackConfig.cmake" \
	>"$T/cpack.log" 2>&1 || { cat "$T/cpack.log" >&2; fail "cpack -G DEB"; }
arch=$(dpkg --print-architecture)
deb=$T/out/lanecp_${LC_VERSION}_$arch.deb
[[ -f $deb ]] || { ls -l "$T/out" >&2; fail "no $deb"; }

note "control fields"
field() {
	dpkg-deb -f "$deb" "$1"
}
[[ $(field Package) == lanecp ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$LC_VERSION" ]] || fail "Version: $(field Version), project $LC_VERSION"
[[ $(field Architecture) == "$arch" ]] || fail "Architecture: $(field Architecture), dpkg says $arch"
[[ $(field Maintainer) =~ ^[^\<]+\ \<[^@\>]+@[^@\>]+\>$ ]] ||
	fail "Maintainer: '$(field Maintainer)'"
[[ $(field Section) == net ]] || fail "Section: $(field Section)"
desc=$(field Description)
[[ $(wc -l <<<"$desc") -ge 3 && ${desc%%$'\n'*} == *SSH* ]] ||
	fail "Description: '$desc'"
depends=$(field Depends)
for lib in libc6 libssh2-1 'libssl[0-9.]*' zlib1g; do
	[[ ", $depends," =~ ,\ $lib\ \( ]] || fail "Depends lacks $lib: '$depends'"
done

note "files"
dpkg-deb -c "$deb" >"$T/list"
# regular files and links, by path (the 6th column on)
awk '$1 !~ /^d/ { print $6 }' "$T/list" | sort >"$T/files"
sort >"$T/want" <<'EOF'
./usr/bin/lanecp
./usr/libexec/lanecp/lanecp-agent
./usr/share/bash-completion/completions/lanecp
./usr/share/doc/lanecp/README.md
./usr/share/doc/lanecp/SECURITY.md
./usr/share/man/man1/lanecp.1.gz
EOF
if ! cmp -s "$T/want" "$T/files"; then
	diff "$T/want" "$T/files" >&2 || true
	fail "the package's files are not what cmake/Install.cmake installs"
fi
awk '$6 == "./usr/bin/lanecp" && $1 != "-rwxr-xr-x" { exit 1 }' "$T/list" ||
	fail "/usr/bin/lanecp is not mode 0755: $(grep ' ./usr/bin/lanecp$' "$T/list")"
mkdir "$T/x"
dpkg-deb -x "$deb" "$T/x"
gzip -dc "$T/x/usr/share/man/man1/lanecp.1.gz" >"$T/lanecp.1"
cmp -s "$T/lanecp.1" "$LC_SRC_DIR/man/lanecp.1" || fail "the man page differs from man/lanecp.1"
cmp -s "$T/x/usr/share/bash-completion/completions/lanecp" \
	"$LC_SRC_DIR/completion/lanecp.bash" || fail "the completion differs from completion/lanecp.bash"
for d in README.md SECURITY.md; do
	cmp -s "$T/x/usr/share/doc/lanecp/$d" "$LC_SRC_DIR/$d" || fail "$d differs"
done

note "the binary: runs, no test hooks"
bin=$T/x/usr/bin/lanecp
v=$("$bin" --version)
[[ $v == "lanecp $LC_VERSION "* ]] || fail "--version: '$v'"
rc=0
"$bin" --test-hooks >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "--test-hooks: exit $rc, expected 2 (unknown option)"
if grep -a -c -E 'LANECP_TEST_[A-Z]+|test hook' "$bin" >"$T/count"; then
	fail "the packaged binary holds test hook names ($(cat "$T/count") hits)"
fi

note "the agent lanecp pushes: there, runs, no test hooks"
agent=$(find "$T/x/usr" -path '*/lanecp/lanecp-agent' -type f | head -1)
[[ -n $agent && -x $agent ]] || fail "no executable lanecp-agent in the package"
v=$("$agent" --version)
[[ $v == *"$LC_VERSION"* ]] || fail "lanecp-agent --version: '$v'"
if grep -a -c -E 'LANECP_TEST_[A-Z]+|test hook' "$agent" >"$T/count"; then
	fail "the packaged agent holds test hook names ($(cat "$T/count") hits)"
fi
echo PASS
