#!/usr/bin/env bash
# The Debian/Ubuntu packages holodesk needs, installed when missing.
#
#   sysdeps.sh runtime   what the app itself needs (`make run`): Qt's libraries, fonts, xclip.
#                        As root it installs them; otherwise it prints the one
#                        `sudo apt-get install …` line and exits 1, so `make run` stops there.
#   sysdeps.sh test      runtime plus what the tests, benches and screenshots need (Xvfb,
#                        xdotool, a window manager, a terminal, Tk). Not as root: it prints the
#                        line and carries on (the tests name what they miss).
#   sysdeps.sh PKG...    those packages, like `test` (`make stress` asks for stress-ng).
#
# It never runs sudo itself: a build tool that asks for a password is a surprise, and the
# printed line says exactly what will be installed.
set -euo pipefail

runtime=(
  libglib2.0-0 libegl1 libgl1 libfontconfig1 libdbus-1-3 fonts-dejavu-core  # Qt itself
  libxkbcommon0 libxkbcommon-x11-0 libx11-xcb1 libxcb-cursor0             # Qt's xcb platform
  libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
  libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libxcb-xkb1
  libx11-6 libxrandr2 libxfixes3                                           # mss (screen capture)
  xclip                                                                    # the clipboard
)
test_only=(
  xvfb xdotool x11-utils python3-tk                  # the X11 tests: display, input, target app
  openbox xterm                                      # a real window manager and terminal
  tmux nano mc                                       # programs that run in a terminal
)

mode=packages
case "${1:-test}" in
  runtime) mode=runtime; wanted=("${runtime[@]}") ;;
  test) mode=test; wanted=("${runtime[@]}" "${test_only[@]}") ;;
  *) wanted=("$@") ;;
esac

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "sysdeps: not a Debian or Ubuntu system; install the equivalents of: ${wanted[*]}" >&2
  exit 0
fi

installed() {  # Ubuntu 24.04 renamed some libraries with a t64 suffix (libglib2.0-0t64)
  local name
  for name in "$1" "${1}t64"; do
    dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed" && return 0
  done
  return 1
}
# The name apt knows here: on Ubuntu 24.04 libglib2.0-0 is only libglib2.0-0t64.
apt_name() {
  if ! apt-cache show "$1" >/dev/null 2>&1 && apt-cache show "${1}t64" >/dev/null 2>&1; then
    echo "${1}t64"
  else
    echo "$1"
  fi
}
need=()
for pkg in "${wanted[@]}"; do
  installed "$pkg" || need+=("$(apt_name "$pkg")")
done
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  line="sudo apt-get install --no-install-recommends ${need[*]}"
  if [ "$mode" = runtime ]; then
    {
      echo
      echo "holodesk needs ${#need[@]} system package(s) that are not installed:"
      echo "    ${need[*]}"
      echo "Install them with this one line, then run \`make run\` again:"
      echo
      echo "    $line"
      echo
    } >&2
    exit 1
  fi
  echo "Missing system packages for the tests: ${need[*]}. Install them with: $line" >&2
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# apt's long silent stretches (downloads, triggers) are told as they last (heartbeat.py), and
# only apt's lines that say something to a person are shown.
heartbeat=$(dirname "$0")/heartbeat.py
echo "Installing ${#need[@]} system package(s): ${need[*]}"
# The package lists of a fresh machine (or a container) may be empty or old.
echo "  apt-get update…"
python3 "$heartbeat" --only '^(Fetched|Err:|[EW]:)' "updating apt's package lists" -- \
  apt-get update -q || true
echo "  apt-get install…"
# -q keeps one line per package (Unpacking/Setting up): progress without the progress bars.
python3 "$heartbeat" --only '^(Unpacking|Setting up|[EW]:)' "installing system packages (apt-get)" \
  -- apt-get install -y -q --no-install-recommends "${need[@]}" || true
# apt's own status may be a failure that left nothing missing (a trigger): what counts is below.
still=()
for pkg in "${need[@]}"; do
  installed "$pkg" || still+=("$pkg")
done
if [ ${#still[@]} -gt 0 ]; then
  echo "sysdeps: apt-get could not install: ${still[*]} (see apt-get's messages above)" >&2
  exit 1
fi
echo "System packages installed."
