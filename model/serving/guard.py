"""A small supervisor between holodesk and ``vllm serve``: vLLM never outlives holodesk.

:class:`model.serving.launcher.VLLMServer` does not run vLLM directly but this module, as a
new session leader, with vLLM's argv after ``--``::

    python -P .../model/serving/guard.py --parent PID --parent-start TICKS --status-fd FD \\
        -- vllm serve Hcompany/Holotron-12B ...

Why: vLLM holds ~25 GB of GPU memory. If holodesk is SIGKILLed or the GUI crashes, nothing
stops a vLLM in its own session, and the next Start finds a server it does not own and cannot
stop. ``PR_SET_PDEATHSIG`` set in holodesk's child would tie vLLM to the *thread* that forked
it (a worker thread in the GUI, which ends long before holodesk does), and ``preexec_fn`` is
not safe in a process with threads. This guard has no threads, so here both are fine.

What it does:

* starts vLLM as its child, in its own process group (the guard leads it, so holodesk can
  still signal the whole group at once), stdin closed, stdout and stderr inherited (the log);
* reports on ``--status-fd`` one line, ``started PID`` or ``error ERRNO TEXT``, then closes it;
* forwards SIGINT, SIGTERM (and SIGHUP as SIGTERM) to every other process of its group, as a
  Ctrl+C in a terminal reaches vLLM and its engine workers;
* every ``--poll`` seconds checks that holodesk is alive: its parent pid unchanged (a dead
  parent means reparenting, which pid reuse cannot fake) and, where ``/proc`` exists, the
  parent's start time unchanged. When holodesk is gone it stops vLLM as
  :meth:`~model.serving.launcher.VLLMServer.stop` would: SIGINT, then SIGTERM, then SIGKILL,
  each after its timeout;
* before exiting, stops whatever vLLM left in the group (SIGTERM, then SIGKILL) and exits with
  vLLM's code (killed by a signal: by the same signal), so holodesk sees vLLM's exit status;
* sets ``PR_SET_PDEATHSIG`` (SIGTERM) in vLLM, so a SIGKILL of the guard itself still stops it.

Standard library only and run by file path with ``-P``: nothing in the current directory (a
person's own ``model/`` package) can shadow it, and nothing of holodesk is imported into it.
The frozen app has no such Python: there its own binary runs :func:`main`, given
:data:`FROZEN_SUBCOMMAND` first, and vLLM gets the environment without the bundle's library
path (:func:`external_environ`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

__all__ = [
    "FROZEN_SUBCOMMAND",
    "LOG_PREFIX",
    "StopTimeouts",
    "external_environ",
    "main",
    "parent_alive",
    "process_start_time",
]

LOG_PREFIX = "# holodesk serve: "
"""Lines holodesk itself writes into vLLM's log start with this (not vLLM's words)."""

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

FROZEN_SUBCOMMAND = "--serve-guard"
"""The frozen app has no Python to run this file with: its own binary runs the guard when given
this hidden first argument (ui/main.py routes it here)."""


def external_environ(
    base: dict[str, str] | None = None, *, frozen: bool | None = None
) -> dict[str, str]:
    """``base`` (default ``os.environ``) as a program outside a frozen holodesk should see it.

    PyInstaller's bootloader points ``LD_LIBRARY_PATH`` at the bundle's libraries (keeping the
    person's value in ``LD_LIBRARY_PATH_ORIG``) and sets ``_PYI_*`` variables. vLLM, pip or the
    system Python given that would load the bundle's libraries instead of their own. Outside a
    frozen build: unchanged.
    """
    env = dict(os.environ if base is None else base)
    if not (getattr(sys, "frozen", False) if frozen is None else frozen):
        return env
    original = env.pop("LD_LIBRARY_PATH_ORIG", None)
    env.pop("LD_LIBRARY_PATH", None)
    if original:
        env["LD_LIBRARY_PATH"] = original
    for key in [k for k in env if k.startswith(("_PYI_", "_MEIPASS"))]:
        del env[key]
    return env


@dataclass(frozen=True)
class StopTimeouts:
    """Seconds to wait after SIGINT, after SIGTERM, and after SIGKILL."""

    after_int: float = 30.0
    after_term: float = 10.0
    after_kill: float = 5.0


def _forwarded() -> dict[signal.Signals, signal.Signals]:
    # Built when run, not at import: the launcher imports this module on every platform, and
    # Windows has no SIGHUP. A SIGHUP becomes a SIGTERM: vLLM would die of it uncleanly.
    return {signal.SIGINT: signal.SIGINT, signal.SIGTERM: signal.SIGTERM,
            signal.SIGHUP: signal.SIGTERM}  # fmt: skip


def _say(text: str) -> None:
    # Into vLLM's log (our stderr), marked as ours so failure explanations skip it.
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{LOG_PREFIX}{text}\n")
        sys.stderr.flush()


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` from field 3 (state) on; None without /proc or such a process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    return stat.rsplit(")", 1)[-1].split()


def process_start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc`` field 22); None if unknown."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields is not None else None
    except (IndexError, ValueError):
        return None


def parent_alive(pid: int, start_time: int | None, *, direct: bool) -> bool:
    """Whether the process ``pid`` (started at ``start_time`` when known) still runs.

    ``direct``: it is our parent, so a changed :func:`os.getppid` (we were reparented) means
    it is gone, whatever process may have its pid by now.
    """
    if direct and os.getppid() != pid:
        return False
    fields = _stat_fields(pid)
    if fields is not None:
        if fields[0] in ("Z", "X"):  # exited, not yet reaped
            return False
        return start_time is None or process_start_time(pid) == start_time
    if Path("/proc/self/stat").exists():
        return False  # /proc works and has no such process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_members() -> list[int] | None:
    """Live processes of our group other than us; None where there is no /proc."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    me, group = os.getpid(), os.getpgrp()
    found: list[int] = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        fields = _stat_fields(int(entry.name))
        with contextlib.suppress(IndexError, ValueError):
            if fields is not None and int(fields[2]) == group and fields[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def _send(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _signal_group(child: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """``sig`` to every process of our group but us (to vLLM alone without /proc)."""
    members = _group_members()
    if members is None:
        members = [child.pid] if child.poll() is None else []
    for pid in members:
        _send(pid, sig)


def _reap_group(term_timeout: float, kill_timeout: float) -> None:
    """SIGTERM, then SIGKILL, whatever vLLM left behind in our group (its engine workers)."""
    members = _group_members()
    if not members:
        return
    _say(f"stopping {len(members)} process(es) vLLM left behind")
    for pid in members:
        _send(pid, signal.SIGTERM)
    for sig, timeout in ((signal.SIGKILL, term_timeout), (None, kill_timeout)):
        deadline = time.monotonic() + timeout
        while (members := _group_members() or []) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not members or sig is None:
            return
        for pid in members:
            _send(pid, sig)


def _stop_child(child: subprocess.Popen[bytes], timeouts: StopTimeouts) -> None:
    """SIGINT (vLLM's clean shutdown), SIGTERM, SIGKILL: each after the previous timed out."""
    for sig, wait in ((signal.SIGINT, timeouts.after_int), (signal.SIGTERM, timeouts.after_term)):
        if child.poll() is not None:
            return
        _signal_group(child, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(wait)
    if child.poll() is None:
        _say(f"vLLM (pid {child.pid}) ignored SIGINT and SIGTERM; killing it")
        child.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeouts.after_kill)


def _death_signal_setter(guard_pid: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` making vLLM get SIGTERM when the guard dies (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: the launcher imports this module for every `holodesk` command

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here, not after fork
    except (OSError, AttributeError):
        return None

    def set_death_signal() -> None:
        # Between fork and exec, in the guard's only thread: safe here (not in the GUI).
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != guard_pid:  # the guard died before prctl took effect
            os._exit(1)

    return set_death_signal


def _exit_like(code: int) -> int:
    """vLLM's exit code as ours: a death by signal N is repeated on ourselves."""
    if code >= 0:
        return code
    sig = -code
    with contextlib.suppress(OSError, ValueError):  # SIGKILL's disposition cannot be set
        signal.signal(sig, signal.SIG_DFL)
    with contextlib.suppress(OSError):
        os.kill(os.getpid(), sig)
        time.sleep(1.0)  # the signal ends us before this sleep does
    return 128 + sig


def _report(fd: int | None, line: str) -> None:
    if fd is None:
        return
    with contextlib.suppress(OSError):
        os.write(fd, (line + "\n").encode("utf-8", errors="replace"))
    with contextlib.suppress(OSError):
        os.close(fd)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="serve_guard", description="Run a command; stop it when --parent exits."
    )
    p.add_argument(
        "--parent", type=int, required=True, help="stop the command when this process is gone"
    )
    p.add_argument(
        "--parent-start",
        type=int,
        default=None,
        help="its start time (/proc field 22), against pid reuse",
    )
    p.add_argument(
        "--status-fd",
        type=int,
        default=None,
        help="write 'started PID' or 'error ERRNO TEXT' here, then close it",
    )
    p.add_argument("--poll", type=float, default=0.5, help="seconds between parent checks")
    p.add_argument("--int-timeout", type=float, default=30.0)
    p.add_argument("--term-timeout", type=float, default=10.0)
    p.add_argument("--kill-timeout", type=float, default=5.0)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command after ``--`` until it exits or the parent does; its exit code."""
    args = _parser().parse_args(argv)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        _parser().error("no command after --")
    timeouts = StopTimeouts(args.int_timeout, args.term_timeout, args.kill_timeout)
    direct = os.getppid() == args.parent
    if os.getpgrp() != os.getpid():
        # We signal "our group": it must be vLLM's alone, never the shell's that ran us.
        os.setsid()

    child: subprocess.Popen[bytes] | None = None
    pending: list[signal.Signals] = []
    forwarded = _forwarded()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        sig = forwarded[signal.Signals(signum)]
        if child is None:
            pending.append(sig)
        else:
            _signal_group(child, sig)

    for sig in forwarded:
        signal.signal(sig, on_signal)

    if not parent_alive(args.parent, args.parent_start, direct=direct):
        _report(args.status_fd, "error 0 holodesk exited before vLLM was started")
        return 1
    try:
        child = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, preexec_fn=_death_signal_setter(os.getpid()),
            env=external_environ(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        code = getattr(exc, "errno", None) or 0
        text = getattr(exc, "strerror", None) or str(exc)
        _report(args.status_fd, f"error {code} {text}")
        return 127
    _report(args.status_fd, f"started {child.pid}")
    for sig in pending:
        _signal_group(child, sig)

    while True:
        try:
            code = child.wait(args.poll)
            break
        except subprocess.TimeoutExpired:
            pass
        if not parent_alive(args.parent, args.parent_start, direct=direct):
            _say(f"holodesk (pid {args.parent}) is gone; stopping vLLM (pid {child.pid})")
            _stop_child(child, timeouts)
    _reap_group(timeouts.after_term, timeouts.after_kill)
    return _exit_like(code)


if __name__ == "__main__":
    sys.exit(main())
