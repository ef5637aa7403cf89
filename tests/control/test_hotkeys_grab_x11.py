"""The reserved hotkeys on Xvfb: a grabbed combination fires once and no longer reaches the
window in front; it still fires once while another program holds the whole keyboard (an open
menu), and after the grab's X connection is lost (the person is told); one another program
holds falls back to listening, still fires, and says so. Without the keyboard listener (an X
server without RECORD, or its thread ended) the person is told the hotkeys won't fire while
another program holds the keyboard, and, once the grab is lost too, that they stopped working.

The listener runs in a child process on the test's own Xvfb (its pynput fallback reads
``DISPLAY`` when imported), and prints what it does as JSON lines; the target window
(tests/support/target_app.py) logs every key it receives.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.fixtures import target_app_fixture
from tests.support.gui import poll
from tests.support.stop_hotkey import focus_field
from tests.support.target_app import REPO_ROOT, RunningApp
from tests.support.xvfb import Xvfb

pytestmark = pytest.mark.x11

TIMEOUT = 30.0

app = target_app_fixture("1000x660+0+0", pointer=(1100, 700))

_PROBE = """
import json, logging, socket, sys, threading
from control.hotkeys_desktop import system_hotkeys

said = threading.Lock()  # the grab's and the listener's threads both say things

def say(**fields):
    with said:
        print(json.dumps(fields), flush=True)

class SayPairs(logging.Handler):
    # The second report of a press (grab and listener both heard it), which did not fire.
    def emit(self, record):
        if "the same press again" in record.getMessage():
            say(paired=str(record.args[0]))

logging.getLogger("control.hotkeys_x11").addHandler(SayPairs())
logging.getLogger("control.hotkeys_x11").setLevel(logging.DEBUG)

hk = system_hotkeys(on_fallback=lambda f: say(fallback=f.combo, message=f.message))
for combo in sys.argv[1:]:
    hk.register(combo, lambda combo=combo: say(fired=combo))
hk.start()
say(ready=type(hk).__name__, reserved=getattr(hk, "reserved", []))
for line in sys.stdin:
    command = line.split()
    if command[0] == "stop":
        hk.stop()
        say(stopped=True)
    elif command[0] == "unregister":
        hk.unregister(command[1])
        say(unregistered=command[1])
    elif command[0] == "register":
        hk.register(command[1], lambda combo=command[1]: say(fired=combo))
        say(registered=command[1])
    elif command[0] == "cut-grab-connection":  # as when the server drops the client
        hk._x[3].display.socket.shutdown(socket.SHUT_RDWR)
        say(cut=True)
    elif command[0] == "cut-listener-connection":  # pynput's RECORD thread then ends
        hk._listener._listener._display_record.display.socket.shutdown(socket.SHUT_RDWR)
        say(cut=True)
    elif command[0] == "status":
        say(reserved=hk.reserved, fallbacks=[f.combo for f in hk.fallbacks])
hk.stop()
"""

# Another X client that holds a grab of its own (Ctrl+Alt+J), as a desktop's shortcut would.
_OTHER = """
import sys
from Xlib import X, XK, display
d = display.Display()
code = d.keysym_to_keycode(XK.string_to_keysym("j"))
d.screen().root.grab_key(code, X.ControlMask | X.Mod1Mask, False, X.GrabModeAsync,
                         X.GrabModeAsync)
d.sync()
print("grabbed", flush=True)
sys.stdin.read()
"""


class Probe:
    """The listener process: its JSON lines, read as they come."""

    def __init__(self, xvfb: Xvfb, *combos: str) -> None:
        env = xvfb.env()
        env["PYTHONPATH"] = str(REPO_ROOT)
        self.proc = subprocess.Popen([sys.executable, "-c", _PROBE, *combos], env=env,
                                     cwd=REPO_ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        stdout = self.proc.stdout
        assert stdout is not None
        threading.Thread(target=lambda: [self.lines.put(json.loads(x)) for x in stdout],
                         daemon=True).start()

    def wait(self, key: str, value: Any = None) -> dict[str, Any]:
        """The first line (seen or coming) with ``key`` (equal to ``value`` when given)."""
        deadline = time.monotonic() + TIMEOUT
        index = 0
        while True:
            while index < len(self.seen):
                line = self.seen[index]
                index += 1
                if key in line and (value is None or line[key] == value):
                    return line
            try:
                self.seen.append(self.lines.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                detail = self.proc.stderr.read() if self.proc.poll() is not None and \
                    self.proc.stderr else ""
                raise AssertionError(f"no {key}={value!r} in {self.seen} {detail}") from None

    def fired(self) -> list[str]:
        return self._all("fired")

    def paired(self) -> list[str]:
        """The presses heard a second time (and not fired again)."""
        return self._all("paired")

    def _all(self, key: str) -> list[str]:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return [line[key] for line in self.seen if key in line]

    def wait_count(self, key: str, count: int) -> None:
        """Until ``count`` lines with ``key`` have come."""
        poll(lambda: len(self._all(key)) >= count, TIMEOUT, f"{count} {key} in {self.seen}")

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def probe_factory(xvfb: Xvfb) -> Iterator[Any]:
    made: list[Probe] = []

    def make(*combos: str) -> Probe:
        made.append(Probe(xvfb, *combos))
        return made[-1]

    yield make
    for probe in made:
        probe.close()


def _key(xvfb: Xvfb, keys: str) -> None:
    subprocess.run(["xdotool", "key", keys], env=xvfb.env(), check=True, timeout=TIMEOUT)


def _got(app: RunningApp, mark: int, keysym: str) -> list[dict[str, Any]]:
    """The window's key events for ``keysym`` since ``mark`` (releases too: with Alt down,
    Tk's menu-traversal binding swallows the press before the app's logger sees it)."""
    app.sync()  # every key the server delivered to the window has been logged
    return [e for e in app.events_since(mark) if e["type"] in ("key_down", "key_up")
            and e["keysym"].lower() == keysym]


def test_a_reserved_hotkey_fires_and_does_not_reach_the_window(
    xvfb: Xvfb, app: RunningApp, probe_factory: Any
) -> None:
    probe = probe_factory("ctrl+alt+h")
    ready = probe.wait("ready")
    assert ready == {"ready": "GrabbedHotkeys", "reserved": ["ctrl+alt+h"]}
    focus_field(xvfb, app)

    mark = app.mark()
    _key(xvfb, "h")  # the window does get the key itself: the test can see it arrive
    assert _got(app, mark, "h")

    mark = app.mark()
    _key(xvfb, "ctrl+alt+h")
    probe.wait("fired", "ctrl+alt+h")
    # Whatever else is held, as holodesk's own typing may hold Shift; and with Num Lock on.
    _key(xvfb, "ctrl+alt+shift+h")
    _key(xvfb, "Num_Lock")
    _key(xvfb, "ctrl+alt+h")
    _key(xvfb, "Num_Lock")
    # Grab and listener both heard each press (so no report of them is still to come), and
    # each press fired once.
    probe.wait_count("paired", 3)
    assert probe.fired() == ["ctrl+alt+h"] * 3
    assert _got(app, mark, "h") == []  # the window never saw the H

    probe.send("stop")
    probe.wait("stopped")
    mark = app.mark()
    _key(xvfb, "ctrl+alt+h")
    assert _got(app, mark, "h")  # after stop() the key reaches the window again
    assert probe.fired() == ["ctrl+alt+h"] * 3


def test_unregister_gives_the_key_back(xvfb: Xvfb, app: RunningApp, probe_factory: Any) -> None:
    probe = probe_factory("ctrl+alt+h", "ctrl+alt+k")
    probe.wait("ready")
    focus_field(xvfb, app)
    probe.send("unregister ctrl+alt+h")
    probe.wait("unregistered")
    mark = app.mark()
    _key(xvfb, "ctrl+alt+h")
    _key(xvfb, "ctrl+alt+k")
    probe.wait("fired", "ctrl+alt+k")
    assert _got(app, mark, "h")
    assert _got(app, mark, "k") == []
    assert probe.fired() == ["ctrl+alt+k"]


def test_a_combination_another_program_holds_falls_back_and_still_fires(
    xvfb: Xvfb, app: RunningApp, probe_factory: Any
) -> None:
    env = xvfb.env()
    other = subprocess.Popen([sys.executable, "-c", _OTHER], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None
        assert other.stdout.readline().strip() == "grabbed"
        probe = probe_factory("ctrl+alt+j", "ctrl+alt+h")
        fallback = probe.wait("fallback")
        ready = probe.wait("ready")
        assert fallback["fallback"] == "ctrl+alt+j"
        assert "Ctrl+Alt+J could not be reserved" in fallback["message"]
        assert "also reaches the window in front" in fallback["message"]
        assert ready["reserved"] == ["ctrl+alt+h"]  # the others are still reserved
        focus_field(xvfb, app)
        _key(xvfb, "ctrl+alt+j")
        probe.wait("fired", "ctrl+alt+j")  # heard through the listener
        _key(xvfb, "ctrl+alt+h")
        probe.wait("fired", "ctrl+alt+h")
        assert probe.fired() == ["ctrl+alt+j", "ctrl+alt+h"]
        # Registered again (the app does on every change of the automations): told once.
        probe.send("unregister ctrl+alt+j")
        probe.wait("unregistered")
        probe.send("register ctrl+alt+j")
        probe.wait("registered")
        _key(xvfb, "ctrl+alt+j")
        poll(lambda: len(probe.fired()) >= 3, TIMEOUT, "the third press to fire")
        assert probe.fired() == ["ctrl+alt+j", "ctrl+alt+h", "ctrl+alt+j"]
        assert sum("fallback" in line for line in probe.seen) == 1
    finally:
        other.kill()
        other.wait(10)


# A client that takes the whole keyboard, as an open menu, a drag or a VM viewer does.
_KEYBOARD_GRABBER = """
import sys
from Xlib import X, display
d = display.Display()
w = d.screen().root.create_window(0, 0, 50, 50, 0, d.screen().root_depth)
w.map()
d.sync()
status = w.grab_keyboard(True, X.GrabModeAsync, X.GrabModeAsync, X.CurrentTime)
d.sync()
print("grabbed" if status == X.GrabSuccess else f"refused {status}", flush=True)
sys.stdin.read()
"""

STOP = "ctrl+alt+shift+escape"
STOP_KEYS = "ctrl+alt+shift+Escape"  # xdotool's spelling


def test_the_stop_hotkey_fires_once_while_another_program_holds_the_keyboard(
    xvfb: Xvfb, probe_factory: Any
) -> None:
    probe = probe_factory(STOP, "ctrl+alt+k")
    assert probe.wait("ready")["reserved"] == [STOP, "ctrl+alt+k"]
    grabber = subprocess.Popen([sys.executable, "-c", _KEYBOARD_GRABBER], env=xvfb.env(),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert grabber.stdout is not None
        assert grabber.stdout.readline().strip() == "grabbed"
        _key(xvfb, STOP_KEYS)
        probe.wait("fired", STOP)
        # The listener hears presses in order, and under the other client's grab the server
        # gives the grab nothing: once Ctrl+Alt+K has fired, every report of the stop is in.
        _key(xvfb, "ctrl+alt+k")
        probe.wait("fired", "ctrl+alt+k")
        assert probe.fired() == [STOP, "ctrl+alt+k"]
        assert probe.paired() == []
    finally:
        grabber.kill()
        grabber.wait(10)
    # The grab is back in charge: one press, heard twice, fired once.
    _key(xvfb, STOP_KEYS)
    probe.wait_count("paired", 1)
    assert probe.fired() == [STOP, "ctrl+alt+k", STOP]


def test_one_press_fires_once(xvfb: Xvfb, probe_factory: Any) -> None:
    probe = probe_factory(STOP)
    probe.wait("ready")
    _key(xvfb, STOP_KEYS)
    probe.wait("fired", STOP)
    probe.wait("paired", STOP)  # the second report of the press came, and did not fire
    _key(xvfb, STOP_KEYS)
    probe.wait_count("paired", 2)
    assert probe.fired() == [STOP, STOP]


def test_a_lost_grab_connection_falls_back_to_listening_and_says_so(
    xvfb: Xvfb, app: RunningApp, probe_factory: Any
) -> None:
    probe = probe_factory(STOP, "ctrl+alt+h")
    probe.wait("ready")
    probe.send("cut-grab-connection")  # its thread fails on the next read
    probe.wait_count("fallback", 2)
    told = {line["fallback"]: line["message"] for line in probe.seen if "fallback" in line}
    assert set(told) == {STOP, "ctrl+alt+h"}
    assert "Ctrl+Alt+Shift+Esc could not be reserved" in told[STOP]
    assert "still work" in told[STOP]
    probe.send("status")
    status = probe.wait("fallbacks")
    assert status["reserved"] == [] and sorted(status["fallbacks"]) == sorted(told)
    focus_field(xvfb, app)
    mark = app.mark()
    _key(xvfb, STOP_KEYS)
    _key(xvfb, "ctrl+alt+h")
    probe.wait("fired", "ctrl+alt+h")  # in order: the stop's one report came before
    assert probe.fired() == [STOP, "ctrl+alt+h"]
    assert _got(app, mark, "h")  # only listened for now: the key reaches the window, as told


# -- without the keyboard listener ---------------------------------------------------------


@pytest.fixture(scope="module")
def deaf_xvfb() -> Iterator[Xvfb]:
    """An X server without the RECORD extension: pynput's listener cannot start there (this
    Xvfb then lacks XTEST too, so nothing can be typed on it)."""
    with Xvfb(640, 480, without=("RECORD",)) as server:
        yield server


def test_without_the_listener_the_person_is_told_and_again_when_the_grab_is_lost(
    deaf_xvfb: Xvfb,
) -> None:
    probe = Probe(deaf_xvfb, STOP)
    try:
        told = probe.wait("fallback")
        assert probe.wait("ready")["reserved"] == [STOP]  # still reserved: it fires...
        assert told["fallback"] == STOP
        # ... but not while another program holds the keyboard, which the person is told.
        assert "Ctrl+Alt+Shift+Esc won't fire while another program holds the keyboard" in \
            told["message"]
        # (Xvfb drops XTEST with RECORD: no key can be pressed here. The grab alone firing is
        # the next test's.)
        probe.send("cut-grab-connection")  # nothing hears the keys any more
        probe.wait_count("fallback", 2)
        lost = [line for line in probe.seen if "fallback" in line][1]
        assert lost["fallback"] == STOP
        assert "Ctrl+Alt+Shift+Esc stopped working" in lost["message"]
        assert "restart holodesk" in lost["message"]
        probe.send("status")
        status = probe.wait("fallbacks")
        assert status == {"reserved": [], "fallbacks": [STOP]}
    finally:
        probe.close()


def test_a_listener_that_ends_later_is_noticed_and_the_grab_still_fires(
    xvfb: Xvfb, probe_factory: Any
) -> None:
    probe = probe_factory(STOP)
    assert probe.wait("ready")["reserved"] == [STOP]
    probe.send("cut-listener-connection")
    told = probe.wait("fallback")
    assert told["fallback"] == STOP
    assert "won't fire while another program holds the keyboard" in told["message"]
    assert "the keyboard listener stopped" in told["message"]
    _key(xvfb, STOP_KEYS)
    probe.wait("fired", STOP)  # the grab alone
    assert probe.paired() == []
