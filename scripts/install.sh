#!/usr/bin/env bash
# Creates .venv (when missing) and installs holodesk into it.
#
#   install.sh run    the runtime dependencies only (`make run`)
#   install.sh dev    runtime + the developer tools (`make test`, `make lint`)
#
# PYTHON picks the interpreter; by default the newest python3.1x (3.11 or newer) on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
group=${1:?usage: install.sh run|dev}
venv=.venv

find_python() {
  local candidate
  for candidate in ${PYTHON:-python3.14 python3.13 python3.12 python3.11 python3}; do
    if command -v "$candidate" >/dev/null \
        && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if [ ! -x "$venv/bin/python" ]; then
  if ! python=$(find_python); then
    found=$(command -v "${PYTHON:-python3}" >/dev/null && "${PYTHON:-python3}" --version 2>&1 \
      || echo "no ${PYTHON:-python3}")
    {
      echo "holodesk needs Python 3.11 or newer; found: $found."
      echo "Debian 12 and Ubuntu 24.04 ship it as python3: sudo apt-get install python3 python3-venv"
      echo "Elsewhere install a python3.11 (or newer) and run: make run PYTHON=python3.11"
    } >&2
    exit 1
  fi
  echo "Creating $venv with $python ($("$python" --version 2>&1))…"
  if ! "$python" scripts/heartbeat.py "creating $venv (venv installs its own pip into it)" -- \
      "$python" -m venv "$venv"; then
    rm -rf "$venv"
    version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    {
      echo "Could not create a virtual environment with $python: its venv module is missing."
      echo "Install it with: sudo apt-get install python3-venv   (or python${version}-venv)"
    } >&2
    exit 1
  fi
fi

# No pip upgrade: the pip that venv puts in (23.0 on Debian 12, 24.0 on Ubuntu 24.04) does all
# holodesk asks of it (wheels, an editable install), and the upgrade cost a download and a second
# install and byte-compilation of pip itself, about 8 s of a fresh `make run`.
# A Python step, so the dependency lists stay in pyproject.toml (see its docstring for evdev).
"$venv/bin/python" scripts/install_deps.py "$group"
