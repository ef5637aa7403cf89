#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the X11 tests and benches need, when they are missing.
set -euo pipefail
need=()
command -v Xvfb >/dev/null || need+=(xvfb)
command -v xdotool >/dev/null || need+=(xdotool)
command -v xclip >/dev/null || need+=(xclip)
command -v xdpyinfo >/dev/null || need+=(x11-utils)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "Missing system packages: ${need[*]}. Install them with: sudo apt-get install ${need[*]}" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" python3-tk >/dev/null
