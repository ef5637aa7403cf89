"""app.runner: the desktop lock, the session's life and the stop signals of a foreground run."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app import runner
from app.lock import DesktopBusyError
from app.run_request import RunRequest, make_run_request
from app.settings import Settings
from control.stop import StopLatch
from tests.support.fake_hotkeys import FakeHotkeys
from tests.support.home import isolate_home


@dataclass
class FakeSession:
    """What open_run and foreground use of a Session."""

    settings: Settings
    latch: StopLatch = field(default_factory=StopLatch)
    closers: list[Callable[[], None]] = field(default_factory=list)
    closed: bool = False

    def on_close(self, closer: Callable[[], None], *, last: bool = False) -> None:
        self.closers.append(closer)

    def close(self) -> None:
        self.closed = True
        for closer in self.closers:
            closer()


def lock_is_free() -> bool:
    try:
        with runner.desktop_lock():
            return True
    except DesktopBusyError:
        return False


@pytest.fixture
def fake_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[FakeSession]:
    import app.session

    isolate_home(monkeypatch, tmp_path)
    built: list[FakeSession] = []

    def build(request: RunRequest, *_args: object, **_kwargs: object) -> FakeSession:
        assert not lock_is_free()  # built inside the lock
        session = FakeSession(request.settings)
        built.append(session)
        return session

    monkeypatch.setattr(app.session, "build_session", build)
    return built


def test_the_session_holds_the_desktop_until_it_closes(fake_build: list[FakeSession]) -> None:
    session = runner.open_run(make_run_request(Settings(), "click Save"))
    assert session is fake_build[0]  # type: ignore[comparison-overlap]
    assert not lock_is_free()
    with pytest.raises(DesktopBusyError, match="another holodesk run"):
        runner.open_run(make_run_request(Settings(), "a second run"))
    session.close()
    assert lock_is_free()


def test_a_session_that_cannot_be_built_leaves_the_desktop_free(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_home(monkeypatch, tmp_path)

    def no_backend(_latch: StopLatch) -> object:
        raise RuntimeError("no display for pyautogui")

    with pytest.raises(RuntimeError, match="no display"):
        runner.open_run(make_run_request(Settings(), "click Save"),
                        backend=no_backend)  # type: ignore[arg-type]
    assert lock_is_free()


def test_stop_signals_call_back_and_restore_the_previous_handlers() -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    got: list[signal.Signals] = []
    with runner.stop_signals(got.append) as installed:
        assert installed
        os.kill(os.getpid(), signal.SIGTERM)
        assert got == [signal.SIGTERM]
        # After the first, a Ctrl+C kills at once, should the stop ever hang.
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_stop_signals_may_keep_catching_ctrl_c() -> None:
    got: list[signal.Signals] = []
    with runner.stop_signals(got.append, second_interrupt_kills=False):
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
    assert got == [signal.SIGINT, signal.SIGINT]


def test_stop_signals_do_nothing_off_the_main_thread() -> None:
    before = signal.getsignal(signal.SIGTERM)
    seen: list[bool] = []

    def work() -> None:
        with runner.stop_signals(lambda _sig: None) as installed:
            seen.append(installed)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [False]
    assert signal.getsignal(signal.SIGTERM) is before


def test_foreground_stops_on_a_signal_and_closes_the_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listening: list[str] = []

    @contextmanager
    def stop_hotkey(combo: str, latch: StopLatch) -> Iterator[bool]:
        listening.append(combo)
        yield True
        listening.remove(combo)

    monkeypatch.setattr(runner, "stop_hotkey", stop_hotkey)
    session = FakeSession(Settings(stop_hotkey="ctrl+alt+shift+f12"))
    before = signal.getsignal(signal.SIGTERM)
    with runner.foreground(session):  # type: ignore[arg-type]
        assert listening == ["ctrl+alt+shift+f12"]
        os.kill(os.getpid(), signal.SIGTERM)
        assert session.latch.is_set
        assert not session.closed
    assert session.closed and not listening
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_stop_hotkey_stops_a_foreground_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """`holodesk run`'s global stop hotkey, as app/runner.py wires it to the desktop's
    listener (a stand-in here: tests/support/fake_hotkeys.py): while the run is in the
    foreground, the person's chord, in any spelling, pulls the run's stop; after it the
    listener is let go. e2e/test_stop_hotkey_x11.py presses it for real."""
    import control.hotkeys_desktop

    listener = FakeHotkeys()
    monkeypatch.setattr(control.hotkeys_desktop, "system_hotkeys",
                        lambda *_args, **_kwargs: listener)
    session = FakeSession(Settings(stop_hotkey="ctrl+shift+f9"))
    with runner.foreground(session):  # type: ignore[arg-type]
        assert not session.latch.is_set
        assert listener.fire("Shift+Ctrl+F9")
        assert session.latch.is_set
        info = session.latch.info
        assert info is not None and info.source == "hotkey"
    assert not listener.running


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="the platform has no SIGHUP")
def test_a_hangup_stops_like_sigterm() -> None:
    """The terminal that started holodesk closing must not kill it with a button held."""
    before = signal.getsignal(signal.SIGHUP)
    got: list[signal.Signals] = []
    with runner.stop_signals(got.append):
        os.kill(os.getpid(), signal.SIGHUP)
    assert got == [signal.SIGHUP]
    assert signal.getsignal(signal.SIGHUP) is before
