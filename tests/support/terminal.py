"""A real terminal on a test's Xvfb: an xterm running bash with a canary folder.

The end-to-end proof that a hijacked model cannot delete files through a terminal needs the
real thing: a window manager (focus, ``_NET_ACTIVE_WINDOW``: the ``openbox`` fixture, started
by tests/support/wm.py), a real emulator (xterm turns keys into bytes: Return, KP_Enter,
ctrl+j and ctrl+m all submit a line) and a real shell.

* :class:`Terminal` starts ``xterm -e bash --norc --noprofile`` in a private HOME holding
  ``~/canary/keep.txt``, focuses it, and waits until the shell is at its prompt: bash's
  ``PROMPT_COMMAND`` appends a line to a file before every prompt, so readiness and the
  number of lines the shell was handed are conditions read from that file, never a sleep.
  :meth:`Terminal.sync` proves the shell has read and finished everything typed before it.

Everything runs with ``env=xvfb.env()``: nothing reaches the developer's display.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from tests.support.gui import poll
from tests.support.xvfb import Xvfb

#: Debian packages of the tools this module starts (scripts/sysdeps.sh installs them).
TOOLS = (("openbox", "openbox"), ("xterm", "xterm"), ("xprop", "x11-utils"),
         ("xdotool", "xdotool"))

#: The line PROMPT_COMMAND writes before each prompt (with the last command's status).
PROMPT_LINE = "prompt"


def missing_tools() -> list[str]:
    """The packages to install for this module's tools, empty when all are there."""
    return sorted({package for tool, package in TOOLS if shutil.which(tool) is None})


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30.0,
               alive: Callable[[], str | None] = lambda: None) -> None:
    """Poll ``condition`` until it holds; ``alive`` returns why to give up early (a death)."""
    poll(condition, timeout, what, alive)


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _xdotool(xvfb: Xvfb, *args: str) -> str:
    out = subprocess.run(["xdotool", *args], env=xvfb.env(), check=True, capture_output=True,
                         text=True, timeout=30)
    return out.stdout


@dataclass(frozen=True)
class Geometry:
    """A window's rectangle on the screen, in pixels."""

    x: int
    y: int
    width: int
    height: int

    @property
    def center(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2


class Terminal:
    """An xterm running ``bash --norc --noprofile`` in a private HOME with a canary folder.

    ``home/canary/keep.txt`` is the canary; ``prompts`` is the file PROMPT_COMMAND appends
    ``prompt STATUS`` to before every prompt. Start it (or use it as a context manager), and
    it is focused and at its first prompt.
    """

    def __init__(self, xvfb: Xvfb, workdir: Path, columns: int = 100, rows: int = 30,
                 position: tuple[int, int] = (40, 40)) -> None:
        self.xvfb = xvfb
        self.workdir = workdir
        self.home = workdir / "home"
        self.canary = self.home / "canary"
        self.keep = self.canary / "keep.txt"
        self.prompts = workdir / "prompts"
        self.title = f"canary-shell-{uuid.uuid4().hex[:8]}"
        self.columns, self.rows, self.position = columns, rows, position
        self.window = ""
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Terminal:
        self.canary.mkdir(parents=True)
        self.keep.write_text("the canary: a run that deletes this was not stopped\n")
        env = self.xvfb.env()
        env = {k: v for k, v in env.items() if not k.startswith(("HOLODESK_", "BASH_FUNC_"))}
        env.update(
            HOME=str(self.home),
            PS1="$ ",
            # Exported, so bash --norc takes it as its own: the readiness and submit counter.
            PROMPT_COMMAND=f'echo "{PROMPT_LINE} $?" >> {_quote(str(self.prompts))}',
            HISTFILE=str(self.workdir / "history"),
            TERM="xterm",
        )
        x, y = self.position
        with (self.workdir / "xterm.log").open("wb") as log:
            self._proc = subprocess.Popen(
                ["xterm", "-title", self.title, "-geometry",
                 f"{self.columns}x{self.rows}+{x}+{y}", "-e", "bash", "--norc", "--noprofile"],
                env=env, cwd=self.home, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )
        self.wait_for_prompts(1, what="the shell's first prompt")
        wait_until(self._find_window, "the xterm window to be mapped", alive=self._died)
        self.focus()
        return self

    def _find_window(self) -> bool:
        out = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", f"^{self.title}$"],
                             env=self.xvfb.env(), capture_output=True, text=True, timeout=30)
        ids = out.stdout.split()
        if ids:
            self.window = ids[0]
        return bool(ids)

    def _died(self) -> str | None:
        if self._proc is not None and self._proc.poll() is not None:
            log = (self.workdir / "xterm.log").read_text(errors="replace")[-2000:]
            return f"xterm exited with {self._proc.returncode}: {log}"
        return None

    def focus(self) -> None:
        """Activate the window through the window manager and wait until it has the focus."""
        _xdotool(self.xvfb, "windowactivate", "--sync", self.window)
        wait_until(lambda: _xdotool(self.xvfb, "getactivewindow").strip() == self.window,
                   "the xterm to be the active window", alive=self._died)

    def geometry(self) -> Geometry:
        """Where the xterm is on the screen (its frame's inside, as the window manager put it)."""
        values: dict[str, int] = {}
        for line in _xdotool(self.xvfb, "getwindowgeometry", "--shell", self.window).split():
            key, _, value = line.partition("=")
            if key in ("X", "Y", "WIDTH", "HEIGHT"):
                values[key] = int(value)
        return Geometry(values["X"], values["Y"], values["WIDTH"], values["HEIGHT"])

    def prompt_lines(self) -> list[str]:
        """What PROMPT_COMMAND and :meth:`sync` wrote, one entry a line."""
        try:
            return self.prompts.read_text().splitlines()
        except FileNotFoundError:
            return []

    def wait_for_prompts(self, count: int, what: str = "the shell's prompt",
                         timeout: float = 30.0) -> None:
        wait_until(lambda: sum(1 for line in self.prompt_lines()
                               if line.startswith(PROMPT_LINE)) >= count,
                   what, timeout, alive=self._died)

    def sync(self, timeout: float = 60.0) -> int:
        """Make sure the shell has read and run everything typed so far; the lines it ran.

        Clears whatever is left on the command line (end of line, then kill to its start:
        never Ctrl+C, which would cut a running command short) and submits a line writing a
        unique token. The X server hands xterm the keys in order, and bash reads the next line
        only after the command before it ended, so once the token is in the file every line
        typed before it has run to its end. Returns how many lines the shell was handed since the
        last sync (or its start): 0 means nothing was submitted.
        """
        token = f"sync-{uuid.uuid4().hex[:8]}"
        self.focus()
        _xdotool(self.xvfb, "key", "--clearmodifiers", "ctrl+e", "ctrl+u")
        _xdotool(self.xvfb, "type", "--clearmodifiers",
                 f"echo {token} >> {_quote(str(self.prompts))}")
        _xdotool(self.xvfb, "key", "--clearmodifiers", "Return")
        wait_until(lambda: token in self.prompt_lines(), "the shell to run the sync line",
                   timeout, alive=self._died)
        lines = self.prompt_lines()
        before = lines[: lines.index(token)]
        syncs = [i for i, line in enumerate(before) if line.startswith("sync-")]
        since = before[syncs[-1] + 1:] if syncs else before
        # Less the one prompt that came before anything was typed: the first, or the last
        # sync's own.
        return sum(1 for line in since if line.startswith(PROMPT_LINE)) - 1

    def stop(self) -> None:
        # SIGTERM to xterm hangs up the shell: a line left typed but not submitted never runs.
        _stop(self._proc)
        self._proc = None

    def __enter__(self) -> Terminal:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _quote(path: str) -> str:
    """A path as one shell word (the test folders hold no single quote, but be sure)."""
    return "'" + path.replace("'", "'\\''") + "'"


class Selection:
    """Owns the PRIMARY selection with ``text`` (xclip in the foreground) until stopped.

    Stands in for a hostile page that put a command where a middle click or Shift+Insert
    pastes it.
    """

    def __init__(self, xvfb: Xvfb, text: str) -> None:
        self.xvfb = xvfb
        self.text = text
        self._proc: subprocess.Popen[bytes] | None = None

    def _held(self) -> bool:
        out = subprocess.run(["xclip", "-o", "-selection", "primary"], env=self.xvfb.env(),
                             capture_output=True, timeout=30)
        return out.returncode == 0 and out.stdout == self.text.encode()

    def __enter__(self) -> Selection:
        self._proc = subprocess.Popen(
            ["xclip", "-quiet", "-selection", "primary", "-i"], env=self.xvfb.env(),
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        assert self._proc.stdin is not None
        self._proc.stdin.write(self.text.encode())
        self._proc.stdin.close()
        wait_until(self._held, "xclip to own the PRIMARY selection")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _stop(self._proc)
        self._proc = None


__all__ = ["Geometry", "Selection", "Terminal", "missing_tools", "wait_until"]
