#!/usr/bin/env bash
# The frozen build's smoke test (`make package-check`; root): dist/holodesk_*.deb installed with
# apt into a fresh minimal Debian 12 root, then run there (packaging/smoke_test.py).
#
# The root (debootstrap --variant=minbase bookworm) is cached in .cache/package-root/base; each
# run works on a fresh copy, so nothing of an earlier run (or of this machine) can make a
# missing Depends pass. Only holodesk runs inside: Xvfb, the target window and the stand-in
# model server run on this machine, reached over the display's socket and 127.0.0.1 (a chroot
# shares both), so the root holds exactly what the .deb pulled in.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
CACHE=${HOLODESK_PACKAGE_ROOT:-$REPO/.cache/package-root}
BASE=$CACHE/base
ROOT=$CACHE/run
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PY=${PY:-$REPO/.venv/bin/python}

say() { printf '==> %s\n' "$*"; }
die() { printf 'package-check: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot): run it as root or with sudo."
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
deb=$(ls -t dist/holodesk_*_amd64.deb 2>/dev/null | head -1 || true)
[ -n "$deb" ] || die "no dist/holodesk_*_amd64.deb: run make package first"
"$PY" -c "import pytest, xdist, llguidance" 2>/dev/null \
  || die "$PY lacks the test tools (pytest, pytest-xdist, the stand-in server's llguidance):" \
    "run make test once"

if [ ! -e "$BASE/.complete" ]; then
  say "building a minimal Debian 12 root in $BASE (once; a few minutes)"
  rm -rf "$BASE"
  mkdir -p "$CACHE"
  debootstrap --variant=minbase bookworm "$BASE" "$MIRROR"
  touch "$BASE/.complete"
fi

mounted=()
cleanup() {
  # Unmount in reverse order, even after a failure; lazily when something still holds one.
  for ((i=${#mounted[@]}-1; i>=0; i--)); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -R -l "${mounted[$i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM
bind() {  # bind SRC DEST [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounted+=("$2")
}

say "a fresh copy of the root"
if mountpoint -q "$ROOT/proc" 2>/dev/null; then die "$ROOT is still mounted from an earlier run"; fi
rm -rf "$ROOT"
cp -a "$BASE" "$ROOT"
mkdir -p "$ROOT/proc" "$ROOT/sys" "$ROOT/dev"
mount -t proc proc "$ROOT/proc"; mounted+=("$ROOT/proc")
bind /sys "$ROOT/sys"
# /dev with what is mounted below it: apt logs dpkg's output through a terminal of /dev/pts
# (else "E: Can not write log (Is /dev/pts mounted?)"). A slave, so nothing done in the root
# reaches this machine's /dev.
mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev" && mounted+=("$ROOT/dev")
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p /tmp/.X11-unix
chmod 1777 /tmp/.X11-unix
bind /tmp/.X11-unix "$ROOT/tmp/.X11-unix"

name=$(basename "$deb")
cp "$deb" "$ROOT/tmp/"
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -qq

# What a person's `apt install ./holodesk_….deb` brings onto a machine that has nothing: with
# apt's default (Recommends too) and without. A keyring daemon must not come along: on a machine
# without a desktop it drags that desktop's stack in (systemd, GTK, ...), and holodesk works
# without one (HOLODESK_API_KEY; `holodesk doctor` explains the keyring).
say "what apt-get install ./$name would bring (nothing installed yet)"
brings() {  # brings [--no-install-recommends]: the NEW packages, then apt's summary lines
  in_root apt-get install --simulate "$@" "/tmp/$name" 2>/dev/null | awk '/^Inst /{print $2}'
}
summary() {
  in_root apt-get install --assume-no "$@" "/tmp/$name" 2>/dev/null \
    | grep -E 'newly installed|After this operation' | tr '\n' ' ' || true
}
echo "    without Recommends: $(brings --no-install-recommends | wc -l) packages; $(summary --no-install-recommends)"
echo "    with Recommends:    $(brings | wc -l) packages; $(summary)"
keyring=$(brings | grep -E '^(gnome-keyring|kwalletmanager|kwalletd[56]?|keepassxc|seahorse)$' \
  | tr '\n' ' ' || true)
[ -z "$keyring" ] || die "apt install ./$name would pull a keyring daemon in through the" \
  "package's Recommends: $keyring(packaging/build_deb.py RECOMMENDS; it belongs in SUGGESTS)"

say "apt-get install ./$name in the root (its Depends, nothing else)"
in_root apt-get install -y -qq --no-install-recommends "/tmp/$name" | tail -3

say "every library of /opt/holodesk resolves in the root (ldd)"
missing=$(chroot "$ROOT" sh -c '
  libs=$(find /opt/holodesk -name "*.so*" -printf "%h\n" | sort -u | tr "\n" :)
  find /opt/holodesk -type f \( -name "*.so*" -o -name holodesk \) | while read -r f; do
    LD_LIBRARY_PATH=$libs ldd "$f" 2>/dev/null | grep "not found" | sed "s|^|$f: |"
  done' || true)
if [ -n "$missing" ]; then
  printf '%s\n' "$missing" >&2
  die "libraries the .deb does not pull in (add their packages to Depends)"
fi
du -sh "$ROOT/opt/holodesk" | sed 's/^/    installed: /'

say "running holodesk in the root (packaging/smoke_test.py)"
HOLODESK_SMOKE_ROOT="$ROOT" HOLODESK_SMOKE_DEB="$deb" \
  "$PY" -m pytest -p no:cacheprovider -q -s --rootdir="$REPO" packaging/smoke_test.py "$@"
say "the .deb works on a fresh Debian 12"
