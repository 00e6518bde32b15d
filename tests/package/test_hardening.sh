#!/usr/bin/env bash
#
# The installed programs are hardened (cmake/Hardening.cmake), as Debian's
# hardening=+all would make them: position-independent (ELF type DYN),
# a read-only GOT after start-up (GNU_RELRO and BIND_NOW), lanecp built
# with _FORTIFY_SOURCE (glibc's *_chk functions are called) and the stack
# protector (__stack_chk_fail), and lanecp-agent, when it is static, a
# static PIE with no program interpreter.  Run on the product build
# (label package), whose flags are the shipped ones.
set -euo pipefail

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}
skip() {
	printf 'SKIPPED: %s\n' "$*"
	exit 77
}
: "${LANECP:?}" "${LC_AGENT:?}"
command -v readelf >/dev/null || skip "readelf is not installed (binutils)"
[[ ${LC_HARDEN:-1} == 1 ]] || skip "built with -DLC_HARDEN=OFF"
# FORTIFY is off in sanitizer and Debug builds (cmake/Hardening.cmake), and
# neither is what ships: the product build is the one to check
[[ ${LC_SANITIZED:-0} == 0 ]] || skip "a sanitizer build (not the shipped flags)"
[[ ${LC_DEBUG:-0} == 0 ]] || skip "a Debug build (no _FORTIFY_SOURCE)"

check_common() { # PROGRAM
	local p=$1 hdr dyn
	hdr=$(readelf -hW "$p")
	dyn=$(readelf -dW "$p")
	grep -q 'Type:[[:space:]]*DYN' <<<"$hdr" ||
		fail "$p is not position-independent: $(grep Type: <<<"$hdr")"
	readelf -lW "$p" | grep -q GNU_RELRO || fail "$p has no GNU_RELRO segment"
	grep -qE 'BIND_NOW|FLAGS_1.*NOW' <<<"$dyn" || fail "$p is not linked with -z now"
	echo "=== $p: PIE, relro, now"
}

check_common "$LANECP"
syms=$(readelf -sW --dyn-syms "$LANECP")
grep -q '__stack_chk_fail' <<<"$syms" || fail "$LANECP: no stack protector"
grep -qE '__[a-z_]+_chk(@|$)' <<<"$syms" || fail "$LANECP: not built with _FORTIFY_SOURCE"
echo "=== $LANECP: stack protector, fortify"

check_common "$LC_AGENT"
if ! readelf -dW "$LC_AGENT" | grep -q NEEDED; then
	# static: a static PIE has no interpreter to load it
	readelf -lW "$LC_AGENT" | grep -q INTERP &&
		fail "$LC_AGENT is static but asks for a program interpreter"
	echo "=== $LC_AGENT: static PIE"
fi
echo "=== hardening: ok"
