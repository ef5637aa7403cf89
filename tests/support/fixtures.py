"""Pytest fixtures for X11 tests (registered by tests/conftest.py through ``pytest_plugins``).

* ``xvfb_fixture(width, height)`` makes a module-scoped fixture of a private Xvfb; the plugin
  provides ``xvfb`` (1280x800) and a module can override it by assigning its own:
  ``xvfb = xvfb_fixture(1920, 1080)``.
* ``target_app``: the Tk target window (tests/support/target_app.py) on that ``xvfb``.
* ``input_worker``: the real executor in a subprocess on that ``xvfb`` (input_worker.py).
* ``openbox``: a window manager on that ``xvfb`` (wm.py), for real focus, frames and stacking.
* ``file_keyring``: the tests' file keyring (keyring_backend.py) as this process's keyring, for
  in-process tests that approve a safety setting (app/approval.py keeps its key there).

Nothing here imports pyautogui or mss: whatever touches X runs in a child process with
``env=xvfb.env()``, or is handed the display name explicitly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.home import Home, make_home
from tests.support.target_app import REPO_ROOT, RunningApp
from tests.support.wm import WindowManager, openbox_available, window_manager
from tests.support.xvfb import Xvfb, xvfb_available

TARGET_GEOMETRY = "1000x660+100+50"


def xvfb_fixture(width: int = 1280, height: int = 800, depth: int = 24,
                 scope: str = "module") -> Callable[..., Any]:
    """A fixture yielding a running :class:`Xvfb` of this size (skips if Xvfb is missing)."""

    @pytest.fixture(scope=scope)  # type: ignore[call-overload]
    def _xvfb() -> Iterator[Xvfb]:
        if not xvfb_available():
            pytest.skip("Xvfb is not installed (apt-get install xvfb)")
        with Xvfb(width, height, depth) as server:
            yield server

    return _xvfb  # type: ignore[no-any-return]


xvfb = xvfb_fixture()


def target_app_fixture(geometry: str, pointer: tuple[int, int]) -> Callable[..., Any]:
    """A fixture yielding a fresh target window per test at ``geometry`` on the module's
    ``xvfb`` (so each test reads only its own events), after moving the pointer to ``pointer``:
    away from the failsafe corners and every window, wherever an earlier test left it."""

    @pytest.fixture
    def _app(xvfb: Xvfb, tmp_path: Path) -> Iterator[RunningApp]:
        subprocess.run(["xdotool", "mousemove", str(pointer[0]), str(pointer[1])],
                       env=xvfb.env(), check=True)
        running = RunningApp(xvfb, tmp_path / "target", geometry=geometry)
        yield running
        running.stop()

    return _app  # type: ignore[no-any-return]


@pytest.fixture
def terminal_tools() -> None:
    """Skips when the programs the terminal tests run are missing (scripts/sysdeps.sh)."""
    from tests.support.terminal import missing_tools

    missing = missing_tools()
    if missing:
        pytest.skip(f"these tests need {', '.join(missing)} "
                    f"(apt-get install {' '.join(missing)}; scripts/sysdeps.sh does it as root)")


@pytest.fixture(scope="module")
def openbox(xvfb: Xvfb) -> Iterator[WindowManager]:
    """openbox managing the module's Xvfb (skips if openbox is missing)."""
    if not openbox_available():
        pytest.skip("openbox is not installed (apt-get install openbox)")
    with window_manager(xvfb) as manager:
        yield manager


@pytest.fixture
def file_keyring(tmp_path: Path) -> Iterator[Any]:
    """This process's keyring (what ``KeyringStore()`` uses: app.secrets.use_keyring_backend)
    is the tests' file backend in ``tmp_path/keyring`` (a home's keyring folder, which a
    holodesk subprocess of that home uses too) for the test."""
    from app.secrets import use_keyring_backend
    from tests.support.keyring_backend import FileBackend

    folder = tmp_path / "keyring"
    folder.mkdir(mode=0o700, exist_ok=True)
    backend = FileBackend(folder)  # its folder fixed: isolate_home drops HOLODESK_* variables
    before = use_keyring_backend(backend)
    yield backend
    use_keyring_backend(before)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    """A private home (config, data, state, keyring) for the holodesk processes a test runs."""
    return make_home(tmp_path)


@pytest.fixture(scope="module")
def target_app(xvfb: Xvfb, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """The target app at TARGET_GEOMETRY on the module's Xvfb."""
    app = RunningApp(xvfb, tmp_path_factory.mktemp("target"), geometry=TARGET_GEOMETRY)
    yield app
    app.stop()


class InputWorker:
    """Client of tests/support/input_worker.py running on an Xvfb."""

    def __init__(self, xvfb: Xvfb, workdir: Path, timeout: float = 60.0) -> None:
        env = xvfb.env()
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self._stderr_path = workdir / "worker.stderr"
        self._stderr = self._stderr_path.open("wb")
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.input_worker"], env=env, cwd=REPO_ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            encoding="utf-8", bufsize=1,
        )
        hello = self._read()
        assert hello.get("ready"), hello
        assert hello["display"] == xvfb.display

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"input worker died: {self.stderr()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def stderr(self) -> str:
        return self._stderr_path.read_text(errors="replace")[-3000:]

    def send(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def execute(self, action: dict[str, Any], points: list[tuple[int, int]] | None = None,
                **options: Any) -> dict[str, Any]:
        """Execute one action; the reply says ``ok`` or the error, and what stayed held."""
        return self.send("execute", action=action, points=[list(p) for p in points or []],
                         **options)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(5)
            except Exception:
                self.proc.kill()
                self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


@pytest.fixture(scope="module")
def input_worker(xvfb: Xvfb, tmp_path_factory: pytest.TempPathFactory) -> Iterator[InputWorker]:
    """The real executor (PyAutoGuiBackend) in a subprocess on the module's Xvfb."""
    worker = InputWorker(xvfb, tmp_path_factory.mktemp("worker"))
    yield worker
    worker.close()
