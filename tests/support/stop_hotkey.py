"""One emergency-stop trial: `holodesk run` types a long text, the stop hotkey cuts it short.

Shared by tests/e2e/test_stop_hotkey_x11.py (one trial, loose bounds) and bench/stop.py (many
trials against the 100 ms target). The target app logs every key event with ``t``
(``time.monotonic()``, comparable across processes on Linux); the hotkey time is taken just
before xdotool starts, so the measured latency includes xdotool's own start-up.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.e2e import start_holodesk, wait_exit
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.home import Home
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb

#: Digits only: Tk's entry has no Ctrl/Alt bindings for them, so a character that arrives
#: while the chord's modifiers are already down inserts nothing instead of editing the field
#: (Ctrl+H would erase, Ctrl+A select all), and the typed text stays a prefix. 3000 of them,
#: about 20 s of typing: a loaded machine, where the target app (and so the test) sees the
#: typing late, cannot finish it before the stop lands.
LONG_TEXT = "0123456789" * 300

# Keysyms the chord itself produces (xdotool's presses, not holodesk's input).
_CHORD_KEYSYMS = {"Control_L", "Control_R", "Alt_L", "Alt_R", "Meta_L", "Meta_R", "Shift_L",
                  "Shift_R", "Escape", "Super_L", "Super_R", "ISO_Level3_Shift"}


@dataclass
class StopTrial:
    """What one trial saw."""

    code: int
    stderr: str
    typed: str  # the field's text once the run had ended and its input had all arrived
    typed_later: str  # ... and after one more round trip to the target app
    hotkey_at: float  # monotonic, just before xdotool ran
    chord_at: float | None  # when the target app got the chord's last key (its Escape/key)
    last_input_at: float | None  # the last key event holodesk caused
    held_keysyms: list[str]  # holodesk's keys whose last event in the target app is a press
    keycodes_down: list[int]  # keys the X server holds down once the run has ended

    @property
    def latency_ms(self) -> float:
        """Hotkey (before xdotool) to the last input holodesk sent."""
        if self.last_input_at is None:
            return 0.0
        return max(0.0, (self.last_input_at - self.hotkey_at) * 1000)

    @property
    def after_chord_ms(self) -> float | None:
        """The chord's arrival at the X server's client to the last input (no xdotool start)."""
        if self.last_input_at is None or self.chord_at is None:
            return None
        return (self.last_input_at - self.chord_at) * 1000


def focus_field(xvfb: Xvfb, app: RunningApp) -> None:
    """Click into the text field so holodesk's typing lands there."""
    x, y = app.widgets["field"].solid_center
    mark = app.mark()
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"],
                   env=xvfb.env(), check=True)
    app.wait_for(lambda: app.events_since(mark, "focus_in", widget="field")
                 or app.events_since(mark, "pointer_press"), what="field focus")


def _typed_since(app: RunningApp, mark: int) -> str:
    changes = app.events_since(mark, "text", widget="field")
    return str(changes[-1]["value"]) if changes else ""


def run_stop_trial(
    xvfb: Xvfb,
    app: RunningApp,
    home: Home,
    workdir: Path,
    *,
    xdotool_keys: str = "ctrl+alt+shift+Escape",
    chord_keysyms: frozenset[str] = frozenset(),
    min_chars: int = 20,
    text: str = LONG_TEXT,
) -> StopTrial:
    """Start a run that types ``text`` (clearing the field first), press the hotkey once
    ``min_chars`` arrived, and collect what the target app saw."""
    focus_field(xvfb, app)
    mark = app.mark()
    script = ScriptedPolicy([
        {"thought": "type it", "action": {"action": "type", "text": text, "clear_first": True}},
        {"thought": "done", "action": {"action": "answer", "text": "typed"}},
    ])
    with FakeVLLM(script) as server:
        proc = start_holodesk(home, "run", "type a lot", "--confirm", "never",
                              "--endpoint", server.base_url, xvfb=xvfb, workdir=workdir)
        try:
            app.wait_for(lambda: len(_typed_since(app, mark)) >= min_chars, timeout=60,
                         what="typing to start")
            hotkey_at = time.monotonic()
            subprocess.run(["xdotool", "key", xdotool_keys], env=xvfb.env(), check=True)
            code = wait_exit(proc, timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
    app.sync()  # every key the ended run sent has been handled
    typed = _typed_since(app, mark)
    app.sync()
    typed_later = _typed_since(app, mark)
    chord = _CHORD_KEYSYMS | chord_keysyms
    keys: list[dict[str, Any]] = app.events_since(mark, "key_down") + app.events_since(
        mark, "key_up")
    ours = [e["t"] for e in keys if e["keysym"] not in chord]
    chord_downs = [e["t"] for e in app.events_since(mark, "key_down")
                   if e["keysym"] in chord and e["t"] >= hotkey_at]
    return StopTrial(
        code=code,
        stderr=(workdir / "stderr").read_text(),
        typed=typed,
        typed_later=typed_later,
        hotkey_at=hotkey_at,
        chord_at=max(chord_downs) if chord_downs else None,
        last_input_at=max(ours) if ours else None,
        # The chord's own keys are the person's: reserved for holodesk (an X grab), the
        # releases of those still down when it fires go to holodesk, as with any desktop
        # shortcut; keycodes_down is what proves no key stays held.
        held_keysyms=[k for k in _held(keys) if k not in chord],
        keycodes_down=keycodes_down(xvfb),
    )


def _held(keys: list[dict[str, Any]]) -> list[str]:
    # Counting downs against ups does not work: with Alt down, Tk's default <Alt-Key> binding
    # on "all" (menu traversal) shadows the app's <KeyPress> logger, so some presses go
    # unlogged while their releases are. A key still held is one whose last event is a press.
    last: dict[str, str] = {}
    for event in sorted(keys, key=lambda e: float(e["t"])):
        last[str(event["keysym"])] = str(event["type"])
    return sorted(k for k, kind in last.items() if kind == "key_down")


_KEYMAP = (
    "from Xlib import display\n"
    "bits = display.Display().query_keymap()\n"
    "print(' '.join(str(i * 8 + b) for i, byte in enumerate(bits) for b in range(8)"
    " if byte >> b & 1))\n"
)


def keycodes_down(xvfb: Xvfb) -> list[int]:
    """The keycodes the X server has down now (XTEST presses outlive the client that made
    them, so a key holodesk left held shows up here even after it exited)."""
    out = subprocess.run([sys.executable, "-c", _KEYMAP], env=xvfb.env(), check=True,
                         capture_output=True, text=True, timeout=30).stdout
    return [int(k) for k in out.split()]
