#!/usr/bin/env bash
# `make fresh-check`: the source install on a fresh Debian 12, as a new user would do it.
#
# 1. A minimal Debian 12 root (`debootstrap --variant=minbase bookworm`) with only python3,
#    python3-venv, make, git and ca-certificates, cached in .cache/fresh-root (built once,
#    never changed after); every run works on a fresh copy of it (.cache/fresh-work).
# 2. This repository's current commit is cloned into it (uncommitted changes are not part of
#    the check).
# 3. `make run` as an ordinary user must stop at the one `sudo apt-get install …` line.
# 4. `make run` as root (in a chroot) must reach a visible holodesk window on an Xvfb display
#    that runs on the host: only that display's socket is bind-mounted into the root, nothing
#    X-related is installed inside for this step. The window is found with xdotool on the host.
#    The time to the window is printed, and the longest silence of make run's output until it
#    starts holodesk: over 5 s (FRESH_MAX_SILENCE) fails the check, or only warns with
#    FRESH_SILENCE_FAILS=0 (what CI's fresh-check-quick sets: a timing must not turn a busy CI
#    machine red; the full fresh-check, run by hand, is the proof).
# 5. `make test` inside (it installs the test system packages and the developer tools there:
#    test-only). FRESH_TEST_ARGS replaces the pytest arguments (e.g. a subset while iterating);
#    FRESH_TEST=0 leaves this step out (while working on `make run` itself).
#
# FRESH_WARM=1 keeps pip's and apt's download caches between checks (`make run` with a warm
# cache, as on a second install); by default each check downloads everything, as a new machine.
#
# The host's extra CA certificates (/usr/local/share/ca-certificates) and pip's network
# variables are carried into the root: where the host reaches PyPI through a TLS-inspecting
# proxy, the fresh machine behind it would need them too. Needs root (chroot, mounts).
set -euo pipefail
{  # read whole before it runs: editing this file during a check (a long one) cannot derail it
cd "$(dirname "$0")/.."
repo=$PWD
cache=${FRESH_CACHE:-$repo/.cache}
base=$cache/fresh-root
work=$cache/fresh-work
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
run_timeout=${FRESH_RUN_TIMEOUT:-1500}
max_silence=${FRESH_MAX_SILENCE:-5}
log_dir=$cache/fresh-logs
src=/home/person/holodesk  # the clone, inside the root

t0=$(date +%s)
elapsed() { local s=$(($(date +%s) - t0)); printf '%d:%02d' $((s / 60)) $((s % 60)); }
step() { printf '\n== [%s] %s\n' "$(elapsed)" "$*"; }
fail() { printf '\nfresh-check FAILED after %s: %s\n' "$(elapsed)" "$*" >&2; exit 1; }
seconds_since() { awk -v t0="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%d", now - t0 }'; }

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot and mounts): sudo make fresh-check"
commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "note: uncommitted changes are not checked; the check clones commit ${commit:0:12}" >&2
fi
mkdir -p "$cache" "$log_dir"

mounted=()
xvfb_pid=
cleanup() {
  local status=$?
  set +e
  # Everything still running inside the root, then the mounts (innermost first).
  for root in "$work" "$base.tmp"; do
    for proc in /proc/[0-9]*; do
      [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && kill -KILL "${proc#/proc/}" 2>/dev/null
    done
  done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}" 2>/dev/null
  done
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount_root() {  # proc, sys and dev inside a root; unmounted by cleanup, even on failure
  local root=$1
  mount -t proc proc "$root/proc" && mounted+=("$root/proc")
  mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" && mounted+=("$root/sys")
  mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" && mounted+=("$root/dev")
}
unmount_root() {
  local root=$1 keep=() m
  for m in "${mounted[@]}"; do
    if [[ $m == "$root"/* ]]; then umount -R "$m" || umount -R -l "$m"; else keep+=("$m"); fi
  done
  mounted=("${keep[@]+"${keep[@]}"}")
}

# What the root's processes get: a clean login-like environment plus the network plumbing.
in_root() {  # in_root ROOT USERSPEC COMMAND...
  local root=$1 user=$2
  shift 2
  local env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
             LANG=C.UTF-8 TERM=dumb)
  [ "$user" = 0:0 ] || env[0]=HOME=/home/person
  local name
  for name in PIP_CERT PIP_INDEX_URL PIP_DEFAULT_TIMEOUT http_proxy https_proxy no_proxy \
              HTTP_PROXY HTTPS_PROXY NO_PROXY CI; do
    [ -n "${!name:-}" ] && env+=("$name=${!name}")
  done
  chroot --userspec="$user" "$root" /usr/bin/env -i "${env[@]}" "$@"
}

step "host tools (debootstrap, Xvfb, xdotool)"
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v Xvfb >/dev/null || need+=(xvfb)
command -v xdotool >/dev/null || need+=(xdotool)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

if [ ! -f "$base/.fresh-base" ]; then
  step "building the cached Debian 12 minbase root in $base (once, a few minutes)"
  if [ ! -f "$base.tmp/.debootstrap-done" ]; then  # an interrupted build resumes after it
    rm -rf "$base.tmp"
    debootstrap --variant=minbase bookworm "$base.tmp" "$mirror" \
      | grep --line-buffered '^I: \(Retrieving\|Validating\|Base\)' || true
    [ -x "$base.tmp/usr/bin/apt-get" ] || fail "debootstrap did not finish (see its output above)"
    touch "$base.tmp/.debootstrap-done"
  fi
  cp /etc/resolv.conf "$base.tmp/etc/resolv.conf"
  mount_root "$base.tmp"
  in_root "$base.tmp" 0:0 apt-get update -q
  in_root "$base.tmp" 0:0 env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends python3 python3-venv make git ca-certificates
  in_root "$base.tmp" 0:0 apt-get clean
  unmount_root "$base.tmp"
  rm -rf "$base.tmp/var/lib/apt/lists/"*
  touch "$base.tmp/.fresh-base"
  mv "$base.tmp" "$base"
fi
echo "base root: $(du -sh "$base" | cut -f1), $(chroot "$base" dpkg-query -W | wc -l) packages"

step "a fresh copy of the root, this commit (${commit:0:12}) cloned into it"
rm -rf "$work"
cp -a "$base" "$work"
cp /etc/resolv.conf "$work/etc/resolv.conf"
# debootstrap writes no /etc/hosts; every installed Debian has one (the installer's, a cloud or
# container image's), so `localhost` resolves there (an ssh -X DISPLAY=localhost:10 relies on it).
printf '127.0.0.1\tlocalhost\n127.0.1.1\tfresh\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
  > "$work/etc/hosts"
mount_root "$work"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$work/usr/local/share/ca-certificates/"
  in_root "$work" 0:0 update-ca-certificates >/dev/null
fi
# FRESH_WARM=1 (see the top): the download caches live outside the copy, kept between checks.
if [ "${FRESH_WARM:-0}" = 1 ]; then
  downloads=$cache/fresh-downloads
  mkdir -p "$downloads/pip" "$downloads/apt/partial" "$work/root/.cache/pip"
  # apt downloads as its own user: a folder it cannot write is a download "unsandboxed as root".
  chown "$(chroot "$work" id -u _apt):0" "$downloads/apt/partial" && chmod 700 "$downloads/apt/partial"
  mount --bind "$downloads/pip" "$work/root/.cache/pip" && mounted+=("$work/root/.cache/pip")
  mount --bind "$downloads/apt" "$work/var/cache/apt/archives" \
    && mounted+=("$work/var/cache/apt/archives")
  echo "warm: pip's and apt's downloads from $downloads ($(du -sh "$downloads" | cut -f1))"
fi
mkdir -p "$work/home/person"
git clone --quiet --no-hardlinks "$repo" "$work$src"
git -C "$work$src" checkout --quiet --detach "$commit"
chown -R 1000:1000 "$work/home/person"

step "make run as an ordinary user: must stop at the sudo line"
set +e
in_root "$work" 1000:1000 make -C "$src" run >"$log_dir/run-user.log" 2>&1
status=$?
set -e
sed 's/^/  | /' "$log_dir/run-user.log"
[ $status -ne 0 ] || fail "make run as an ordinary user did not stop for the system packages"
grep -q "sudo apt-get install" "$log_dir/run-user.log" \
  || fail "make run as an ordinary user did not print the sudo apt-get line"

step "make run as root, to a visible window on the host's Xvfb"
rm -f "$log_dir/display"
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$log_dir/display" \
  2>"$log_dir/xvfb.log" &
xvfb_pid=$!
number=
for _ in $(seq 150); do
  number=$(tr -dc 0-9 <"$log_dir/display" 2>/dev/null || true)
  [ -n "$number" ] && break
  kill -0 "$xvfb_pid" 2>/dev/null || break
  sleep 0.2
done
[ -n "$number" ] || fail "Xvfb did not start: $(tail -3 "$log_dir/xvfb.log")"
display=":$number"
mkdir -p "$work/tmp/.X11-unix" && chmod 1777 "$work/tmp/.X11-unix"
touch "$work/tmp/.X11-unix/X$number"
mount --bind "/tmp/.X11-unix/X$number" "$work/tmp/.X11-unix/X$number"
mounted+=("$work/tmp/.X11-unix/X$number")
# Each piece of make run's output is stamped with its time (scripts/heartbeat.py --stamp), so the
# longest silence before the window is measured: a person must never wait on a silent screen
# for more than 5 s (FRESH_MAX_SILENCE).
stamps=$log_dir/run-root.times
: >"$stamps"
run_started=$(date +%s.%N)
(DISPLAY=$display in_root "$work" 0:0 env DISPLAY="$display" make -C "$src" run \
  2>&1 | python3 scripts/heartbeat.py --stamp "$stamps" | tee "$log_dir/run-root.log" \
  | sed -u 's/^/  | /') &
maker=$!
window=
while [ -z "$window" ]; do
  window=$(DISPLAY=$display xdotool search --onlyvisible --class holodesk 2>/dev/null | head -1) \
    || true
  [ -n "$window" ] && break
  kill -0 "$maker" 2>/dev/null || fail "make run ended without showing a window (log above)"
  [ "$(seconds_since "$run_started")" -lt "$run_timeout" ] \
    || fail "no holodesk window within ${run_timeout} s"
  sleep 0.5
done
window_at=$(date +%s.%N)
run_seconds=$(seconds_since "$run_started")
echo "window $window \"$(DISPLAY=$display xdotool getwindowname "$window")\" after ${run_seconds} s"
# The longest stretch with nothing new on the screen while make run installs, from its start to
# make's `.venv/bin/holodesk` line; from there to the window is the app's own start, told apart.
read -r silence app_start silent_after < <(awk -F'\t' -v start="$run_started" -v end="$window_at" '
  BEGIN { last = start; longest = 0; after = "(the start)"; app = end }
  app == end && $1 <= end {
    if ($1 - last > longest) { longest = $1 - last; after = prev }
    last = $1; prev = $2
    if ($2 ~ /bin\/holodesk/) app = $1
  }
  END { if (app == end && end - last > longest) { longest = end - last; after = prev }
        printf "%.1f %.1f %s\n", longest, end - app, after }' "$stamps")
echo "longest silence while make run installs: ${silence} s, after: ${silent_after}"
echo "holodesk's own start, from make starting it to its window: ${app_start} s"
if ! awk -v s="$silence" -v max="$max_silence" 'BEGIN { exit !(s <= max) }'; then
  said="make run was silent for ${silence} s (more than ${max_silence} s), after: ${silent_after}"
  [ "${FRESH_SILENCE_FAILS:-1}" = 0 ] || fail "$said"
  echo "warning: $said"
fi
# What `make run` must not have needed: a compiler, Python's headers, evdev (pynput's uinput).
for tool in gcc cc x86_64-linux-gnu-gcc; do
  [ ! -e "$work/usr/bin/$tool" ] || fail "make run installed a C compiler ($tool)"
done
[ ! -e "$work/usr/include/python3.11/Python.h" ] || fail "make run installed Python's headers"
in_root "$work" 0:0 "$src/.venv/bin/python" -c \
  'import importlib.util as u, sys; sys.exit(u.find_spec("evdev") is not None)' \
  || fail "evdev is installed in the runtime environment"
in_root "$work" 0:0 "$src/.venv/bin/python" -c \
  'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in ("pytest", "mypy", "ruff", "keyrings")))' \
  || fail "make run installed developer tools or keyrings.alt"
echo "no compiler, no Python headers, no evdev, no developer tools in the runtime environment"
# The app quits cleanly on SIGTERM (it stops a run first); then nothing of it may be left.
for proc in /proc/[0-9]*; do
  [ "$(readlink "$proc/root" 2>/dev/null)" = "$work" ] \
    && grep -q "bin/holodesk" "$proc/cmdline" 2>/dev/null && kill -TERM "${proc#/proc/}"
done
wait "$maker" || true
umount "$work/tmp/.X11-unix/X$number"
unset 'mounted[${#mounted[@]}-1]'
kill "$xvfb_pid" 2>/dev/null; xvfb_pid=

if [ "${FRESH_TEST:-1}" = 0 ]; then  # while working on the install itself: make run only
  unmount_root "$work"
  rm -rf "$work"
  step "fresh-check passed (make test left out: FRESH_TEST=0): make run reached a window in" \
    "${run_seconds} s"
  exit 0
fi

step "make test inside the root (installs the test packages and tools there)"
test_started=$(date +%s)
set +e
if [ -n "${FRESH_TEST_ARGS:-}" ]; then
  in_root "$work" 0:0 make -C "$src" test PYTEST_ARGS="$FRESH_TEST_ARGS" 2>&1 \
    | tee "$log_dir/test.log" | sed -u 's/^/  | /'
else
  in_root "$work" 0:0 make -C "$src" test 2>&1 | tee "$log_dir/test.log" | sed -u 's/^/  | /'
fi
status=${PIPESTATUS[0]}
set -e
test_seconds=$(($(date +%s) - test_started))
[ "$status" -eq 0 ] || fail "make test failed in the fresh root (log: $log_dir/test.log)"

unmount_root "$work"
rm -rf "$work"
step "fresh-check passed: make run reached a window in ${run_seconds} s, make test took ${test_seconds} s"
exit 0
}
