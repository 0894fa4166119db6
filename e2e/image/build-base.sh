#!/usr/bin/env bash
# Builds the root file system of the container image's runtime stage up to
# its COPY of the binary, without a container registry: Debian's own
# packages through debootstrap, once per machine.
#
#   e2e/image/build-base.sh          build unless the cached one is current
#   e2e/image/build-base.sh --path   print the directory of the root file system
#
# What the Containerfile's runtime stage says is done as a container build
# would do it on `debian:<release>-slim`:
#   - `debootstrap --variant=minbase` of the Debian release the stage's FROM
#     names (the packages of the official image), with that image's apt
#     sources (the release, its updates and security) and its dpkg
#     configuration that leaves documentation, manual pages and translations
#     out (what makes it "slim"), then `apt-get clean`;
#   - every RUN instruction of the stage, verbatim, with /bin/sh -c in a
#     chroot (so the packages and the user are the Containerfile's own).
# The result lives in $HCP_CACHE_DIR/image-base/<key>/rootfs (outside the
# work tree, so `make clean` keeps it), <key> a digest of this script, the
# stage's FROM and RUN instructions and RECIPE: it is rebuilt when any of
# them change, and older ones are removed. Needs root (debootstrap, chroot)
# and the Debian mirror (about 47 MB downloaded, 3-6 minutes the first time).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/e2e/lib.sh"
. "$here/containerfile.sh"

# Bump when the way the root file system is made changes.
RECIPE=1
CONTAINERFILE=${HCP_CONTAINERFILE:-$repo/Containerfile}
MIRROR=${HCP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${HCP_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

[ -f "$CONTAINERFILE" ] || e2e_die "$CONTAINERFILE: no such file"
runtime=$(stage "$CONTAINERFILE" runtime)
from=$(stages "$CONTAINERFILE" | awk '$2 == "runtime" { sub(/@sha256:.*/, "", $1); print $1 }')
[[ "$from" =~ ^(docker\.io/)?(library/)?debian:([a-z]+)(-slim)?$ ]] ||
  e2e_die "$CONTAINERFILE: the runtime stage is FROM '$from', not a debian:<release>[-slim] image"
release=${BASH_REMATCH[3]}

key=$( { cat "$0" "$here/containerfile.sh"; echo "$from"; instruction RUN <<<"$runtime"; echo "$RECIPE"; } |
  sha256sum | cut -c1-16)
base_dir=$HCP_CACHE_DIR/image-base
dir=$base_dir/$key
rootfs=$dir/rootfs

case "${1:-}" in
  --path) echo "$rootfs"; exit 0 ;;
  "") ;;
  *) e2e_die "usage: $0 [--path]" ;;
esac

current() { [ -f "$dir/done" ] && [ -x "$rootfs/bin/sh" ]; }
current && exit 0

[ "$(id -u)" -eq 0 ] || e2e_die "debootstrap and chroot need root"
command -v debootstrap >/dev/null || e2e_die "debootstrap is not installed (scripts/install-deps.sh installs it)"
mkdir -p "$base_dir"
# One build at a time per machine; a second caller waits and then reuses it.
exec 9>"$base_dir/build.lock"
flock 9
current && exit 0

tmp=$dir.tmp
log=$dir.log
base_cleanup() {
  progress_stop quiet
  # Nothing may stay mounted in a directory about to be removed.
  if [ -d "$tmp/rootfs/proc" ] && mountpoint -q "$tmp/rootfs/proc"; then umount -l "$tmp/rootfs/proc"; fi
  rm -rf "$tmp"
}
rm -rf "$tmp"
mkdir -p "$tmp"
: >"$log"
# The ticker's status: debootstrap's stage, then apt-get's last step.
status() { grep -E '^(I: |Get:|Unpacking |Setting up )' "$log" | tail -1 | cut -c1-100; }
progress_start "the image's base (debian:$release-slim)" \
  "debootstrap, then the Containerfile's runtime RUN; the e2e-image suite runs the controller's image on it; once per machine, cached in $base_dir" \
  "3-6 minutes and about 47 MB downloaded" status
trap base_cleanup EXIT

r=$tmp/rootfs
# The official image's packages: minbase is Essential plus apt.
debootstrap --variant=minbase --merged-usr "$release" "$r" "$MIRROR" >>"$log" 2>&1 || {
  tail -20 "$log" >&2
  e2e_die "debootstrap $release from $MIRROR failed (log: $log)"
}
# The official image's apt sources and slim dpkg configuration
# (debuerreotype's: documentation, manual pages, translations left out).
rm -f "$r/etc/apt/sources.list"
cat >"$r/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $MIRROR
Suites: $release $release-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $release-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
if [[ "$from" == *-slim ]]; then
  cat >"$r/etc/dpkg/dpkg.cfg.d/docker" <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
SLIM
  find "$r/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete 2>/dev/null || true
  find "$r/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
  rm -rf "$r/usr/share/man/"* "$r/usr/share/groff/"* "$r/usr/share/info/"* \
    "$r/usr/share/lintian/"* "$r/usr/share/linda/"*
  find "$r/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
fi

# in_root COMMAND: /bin/sh -c COMMAND in the root file system, as a
# container build's RUN: a fresh mount namespace with /proc, the environment
# of an image without ENV, name resolution from this machine.
in_root() {
  unshare --mount --fork sh -c 'mount -t proc proc "$1/proc" && exec chroot "$1" \
    /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    /bin/sh -c "$2"' _ "$r" "$1"
}
cp /etc/resolv.conf "$r/etc/resolv.conf"
in_root "apt-get clean && rm -rf /var/lib/apt/lists/*" >>"$log" 2>&1
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  echo "== RUN $cmd" >>"$log"
  in_root "$cmd" >>"$log" 2>&1 || {
    tail -20 "$log" >&2
    e2e_die "the runtime stage's RUN $n failed in the $release root file system (log: $log): $cmd"
  }
done < <(instruction RUN <<<"$runtime")
[ "$n" -gt 0 ] || e2e_die "$CONTAINERFILE: the runtime stage has no RUN instruction"
# As in a container, /etc/resolv.conf is the runtime's to provide.
: >"$r/etc/resolv.conf"
rm -rf "$r/var/cache/apt/archives/"*.deb "$r/var/log/apt/"* "$r/tmp/"*

echo "$from $key" >"$tmp/done"
for old in "$base_dir"/*; do
  case $old in "$dir" | "$dir".* | "$base_dir/build.lock") ;; *) rm -rf "$old" ;; esac
done
rm -rf "$dir"
mkdir -p "$dir"
mv "$tmp/rootfs" "$dir/rootfs"
mv "$tmp/done" "$dir/done"
rm -rf "$tmp"
progress_stop
e2e_log "$rootfs: $(du -sm "$rootfs" | cut -f1) MB, $(chroot "$rootfs" dpkg-query -W | wc -l) packages"
