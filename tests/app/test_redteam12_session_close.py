"""Red team (issue 23): the desktop app's session closes its input backend on every Python
holodesk supports.

The session builder now closes the input backend only when it is a ``Closeable``
(app/parts.py, a ``runtime_checkable`` protocol) where it used to call any ``close`` it could
find (``getattr(backend, "close", None)``). The desktop app's backend is the touch detector's
wrapper (control/touch.py ``TouchAwareBackend``), which passes ``close`` through
``__getattr__``. From Python 3.12 on, ``isinstance`` against a runtime-checkable protocol looks
members up statically (``inspect.getattr_static``): ``__getattr__`` is not consulted, the
wrapper is not a ``Closeable``, and the real backend's ``close`` (its X11 paste connection and
window, control/input.py ``PyAutoGuiBackend.close``) is never called. pyproject.toml allows
Python >= 3.11, so every desktop-app run on 3.12 or 3.13 leaks an X connection until the
X server's client limit refuses new ones.

Fixed: ``TouchAwareBackend`` has a ``close`` of its own (control/touch.py), which closes the
wrapped backend when it holds anything.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import app.session as session_module
from app.parts import Closeable
from app.run_request import make_run_request
from app.session import RealParts, build_session
from app.settings import Settings
from control.capture import ExcludeRects
from control.input import DryRunBackend
from control.touch import TouchAwareBackend, TouchDetector
from tests.support.fake_capturer import FakeCapturer
from tests.support.fake_targets import FakeTargetFinder, window
from tests.support.home import isolate_home

_MISSING = object()


@dataclass
class _HeldBackend(DryRunBackend):
    """A backend that holds something until closed (as the real one's paste connection)."""

    closed: int = 0

    def close(self) -> None:
        self.closed += 1


def _closeable_as_python_3_12_sees_it(obj: object) -> bool:
    """``isinstance(obj, Closeable)`` as Python 3.12 and later decide it: each protocol
    member looked up with ``inspect.getattr_static`` (no ``__getattr__``)."""
    return all(inspect.getattr_static(obj, name, _MISSING) is not _MISSING
               for name in ("close",))


@pytest.fixture
def no_display(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    isolate_home(monkeypatch, tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setattr(session_module, "check_display", lambda: None)

    def capturer(_settings: Settings, *, exclude: ExcludeRects | None = None,
                 display: str | None = None) -> FakeCapturer:
        return FakeCapturer([np.full((200, 300, 3), 200, dtype=np.uint8)], exclude=exclude)

    monkeypatch.setattr(session_module, "make_capturer", capturer)
    yield


def test_the_desktop_apps_wrapped_input_backend_is_closed_with_its_session(
        no_display: None) -> None:
    """Attack: run anything from the desktop app on Python 3.12+. Property: closing the
    session closes the input backend it was given, wrapped by the touch detector as the
    desktop app wraps it (ui/bridge.py ``real_session``)."""
    inner = _HeldBackend()
    wrapped = TouchAwareBackend(inner, TouchDetector(lambda _kind: None))
    # How the session decides, on every supported Python.
    assert isinstance(wrapped, Closeable)
    assert _closeable_as_python_3_12_sees_it(wrapped), (
        "on Python 3.12+ the session would not see the wrapper's close")
    settings: dict[str, Any] = {"endpoint": "http://127.0.0.1:9/v1", "confirm": "always"}
    session = build_session(
        make_run_request(Settings(**settings), "do the task", dry_run=True),
        RealParts(backend=wrapped, finder=FakeTargetFinder(focus=window("Gedit"))))
    session.close()
    assert inner.closed == 1
