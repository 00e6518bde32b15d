#!/usr/bin/env bash
# userland_rootfs.sh RELEASE
#   A root file system of Debian RELEASE (debootstrap --variant=minbase,
#   plus openssh-server, from http://deb.debian.org/debian) for
#   test_push_userlands.sh, the pushed agent on other userlands.  Built
#   into $LC_USERLAND_CACHE/rootfs-RELEASE (default /var/cache/lanecp-test)
#   and reused from there: one that is complete holds .lanecp-rootfs-ok;
#   anything else there is built again.  One build at a time per release
#   (flock): a second caller waits for the first one's and uses it.
#   Prints its path.  Exit 0; 77 when it cannot be built here (not root,
#   no debootstrap, no network or mirror: the reason on stderr); 1 on
#   any other error.  .ci/run starts it in the background for the
#   releases CI tries, since a cold build takes minutes.
set -euo pipefail
release=${1:?usage: userland_rootfs.sh RELEASE}
[[ $release =~ ^[a-z]+$ ]] || { echo "bad release name: $release" >&2; exit 1; }
cache=${LC_USERLAND_CACHE:-/var/cache/lanecp-test}
mirror=${LC_USERLAND_MIRROR:-http://deb.debian.org/debian}
root=$cache/rootfs-$release

if [[ $(id -u) != 0 ]]; then
	echo "building a root file system needs root (debootstrap, chroot)" >&2
	exit 77
fi
if [[ -f $root/.lanecp-rootfs-ok ]]; then
	echo "$root"
	exit 0
fi
debootstrap=$(command -v debootstrap || true)
[[ -x $debootstrap ]] || debootstrap=/usr/sbin/debootstrap
if [[ ! -x $debootstrap ]]; then
	echo "no debootstrap (apt-get install debootstrap)" >&2
	exit 77
fi
mkdir -p "$cache" || exit 1
exec 9>"$cache/rootfs-$release.lock"
flock 9
# built by the holder of the lock we waited for?
if [[ -f $root/.lanecp-rootfs-ok ]]; then
	echo "$root"
	exit 0
fi
log=$cache/rootfs-$release.log
# a build stopped half-way (.ci/run stops one still running at its end)
# may have left debootstrap's /proc or /sys mounted in it
while read -r mnt; do
	umount -l "$mnt" || true
done < <(findmnt -rn -o TARGET | grep -E "^($root|$root\.tmp)/" | sort -r)
rm -rf --one-file-system "$root" "$root.tmp"
start=$(date +%s)
if ! "$debootstrap" --variant=minbase --include=openssh-server \
    "$release" "$root.tmp" "$mirror" >"$log" 2>&1; then
	rm -rf --one-file-system "$root.tmp"
	echo "debootstrap $release $mirror failed (no network or mirror?):" \
	    "$(grep -E '^[EW]:' "$log" | tail -1)" >&2
	exit 77
fi
echo "debootstrap $release: $(($(date +%s) - start)) s" >>"$log"
touch "$root.tmp/.lanecp-rootfs-ok"
mv "$root.tmp" "$root"
echo "$root"
