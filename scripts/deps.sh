#!/usr/bin/env bash
# Install what lanecp needs on Debian/Ubuntu, only what is missing.
#   scripts/deps.sh build   compiler, cmake, libssh2, OpenSSL, zlib
#   scripts/deps.sh test    + OpenSSH server/client and the test tools
#   scripts/deps.sh bench   + the peers the benchmarks compare against
set -euo pipefail

want=(build-essential cmake pkg-config libssh2-1-dev libssl-dev zlib1g-dev)
case "${1:-build}" in
build) ;;
# bsdutils: script(1) for the passphrase prompt; util-linux: setpriv;
# clang-format: the house style (tests/style); mount: mount/umount for
# the full-disk case; dpkg-dev: dpkg-shlibdeps for the .deb's Depends
# (cpack); mandoc, man-db: the man page's lint and rendering, man -w;
# bash-completion: where completions are installed;
# debootstrap, strace: the pushed agent in other Debian releases' root
# file systems, and what it opens there (test_push_userlands.sh)
test) want+=(openssh-server openssh-client procps iproute2 tcpdump clang clang-format python3
	bsdutils util-linux mount dpkg-dev mandoc man-db bash-completion
	debootstrap strace dropbear-bin) ;;
bench) want+=(openssh-server openssh-client procps iproute2 iperf3 rsync python3 tcpdump
	gnuplot-nox time globus-gridftp-server-progs globus-gass-copy-progs) ;;
*) echo "usage: $0 build|test|bench" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
	echo "deps: missing ${missing[*]} and no apt-get here; install them by hand" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || {
		echo "deps: missing ${missing[*]}; run as root or install sudo" >&2
		exit 1
	}
	sudo=(sudo)
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# a fresh machine may have no package lists yet: refresh once on failure
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
