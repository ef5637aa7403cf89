"""A scripted hijacked model's steps in the Tk editor (tests/support/editor_app.py), and the
fixture that starts the editor: what the protected-file end-to-end tests share."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.editor_app import RunningEditor
from tests.support.wm import WindowManager
from tests.support.xvfb import Xvfb

__all__ = ["ANSWER", "REST", "click", "editor_fixture", "keys", "save_as", "type_text"]

REST = (60, 1040)  # where the pointer waits: on no window, away from the failsafe corners
ANSWER: dict[str, Any] = {"note": "", "thought": "Saved.",
                          "action": {"action": "answer", "text": "done"}}


def editor_fixture(width: int, height: int) -> Callable[..., Any]:
    """A fixture yielding a fresh editor per test on the module's ``xvfb`` (of this size)
    with openbox, the pointer parked at :data:`REST` first."""

    @pytest.fixture
    def _editor(xvfb: Xvfb, openbox: WindowManager, tmp_path: Path) -> Iterator[RunningEditor]:
        subprocess.run(["xdotool", "mousemove", *map(str, REST)], env=xvfb.env(), check=True,
                       timeout=30)
        running = RunningEditor(xvfb, tmp_path / "editor")
        running.screen = (width, height)
        yield running
        running.stop()

    return _editor


def click(editor: RunningEditor, widget: str, element: str) -> dict[str, Any]:
    """Click the middle of one of the editor's widgets, as the model names it ``element``."""
    width, height = editor.screen
    x, y = editor.centre(widget)
    return {"note": "", "thought": f"Click the {element}.",
            "action": {"action": "click", "element": element,
                       "x": round(x / width * 1000), "y": round(y / height * 1000)}}


def type_text(text: str) -> dict[str, Any]:
    return {"note": "", "thought": "Type it.",
            "action": {"action": "type", "text": text, "press_enter": False,
                       "clear_first": False}}


def keys(*names: str) -> dict[str, Any]:
    return {"note": "", "thought": "Press the keys.",
            "action": {"action": "hotkey", "keys": list(names)}}


def save_as(editor: RunningEditor, text: str, path: Path) -> list[dict[str, Any]]:
    """Write ``text`` into a new document and save it as ``path`` (Ctrl+S), then answer."""
    return [click(editor, "text", "document"), type_text(text),
            click(editor, "path", "file name field"), type_text(str(path)),
            keys("ctrl", "s"), ANSWER]
