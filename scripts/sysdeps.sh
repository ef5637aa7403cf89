#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the tests, the benches and the Qt app need, when missing.
# Only as root (CI, a fresh container); otherwise it prints the apt-get line to run.
# With arguments, those packages instead (`make stress` asks for stress-ng this way).
set -euo pipefail
wanted=(
  xvfb xdotool xclip x11-utils python3-tk            # the X11 tests: display, input, target app
  xterm openbox                                      # the terminal e2e: a real shell, a window manager
  libegl1 libgl1 libfontconfig1 libdbus-1-3          # Qt itself
  libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0    # Qt's xcb platform (the app on X11)
  libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
  libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libxcb-xkb1
)
if [ $# -gt 0 ]; then
  wanted=("$@")
fi
need=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "Missing system packages: ${need[*]}. Install them with: sudo apt-get install ${need[*]}" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
