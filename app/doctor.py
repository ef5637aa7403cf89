"""`holodesk doctor`: check, in order, everything a run needs, and say how to fix what fails.

Each check is a small method returning a :class:`CheckResult` (name, status, detail, fix), so
the CLI prints them and a GUI can show them later. The order follows what depends on what:
the desktop (display, capture, input, hotkeys, tray), the API key, then the model server
(reachable, model, context length, image limit, structured output, reasoning apart from the
answer) and finally a one-step
dry run through the real pipeline (capture, prompt, ask, parse, map) that acts on nothing.

Rules every check keeps:

* the doctor never acts: it moves no pointer and presses nothing (at most it reads where the
  pointer is); the model's proposed action is only printed;
* a check whose prerequisite did not pass is SKIP (which counts as not passed), so one cause
  gives one FAIL rather than a cascade;
* WARN is for what works but is worth fixing (no secure keyring): it counts as passed, so the
  exit code and the window's summary stay those of a set-up that runs;
* a check that raises is a FAIL with the exception's text, and a check that hangs (a locked
  keyring waiting for its password, a stuck server) is a FAIL after its timeout: the doctor
  always finishes and always prints its list;
* the API key is never printed: every text goes through :func:`app.secrets.redact`.

Display libraries (mss, pyautogui, pynput, python-xlib) are imported inside the checks.
"""

from __future__ import annotations

import datetime
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from app.secrets import ENV_API_KEY, LOCKED_HELP, KeyringStore, lookup_api_key, redact
from app.settings import Settings
from app.status import IMAGES_PER_STEP, MIN_CONTEXT, RECOMMENDED_CONTEXT
from app.version import version
from model.coords import Rect
from model.problem import Fix, Problem, Remedy, as_fix, describe

if TYPE_CHECKING:
    from control.capture import Capturer, Frame
    from model.client import HolotronClient, ServedModel
    from model.profiles import ModelProfile

log = logging.getLogger(__name__)

__all__ = [
    "CHECK_NAMES",
    "DRY_RUN_TASK",
    "CheckResult",
    "Doctor",
    "DoctorConfig",
    "Session",
    "Status",
    "all_passed",
    "context_result",
    "display_result",
    "doctor_document",
    "fix_label",
    "format_result",
    "frame_is_black",
    "keyring_result",
    "reasoning_result",
    "run_doctor",
    "run_with_timeout",
    "session_kind",
    "session_notice",
    "summary_text",
    "tray_result",
]


class Status(StrEnum):
    """The outcome of one check. PASS and WARN count as passed: WARN is a set-up that works
    with something worth fixing (its fix says what)."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True, init=False)
class CheckResult:
    """One check's outcome in plain words.

    ``detail`` says what was found; ``fix`` what to do about it (on a FAIL or a WARN), or a
    note worth knowing on a PASS (e.g. "no tray: holodesk shows a small window instead"). A
    fix given as
    plain words becomes a :class:`Fix`; ``problem`` is the detail and the fix, for a renderer.
    """

    name: str
    status: Status
    detail: str
    fix: Fix | None

    def __init__(
        self, name: str, status: Status, detail: str, fix: Fix | str | None = None
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "detail", detail)
        object.__setattr__(self, "fix", as_fix(fix))

    @property
    def passed(self) -> bool:
        """Whether holodesk works as far as this check tells (PASS or WARN)."""
        return self.status in (Status.PASS, Status.WARN)

    @property
    def problem(self) -> Problem:
        return Problem(self.detail, self.fix)

    def describe(self) -> str:
        return describe(self.detail, self.fix)

    def to_dict(self, say: Callable[[Fix], str]) -> dict[str, str]:
        """The result as JSON-ready data (``holodesk doctor --json``), the fix worded by ``say``
        (each front end has its own terms for it)."""
        return {"name": self.name, "status": self.status.value, "detail": self.detail,
                "fix": say(self.fix) if self.fix else ""}


DISPLAY = "display server"
CAPTURE = "screen capture"
INPUT = "input injection"
HOTKEYS = "global hotkeys"
TRAY = "system tray"
KEYRING = "keyring"
ENDPOINT = "endpoint"
MODEL = "model"
CONTEXT = "context length"
IMAGES = "image limit"
STRUCTURED = "structured output"
REASONING = "reasoning parser"
DRY_RUN = "one-step dry run"

#: Every check, in the order the doctor runs and prints them.
CHECK_NAMES: tuple[str, ...] = (
    DISPLAY, CAPTURE, INPUT, HOTKEYS, TRAY, KEYRING,
    ENDPOINT, MODEL, CONTEXT, IMAGES, STRUCTURED, REASONING, DRY_RUN,
)  # fmt: skip

#: What the dry run asks the model; any pointing answer exercises the whole mapping.
DRY_RUN_TASK = (
    "Click the most prominent button or icon on the screen. (This is a check of holodesk's "
    "setup: the click will not be carried out.)"
)

# A plain-text request: a server that applies the schema still answers a step, one that
# ignores it answers "OK". So the check tells enforcement apart from a model that merely
# happens to write JSON.
_FORMAT_PROBE = "This is a check of the answer format. Reply with just the word OK.\n"

_SERVE_FIX = "Start the model server"

# A question a thinking model reasons about briefly; the budget leaves room for the reasoning
# to end, so a missing parser shows as a </think> in the content (docs/models.md, "Reasoning").
_REASONING_PROBE = ("What is 17 + 25? Think it through briefly, then answer with the number "
                    "alone.")
_REASONING_PROBE_TOKENS = 512

_WAYLAND_WHY = (
    "Wayland keeps applications from seeing and driving each other's windows, and the "
    "compositor enforces it: screen capture sees only XWayland windows (native Wayland windows "
    "come out black) unless it goes through the desktop portal, which asks the person every "
    "time; input injection (XTEST) reaches only XWayland windows; and global hotkeys, such as "
    "the emergency stop, arrive only while an XWayland window has the focus."
)
_WAYLAND_FIX = (
    "log out, and on the login screen pick an X11 session before signing in (the gear "
    "button: \"Ubuntu on Xorg\" or \"GNOME on Xorg\"; on KDE \"Plasma (X11)\"), then run "
    "holodesk there"
)


# --------------------------------------------------------------------------- pure parts

Session = Literal["x11", "xwayland", "wayland", "none"]


def session_kind(environ: Mapping[str, str]) -> Session:
    """What kind of graphical session the environment describes (Linux).

    ``xwayland``: a Wayland session that also offers XWayland (``DISPLAY`` set), where X11
    clients run but see and drive only other X11 clients.
    """
    wayland = bool(environ.get("WAYLAND_DISPLAY")) or (
        environ.get("XDG_SESSION_TYPE", "").strip().lower() == "wayland"
    )
    has_x = bool(environ.get("DISPLAY"))
    if wayland:
        return "xwayland" if has_x else "wayland"
    return "x11" if has_x else "none"


def session_notice(kind: str) -> str:
    """What a person in a Wayland session should know before a run, in plain words ("" when
    the session is not Wayland): what works there and how to get a session where all works."""
    if kind not in ("wayland", "xwayland"):
        return ""
    works = ("holodesk cannot see or work any window here" if kind == "wayland" else
             "holodesk can see and work only windows of X11 programs (XWayland); other "
             "windows look black to it and do not get its clicks and keys, and the stop "
             "hotkey works only while an X11 window has the focus")
    fix = _WAYLAND_FIX[0].upper() + _WAYLAND_FIX[1:]
    return f"This is a Wayland session: {works}. For everything to work: {fix}."


def display_result(
    environ: Mapping[str, str],
    platform: str,
    connect: Callable[[str], str],
) -> CheckResult:
    """The display check from the environment; ``connect(display)`` opens the X display and
    returns a short description of it, or raises."""
    if platform == "darwin":
        return CheckResult(DISPLAY, Status.PASS, "the macOS desktop session",
                           "macOS asks once for Screen Recording and Accessibility permission "
                           "for the app running holodesk (your terminal): allow both")
    if not platform.startswith("linux"):
        return CheckResult(DISPLAY, Status.PASS, "the Windows desktop session")
    kind = session_kind(environ)
    if kind == "none":
        from control.display import NoDisplayError, check_display

        try:
            check_display(dict(environ), platform)
        except NoDisplayError as exc:
            # Its message is "what is wrong. What to do.": the second part is the fix.
            what, _, fix = str(exc).partition(". ")
            return CheckResult(DISPLAY, Status.FAIL, what, fix.rstrip(".") or
                               "run holodesk inside your desktop session")
        return CheckResult(DISPLAY, Status.FAIL, "no display found", "set DISPLAY")
    if kind == "wayland":
        return CheckResult(
            DISPLAY, Status.FAIL,
            "this is a Wayland session without X11 (DISPLAY is not set): holodesk cannot see "
            f"or drive the screen. {_WAYLAND_WHY}",
            _WAYLAND_FIX,
        )
    if kind == "xwayland":
        return CheckResult(
            DISPLAY, Status.FAIL,
            f"this is a Wayland session (DISPLAY={environ.get('DISPLAY')} is XWayland). "
            f"{_WAYLAND_WHY}",
            _WAYLAND_FIX,
        )
    name = environ.get("DISPLAY", "")
    try:
        described = connect(name)
    except Exception as exc:
        return CheckResult(
            DISPLAY, Status.FAIL,
            f"cannot open the X11 display {name}: {type(exc).__name__}: {exc}",
            "run holodesk inside your desktop session; if DISPLAY is right, check XAUTHORITY "
            "(the X server refuses clients without its cookie)",
        )
    return CheckResult(DISPLAY, Status.PASS, f"X11 display {name} works ({described})")


def frame_is_black(gray: NDArray[np.uint8], threshold: int = 12) -> bool:
    """Whether a grayscale frame shows nothing at all (every pixel near black).

    The threshold leaves room for JPEG noise; any real desktop has something brighter.
    """
    return gray.size == 0 or int(gray.max()) <= threshold


def tray_result(owner_found: bool, notifier_watcher: bool) -> CheckResult:
    """The tray check from what the X server and the session bus report.

    No tray is a PASS with a note, not a FAIL: ui/tray.py then shows a small always-on-top
    window with the same menu (New task, Action log, Settings, Stop, Quit), so holodesk works
    fully; failing here would make the doctor's exit code useless on desktops that simply have
    no tray (plain GNOME), where nothing needs fixing.
    """
    if owner_found:
        return CheckResult(TRAY, Status.PASS, "a system tray is running (X11 tray selection)")
    if notifier_watcher:
        return CheckResult(TRAY, Status.PASS,
                           "a StatusNotifier tray is running (org.kde.StatusNotifierWatcher)")
    return CheckResult(
        TRAY, Status.PASS,
        "no system tray: holodesk shows a small always-on-top window with the tray menu instead",
        "for a tray icon, use a desktop with a tray (on GNOME, the AppIndicator extension; "
        "Ubuntu ships it)",
    )


def context_result(max_model_len: int | None) -> CheckResult:
    """Whether the served context window fits a step: 3 screenshots plus the text."""
    needs = (
        f"a step sends {IMAGES_PER_STEP} screenshots (about 2,304 tokens each for a 16:9 "
        "screen) plus the system prompt, notes, past actions and the answer"
    )
    if max_model_len is None:
        return CheckResult(CONTEXT, Status.PASS,
                           "the server does not report its context length in /v1/models",
                           f"{needs}: start vLLM with `--max-model-len {RECOMMENDED_CONTEXT}`")
    if max_model_len < MIN_CONTEXT:
        return CheckResult(
            CONTEXT, Status.FAIL,
            f"the context window is {max_model_len} tokens: too short; {needs}, which needs "
            f"at least {MIN_CONTEXT} ({RECOMMENDED_CONTEXT} recommended)",
            f"restart vLLM with `--max-model-len {RECOMMENDED_CONTEXT}`",
        )
    if max_model_len < RECOMMENDED_CONTEXT:
        return CheckResult(CONTEXT, Status.PASS,
                           f"{max_model_len} tokens: enough for a step ({needs})",
                           f"`--max-model-len {RECOMMENDED_CONTEXT}` leaves room for long "
                           "tasks")
    return CheckResult(CONTEXT, Status.PASS,
                       f"{max_model_len} tokens: enough (a step with {IMAGES_PER_STEP} "
                       f"screenshots needs at least {MIN_CONTEXT})")


def reasoning_result(profile: ModelProfile, reasoning: str, content: str,
                     finish_reason: str | None) -> CheckResult:
    """Where a thinking request's reasoning landed. In the content (a ``<think>`` or, where
    the template opens the block in the prompt, a ``</think>``): the server runs without the
    profile's reasoning parser, and every step's answer would carry it (the codecs refuse such
    an answer: model/contracts/base.py, ``reject_inline_thinking``)."""
    parser = profile.reasoning.parser
    flag = f"--reasoning-parser {parser}" if parser else "--reasoning-parser"
    if "<think>" in content or "</think>" in content:
        return CheckResult(
            REASONING, Status.FAIL,
            f"{profile.display_name} thinks at each step, but its reasoning came back inside the "
            "answer's content (a <think> block): the server runs without the reasoning parser, "
            "so every step's answer would be refused",
            Fix(f"Restart vLLM with `{flag}` (`holodesk serve` starts it with the profile's "
                "flags, this one included; docs/models.md).", remedy=Remedy.START_SERVER))
    if reasoning:
        return CheckResult(REASONING, Status.PASS,
                           f"the reasoning came back apart from the answer ({len(reasoning):,} "
                           f"characters of reasoning; the server runs a reasoning parser)")
    if finish_reason == "length":
        return CheckResult(REASONING, Status.PASS,
                           "inconclusive: the answer was cut at the check's budget before any "
                           "reasoning or answer could be told apart",
                           Fix(f"If steps fail with reasoning in their answer, restart vLLM "
                               f"with `{flag}` (`holodesk serve` does)."))
    return CheckResult(REASONING, Status.PASS,
                       "the model answered without reasoning this time, so the check cannot "
                       "tell whether the server separates it",
                       Fix(f"The server needs `{flag}` for this model (`holodesk serve` passes "
                           "it); if steps fail with reasoning in their answer, restart vLLM "
                           "with it."))


def keyring_result(backend: str, *, problem: str | None, key_source: str) -> CheckResult:
    """The keyring check from what :mod:`app.secrets` found (never the key itself).

    ``backend`` starts with "unavailable" when no secure keyring is there (none at all, or only
    one :mod:`app.secrets` refuses, such as keyrings.alt's files); ``problem`` is why the key
    could not be looked up, in :mod:`app.secrets`' words, which carry their own advice: the
    result says what was found once and what to do once, in its fix.

    No secure keyring (or one that cannot be used: locked) is a WARN, not a FAIL: holodesk
    runs without one (a server on this machine usually needs no key; a headless machine has
    ``HOLODESK_API_KEY``), but it can keep no API key, nor remember an approved safety setting
    that asks less than its default. A key that is needed but missing fails the endpoint check
    with its own fix.
    """
    unavailable = backend.startswith("unavailable")
    if problem is None and not unavailable:
        where = {"env": f"the API key comes from ${ENV_API_KEY}",
                 "keyring": "an API key is stored for this endpoint",
                 "none": "no API key stored for this endpoint (fine when the server has none)"}
        return CheckResult(KEYRING, Status.PASS,
                           f"{backend}; {where.get(key_source, key_source)}")
    if unavailable:
        found = f"no secure keyring ({backend.removeprefix('unavailable').strip(' ()')})"
        first = ("Install and unlock a Secret Service: `sudo apt-get install gnome-keyring` and "
                 "a desktop session that unlocks it (KWallet works too).")
    else:  # a secure keyring that failed: locked, or its service gone
        why = (problem or "").removesuffix(LOCKED_HELP).strip().rstrip(".")
        found = f"the keyring cannot be used: {why}"
        first = ("Unlock the keyring (your desktop's keyring or password manager; logging out "
                 "and in again unlocks it) and run the checks again.")
    fix = Fix(f"{first} On a headless machine put the key in {ENV_API_KEY} in the environment "
              "of each run instead (it is never stored). A model server on this machine "
              "usually needs no key. holodesk never keeps the key in a plain file.")
    if key_source == "keyring":  # a key said to be stored where nothing can be read
        return CheckResult(KEYRING, Status.FAIL, f"{found}: the API key cannot be read", fix)
    key = (f"the API key comes from ${ENV_API_KEY}, but" if key_source == "env"
           else "holodesk can store no API key, and")
    return CheckResult(
        KEYRING, Status.WARN,
        f"{found}: {key} a safety setting you approve that asks less than its default (such "
        "as confirm never) cannot be remembered", fix)


def all_passed(results: Sequence[CheckResult]) -> bool:
    """Whether every check passed, a WARN included (SKIP does not count): the doctor's exit
    code 0, and "All N checks passed"."""
    return bool(results) and all(r.passed for r in results)


def summary_text(results: Sequence[CheckResult]) -> str:
    """The line under the checks, in `holodesk doctor` and the Check set-up window alike."""
    warned = sum(r.status is Status.WARN for r in results)
    warnings = f"{warned} with a warning" if warned == 1 else f"{warned} with warnings"
    if all_passed(results):
        return f"All {len(results)} checks passed" + (f", {warnings}." if warned else ".")
    passed = sum(r.passed for r in results)
    return f"{passed} of {len(results)} checks passed" + (f" ({warnings})." if warned else ".")


def doctor_document(
    results: Sequence[CheckResult], endpoint: str, *, say: Callable[[Fix], str]
) -> dict[str, Any]:
    """The results as JSON-ready data: what `holodesk doctor --json` prints and a problem
    report holds, the fixes worded by ``say``."""
    return {"ok": all_passed(results), "version": version(), "endpoint": endpoint,
            "checks": [r.to_dict(say) for r in results]}


def fix_label(result: CheckResult) -> str:
    """What a result's fix is called: a "Fix" on a FAIL or a WARN, a "Note" otherwise."""
    return "Fix" if result.status in (Status.FAIL, Status.WARN) else "Note"


def format_result(result: CheckResult, width: int = 18, *, say: Callable[[Fix], str]) -> str:
    """One result as a line of the report: a status line, then the fix (or a note) indented.

    ``say`` words the fix in the terms of the front end that shows it (the CLI names commands,
    the GUI its windows and menus).
    """
    line = f"{result.status.value}  {result.name:<{width}} {result.detail}"
    if result.fix:
        line += f"\n{'':<{6 + width + 1}}{fix_label(result)}: {say(result.fix)}"
    return line


# --------------------------------------------------------------------------- running checks


@dataclass(frozen=True)
class DoctorConfig:
    """What the doctor checks against.

    ``environ`` and ``platform`` default to this process's; tests pass their own.
    ``check_timeout`` bounds each desktop check, ``request_timeout`` each model request.
    """

    settings: Settings
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    platform: str = sys.platform
    check_timeout: float = 20.0
    request_timeout: float = 60.0
    task: str = DRY_RUN_TASK


_CheckFn = Callable[[], CheckResult]


def _safe(name: str, fn: _CheckFn) -> CheckResult:
    try:
        return fn()
    except Exception as exc:  # a check must never crash the doctor: report it instead
        log.warning("doctor check %s raised", name, exc_info=True)
        text = str(exc) or type(exc).__name__
        return CheckResult(name, Status.FAIL, f"the check failed: {type(exc).__name__}: {text}",
                           "run with -v and see the log file for details")


def run_with_timeout(name: str, fn: _CheckFn, timeout: float) -> CheckResult:
    """Run ``fn`` on a daemon thread; a FAIL if it raises or takes longer than ``timeout``."""
    box: list[CheckResult] = []
    worker = threading.Thread(target=lambda: box.append(_safe(name, fn)),
                              name=f"doctor-{name}", daemon=True)
    worker.start()
    worker.join(timeout)
    if box:
        return box[0]
    # The thread is abandoned (daemon): there is no safe way to interrupt a blocked call.
    return CheckResult(name, Status.FAIL, f"the check did not finish within {timeout:g} seconds",
                       "see the log file; a locked keyring may be waiting for its password, a "
                       "busy server for its GPU")


class Doctor:
    """Runs the checks in order; state found by one check (key, client, model) feeds the next.

    Use :meth:`run`, then :meth:`close` (or :func:`run_doctor`, which does both).
    """

    def __init__(self, config: DoctorConfig) -> None:
        self.config = config
        self.settings = config.settings
        self.env = config.environ
        self._key: str | None = None
        self._client: HolotronClient | None = None
        self._served: list[ServedModel] = []
        self._model: str | None = None
        self._profile: ModelProfile | None = None  # the served model's, once recognised
        self._client_lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing

    def _plan(self) -> list[tuple[str, _CheckFn, tuple[str, ...], float]]:
        desk = self.config.check_timeout
        # A request may wait up to request_timeout; leave room for connecting and parsing.
        ask = self.config.request_timeout + 15.0
        return [
            (DISPLAY, self.check_display, (), desk),
            (CAPTURE, self.check_capture, (DISPLAY,), desk),
            (INPUT, self.check_input, (DISPLAY,), desk),
            (HOTKEYS, self.check_hotkeys, (DISPLAY,), desk),
            (TRAY, self.check_tray, (DISPLAY,), desk),
            (KEYRING, self.check_keyring, (), desk),
            (ENDPOINT, self.check_endpoint, (), ask),
            (MODEL, self.check_model, (ENDPOINT,), ask),
            (CONTEXT, self.check_context, (MODEL,), ask),
            (IMAGES, self.check_images, (MODEL,), ask),
            (STRUCTURED, self.check_structured, (MODEL,), ask),
            (REASONING, self.check_reasoning, (MODEL,), ask),
            (DRY_RUN, self.check_dry_run, (CAPTURE, STRUCTURED), ask * 2),
        ]

    def run(self, on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
        """Run every check in order; ``on_result`` sees each result as soon as it is known."""
        results: dict[str, CheckResult] = {}
        secrets = [self._key] if self._key else []
        for name, fn, requires, timeout in self._plan():
            unmet = [r for r in requires if not results[r].passed]
            if unmet:
                checks = "check" if len(unmet) == 1 else "checks"
                result = CheckResult(name, Status.SKIP,
                                     f"skipped: the {' and '.join(unmet)} {checks} did not pass")
            else:
                result = run_with_timeout(name, fn, timeout)
            if self._key and self._key not in secrets:
                secrets.append(self._key)
            fix = result.fix
            if fix is not None:
                fix = replace(fix, text=redact(fix.text, secrets))
            result = CheckResult(result.name, result.status, redact(result.detail, secrets), fix)
            results[name] = result
            if on_result is not None:
                on_result(result)
        return list(results.values())

    def close(self) -> None:
        """Release the HTTP client."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _display_name(self) -> str | None:
        return self.env.get("DISPLAY") if self.config.platform.startswith("linux") else None

    def _x11(self) -> bool:
        return self.config.platform.startswith("linux") and session_kind(self.env) == "x11"

    # ------------------------------------------------------------------ the desktop

    def check_display(self) -> CheckResult:
        """1. An X11 display that opens (Wayland and no display fail with the reason)."""
        return display_result(self.env, self.config.platform, _describe_x_display)

    def _capturer(self) -> Capturer:
        from app.parts import make_capturer

        return make_capturer(self.settings, display=self._display_name())

    def check_capture(self) -> CheckResult:
        """2. One grab of the configured monitor.

        An all-black frame is a failure only when the capture does not show what is drawn:
        on X11 the check shows a small square of a known colour on that monitor for a moment
        (:func:`_probe_shows`). A square that comes out means the capture works, and the
        screen is black: a PASS with a note on an empty desktop with a black background, a
        WARN when windows are open there and come out black too (a locked or blanked screen).
        A square that stays black is a FAIL. Elsewhere (no square to show) black fails.
        """
        monitor = self.settings.monitor
        try:
            with closing(self._capturer()) as capturer:
                frame = capturer.grab()
                black = frame_is_black(_gray(frame))
                shown = (_probe_shows(self._display_name(), frame.geometry.monitor,
                                      capturer.grab)
                         if black and self._x11() else None)
        except ValueError as exc:  # a monitor that does not exist, a region off the screen
            return CheckResult(CAPTURE, Status.FAIL, str(exc),
                               Fix("Choose another monitor.", setting="monitor"))
        g = frame.geometry
        where = (f"monitor {monitor}: {g.monitor.width}x{g.monitor.height} at "
                 f"+{g.monitor.left}+{g.monitor.top}, sent as {frame.width}x{frame.height} "
                 f"{frame.mime.split('/')[-1].upper()} ({len(frame.data) // 1024} KB)")
        if not black:
            return CheckResult(CAPTURE, Status.PASS,
                               f"{where} in {frame.capture_ms + frame.encode_ms:.0f} ms")
        if shown:
            return self._black_screen(where, g.monitor)
        tried = ("; a square holodesk showed there for a moment came out black too"
                 if shown is False else "")
        return CheckResult(
            CAPTURE, Status.FAIL, f"{where}, but the frame is all black{tried}",
            "the screen may be locked, blanked or asleep (wake it and retry); in a "
            "Wayland session capture sees only XWayland windows (log in to an X11 "
            "session); on macOS allow Screen Recording for your terminal; a remote or "
            "virtual session may not draw its desktop",
        )

    def _black_screen(self, where: str, monitor: Rect) -> CheckResult:
        """The capture works (the probe came out) and the monitor shows only black: told apart
        by whether windows are open there (the target finder's list of the screen's
        windows)."""
        from control.target import WindowListError
        from control.target_x11 import X11TargetFinder

        works = "capture works: a square holodesk showed there for a moment came out in it"
        finder = X11TargetFinder(self._display_name())
        try:
            # Any window there counts, holodesk's own too: one that draws would not be black.
            windows = [w for w in finder.windows() if not w.desktop and w.rect is not None
                       and _overlap(w.rect, monitor)]
        except WindowListError as exc:
            log.info("the windows cannot be listed: %s", exc)
            windows = []
        finally:
            finder.close()
        if not windows:
            return CheckResult(CAPTURE, Status.PASS,
                               f"{where}; the screen shows only a black background",
                               f"nothing is open on this monitor and its background is "
                               f"black; {works}")
        names = ", ".join(dict.fromkeys(w.label() for w in windows[:3]))
        count = f"{len(windows)} window" + ("s" if len(windows) != 1 else "")
        return CheckResult(
            CAPTURE, Status.WARN,
            f"{where}; {works}, but all of the monitor is black, the {count} open on it "
            f"({names}) too",
            "the screen may be locked or blanked, or the windows draw nothing yet: wake or "
            "unlock it and run the checks again")

    def check_input(self) -> CheckResult:
        """3. Input injection can work (XTEST on X11, pyautogui imports); nothing is moved."""
        if self._x11():
            from Xlib import display as xdisplay

            conn = xdisplay.Display(self._display_name())
            try:
                has_xtest = bool(conn.has_extension("XTEST"))
                pointer = conn.screen().root.query_pointer()
                where = f"({pointer.root_x}, {pointer.root_y})"
            finally:
                conn.close()
            if not has_xtest:
                return CheckResult(
                    INPUT, Status.FAIL,
                    "the X server has no XTEST extension: holodesk cannot move the pointer or "
                    "press keys",
                    "use an X server with XTEST (Xorg has it by default; for Xvfb or a VNC "
                    "server, do not start it with `-extension XTEST`)",
                )
        else:
            where = ""
        try:
            from control.pyautogui_loader import load_pyautogui

            pyautogui = load_pyautogui()
        except Exception as exc:
            return CheckResult(INPUT, Status.FAIL,
                               f"pyautogui cannot be loaded: {type(exc).__name__}: {exc}",
                               "reinstall holodesk (`pip install --force-reinstall holodesk`); "
                               "on Linux pyautogui needs an X11 session")
        if not where:
            pos = pyautogui.position()
            where = f"({int(pos.x)}, {int(pos.y)})"
        detail = f"pyautogui loads{' and XTEST is present' if self._x11() else ''}; " \
                 f"the pointer is at {where} (nothing was moved)"
        note = ("macOS: allow Accessibility for your terminal, or clicks are silently ignored"
                if self.config.platform == "darwin" else "")
        return CheckResult(INPUT, Status.PASS, detail, note)

    def check_hotkeys(self) -> CheckResult:
        """4. The global listener starts and stops with the stop hotkey registered."""
        from control.hotkeys import ListenerError, PynputHotkeys, parse_combo

        combo = str(parse_combo(self.settings.stop_hotkey))
        hotkeys = PynputHotkeys(ready_timeout=min(10.0, self.config.check_timeout / 2))
        hotkeys.register(combo, lambda: None)
        try:
            hotkeys.start()
        except ListenerError as exc:
            fix = ("the X server needs the RECORD extension (Xorg and Xvfb have it)"
                   if self.config.platform.startswith("linux")
                   else "macOS: allow Input Monitoring and Accessibility for your terminal")
            return CheckResult(HOTKEYS, Status.FAIL,
                               f"the global hotkey listener cannot start: {exc}; without it the "
                               f"emergency stop {combo} does not work (Ctrl+C and the "
                               "failsafe corner still do)", fix)
        finally:
            hotkeys.stop()
        return CheckResult(HOTKEYS, Status.PASS,
                           f"the listener starts; the emergency stop hotkey is {combo}")

    def check_tray(self) -> CheckResult:
        """5. A system tray exists (else the app shows its small stand-in window)."""
        if not self.config.platform.startswith("linux"):
            return CheckResult(TRAY, Status.PASS, "the system tray (notification area)")
        from Xlib import display as xdisplay

        conn = xdisplay.Display(self._display_name())
        try:
            atom = conn.intern_atom(f"_NET_SYSTEM_TRAY_S{conn.get_default_screen()}")
            owner = conn.get_selection_owner(atom)
        finally:
            conn.close()
        found = bool(getattr(owner, "id", owner))  # X.NONE (0) when nobody owns it
        return tray_result(found, False if found else _notifier_watcher(self.env))

    # ------------------------------------------------------------------ the key

    def check_keyring(self) -> CheckResult:
        """6. The keyring backend, and where the API key for the endpoint comes from."""
        store = KeyringStore()
        backend = store.backend_name()
        found = lookup_api_key(self.settings.endpoint, store, self.env)
        self._key = found.key
        if found.key:
            from app.logs import mask

            mask(found.key)
        return keyring_result(backend, problem=found.problem, key_source=found.source)

    # ------------------------------------------------------------------ the model server

    def _get_client(self) -> HolotronClient:
        from app.parts import client_config, run_codec
        from model.client import HolotronClient

        with self._client_lock:
            if self._client is None:
                if self._key is None:
                    # The keyring check may have timed out or not run: the environment still
                    # counts.
                    self._key = self.env.get(ENV_API_KEY, "").strip() or None
                # The contract a run speaks (its profile's): what holds for doctor holds then.
                self._client = HolotronClient(client_config(
                    self.settings, self._key,
                    connect_timeout=5.0,
                    request_timeout=self.config.request_timeout,
                    max_retries=0,  # one answer tells whether the schema is applied
                    temperature=0.0,
                    max_tokens=512,
                ), run_codec(self.settings))
            return self._client

    def check_endpoint(self) -> CheckResult:
        """7. The server answers /health and /v1/models."""
        from model.errors import AuthFailed, BadRequest, HolotronError, ServerUnreachable
        from model.plain_http import PlainHttpRefused

        try:
            client = self._get_client()
        except PlainHttpRefused as exc:
            return CheckResult(ENDPOINT, Status.FAIL, exc.message, exc.fix)
        except Exception as exc:
            return CheckResult(ENDPOINT, Status.FAIL,
                               f"the endpoint {self.settings.endpoint!r} cannot be used: {exc}",
                               Fix("Set the server's base URL, e.g. http://127.0.0.1:8000/v1.",
                                   setting="endpoint"))
        url = client.base_url
        try:
            client.health()
            self._served = client.served_models()
        except ServerUnreachable as exc:
            return CheckResult(ENDPOINT, Status.FAIL, _with_detail(exc.message, exc.detail),
                               Fix(f"{_SERVE_FIX}; check the server address (host, port and "
                                   "/v1). A server that was just started answers only once the "
                                   "model is loaded (minutes).",
                                   setting="endpoint", remedy=Remedy.START_SERVER))
        except AuthFailed as exc:
            return CheckResult(ENDPOINT, Status.FAIL, exc.message,
                               Fix("Store the API key the server was started with (its "
                                   f"`--api-key`), or set {ENV_API_KEY}.",
                                   remedy=Remedy.SET_API_KEY))
        except BadRequest as exc:
            if exc.status == 404:
                return CheckResult(
                    ENDPOINT, Status.FAIL,
                    f"something answers at {client.root_url}, but not vLLM's API at {url}: "
                    f"{exc.detail or 'HTTP 404'}",
                    Fix("The endpoint is the server's base URL ending in /v1 with no other path, "
                        "e.g. http://127.0.0.1:8000/v1 (holodesk adds a missing /v1; a path "
                        "before it, like /api/v1, must be the server's).", setting="endpoint"),
                )
            return CheckResult(ENDPOINT, Status.FAIL, exc.message, exc.fix)
        except HolotronError as exc:
            return CheckResult(ENDPOINT, Status.FAIL, exc.message, exc.fix)
        names = ", ".join(f"'{m.name}'" for m in self._served) or "none"
        return CheckResult(ENDPOINT, Status.PASS,
                           f"{url} answers (GET /health 200; /v1/models lists {names})")

    def check_model(self) -> CheckResult:
        """8. The configured model is served (or, with none configured, the served one)."""
        from model.errors import HolotronError

        client = self._get_client()
        try:
            self._model = client.resolve_model()
        except HolotronError as exc:
            return CheckResult(MODEL, Status.FAIL, exc.message, exc.fix)
        entry = next((m for m in self._served if m.name == self._model), None)
        root = f" ({entry.root})" if entry is not None and entry.root else ""
        how = ("as configured" if self.settings.model
               else "the served name; no model name is configured")
        detail = f"'{self._model}'{root}, {how}"
        from model.profiles import find_profile, profile_by_key
        from model.serving.launcher import check_vllm_version

        if self.settings.model_profile:
            profile, guessed = profile_by_key(self.settings.model_profile), False
        else:
            match = find_profile(self._model, entry.root if entry else None)
            profile, guessed = match.profile, match.guessed
        note = (Fix("holodesk does not recognise this model (docs/models.md lists the ones it "
                    "knows): it speaks holodesk's own step format to it; name its profile with "
                    "`--profile` if it is one of H's, and calibrate to see where its clicks "
                    "land.", remedy=Remedy.CALIBRATE) if guessed else None)
        if not guessed:
            self._profile = profile
            detail += f"; profile {profile.key}"
            version = client.server_version()
            problem = check_vllm_version(profile, version) if version else None
            if problem is not None and problem.fatal:
                return CheckResult(MODEL, Status.FAIL, f"{detail}: {problem.message}",
                                   problem.fix)
        return CheckResult(MODEL, Status.PASS, detail, note)

    def check_context(self) -> CheckResult:
        """9a. The served context window fits a step with 3 screenshots."""
        entry = next((m for m in self._served if m.name == self._model), None)
        return context_result(entry.max_model_len if entry is not None else None)

    def check_images(self) -> CheckResult:
        """9b. The server accepts the 3 images a step sends (a probe with 3 tiny images)."""
        from model.errors import ContextTooLong, HolotronError, TooManyImages

        client = self._get_client()
        try:
            client.probe_images(IMAGES_PER_STEP, timeout=self.config.request_timeout)
        except TooManyImages as exc:
            limit = f"at most {exc.limit}" if exc.limit is not None else "fewer"
            return CheckResult(
                IMAGES, Status.FAIL,
                f"the server accepts {limit} image(s) per request; holodesk sends "
                f"{IMAGES_PER_STEP} (the last three screenshots)",
                'restart vLLM with `--limit-mm-per-prompt \'{"image": 3, "video": 0}\'`',
            )
        except ContextTooLong as exc:
            return CheckResult(IMAGES, Status.FAIL,
                               f"{IMAGES_PER_STEP} images do not fit the context window: "
                               f"{exc.message}", exc.fix)
        except HolotronError as exc:
            return CheckResult(IMAGES, Status.FAIL, exc.message, exc.fix)
        return CheckResult(IMAGES, Status.PASS,
                           f"a request with {IMAGES_PER_STEP} images is accepted "
                           f"(holodesk sends {IMAGES_PER_STEP})")

    def check_structured(self) -> CheckResult:
        """10. The server applies the step schema (structured_outputs)."""
        from model.errors import BadRequest, HolotronError, InvalidOutput
        from model.prompt import describe_action

        fix = ("use vLLM 0.12 or newer (`pip install -U vllm`), which applies "
               "`structured_outputs`; older servers and other servers ignore it (holodesk "
               "never sends the removed `guided_json`)")
        client = self._get_client()
        messages = [{"role": "user", "content": [{"type": "text", "text": _FORMAT_PROBE}]}]
        try:
            reply = client.next_step(messages, None)  # the contract's own step schema
        except InvalidOutput as exc:
            raw = " ".join(exc.raw.split())
            shown = raw if len(raw) <= 80 else raw[:77] + "..."
            return CheckResult(STRUCTURED, Status.FAIL,
                               f"the server ignored the step schema: asked for a plain 'OK', it "
                               f"answered {shown!r}, not a step ({exc.reason})", fix)
        except BadRequest as exc:
            return CheckResult(STRUCTURED, Status.FAIL,
                               f"the server refused the request with the step schema: "
                               f"{exc.detail or exc.message}", fix)
        except HolotronError as exc:
            return CheckResult(STRUCTURED, Status.FAIL, exc.message, exc.fix)
        return CheckResult(STRUCTURED, Status.PASS,
                           "the answer was held to the step schema even when asked for plain "
                           f"text (its step: {describe_action(reply.step.action)})")

    def check_reasoning(self) -> CheckResult:
        """10b. For a model that thinks at each step, the thinking comes back apart from the
        answer (vLLM's ``--reasoning-parser``): one small request with the switch on."""
        from model.errors import HolotronError

        profile = self._profile
        if profile is None or not profile.reasoning.agent_thinking:
            who = (f"{profile.display_name} does not think at each step" if profile is not None
                   else "the model's profile is not known, so holodesk asks it without thinking")
            return CheckResult(REASONING, Status.PASS, f"nothing to check: {who}")
        reasoning = profile.reasoning
        fields: dict[str, Any] = {}
        switch = reasoning.template_kwargs(True)
        if switch is not None:
            fields["chat_template_kwargs"] = switch
        if reasoning.effort is not None:
            fields["reasoning_effort"] = reasoning.effort
        try:
            probe = self._get_client().probe_reasoning(_REASONING_PROBE, fields,
                                                       max_tokens=_REASONING_PROBE_TOKENS)
        except HolotronError as exc:
            return CheckResult(REASONING, Status.FAIL, exc.message, exc.fix)
        return reasoning_result(profile, probe.reasoning, probe.content, probe.finish_reason)

    def check_dry_run(self) -> CheckResult:
        """11. Capture, build the real prompt, ask, parse, map; act on nothing."""
        from app.parts import run_convention
        from model.coords import to_screen
        from model.errors import HolotronError
        from model.prompt import PromptConfig, Turn, build_messages, describe_action
        from model.schema import Drag, PointedAction

        s = self.settings
        with closing(self._capturer()) as capturer:
            frame: Frame = capturer.grab()
        client = self._get_client()
        convention = run_convention(s, client.codec)
        config = PromptConfig(convention=convention, sent_width=frame.width,
                              sent_height=frame.height, today=datetime.date.today(),
                              thinking=s.thinking)
        messages = build_messages(self.config.task, [Turn(1, frame.data, frame.mime)], config,
                                  codec=client.codec)
        started = time.monotonic()
        try:
            reply = client.next_step(messages, None)
        except HolotronError as exc:
            return CheckResult(DRY_RUN, Status.FAIL, exc.message, exc.fix)
        action = reply.step.action
        took = f"answered in {time.monotonic() - started:.1f} s"
        if reply.prompt_tokens is not None:
            took += f", {reply.prompt_tokens} prompt tokens"
        if not isinstance(action, PointedAction):
            return CheckResult(DRY_RUN, Status.PASS,
                               f"the model proposes: {describe_action(action)} ({took}); it "
                               "points at nothing, so there was no point to map; nothing was "
                               "done")
        mapped = to_screen(action.x, action.y, convention, frame.geometry)
        end = (to_screen(action.to_x, action.to_y, convention, frame.geometry).point
               if isinstance(action, Drag) else None)
        proposal = describe_action(action, mapped.point, end=end)
        detail = (f"the model proposes: {proposal} (model point ({action.x:g}, {action.y:g}) "
                  f"in {convention.value} on a {frame.width}x{frame.height} image; {took}); "
                  "nothing was done")
        if mapped.clamped:
            return CheckResult(DRY_RUN, Status.PASS, detail,
                               Fix("The point was outside the image and was moved onto the "
                                   "screen: the coordinate convention may be wrong; calibrating "
                                   "tells which one the model uses.",
                                   remedy=Remedy.CALIBRATE))
        return CheckResult(DRY_RUN, Status.PASS, detail)


def run_doctor(config: DoctorConfig,
               on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Run every check (see :class:`Doctor`) and release what they opened."""
    doctor = Doctor(config)
    try:
        return doctor.run(on_result)
    finally:
        doctor.close()


# --------------------------------------------------------------------------- helpers


def _with_detail(message: str, detail: str | None) -> str:
    # "No server answers at URL. (ConnectError...)" reads badly: the detail before the stop.
    return f"{message.rstrip('.')} ({detail})." if detail else message


def _describe_x_display(name: str) -> str:
    from Xlib import display as xdisplay

    conn = xdisplay.Display(name)
    try:
        screen = conn.screen()
        info = getattr(conn.display, "info", None)
        vendor = str(getattr(info, "vendor", "") or "").strip() or "unknown vendor"
        return f"screen {screen.width_in_pixels}x{screen.height_in_pixels}, {vendor}"
    finally:
        conn.close()


def _gray(frame: Frame) -> NDArray[np.uint8]:
    """The frame as decoded grayscale pixels (decoded, not re-grabbed: what the model sees)."""
    if frame.mime == "image/jpeg":
        import simplejpeg

        return np.asarray(simplejpeg.decode_jpeg(frame.data, colorspace="GRAY"), dtype=np.uint8)
    import io

    from PIL import Image

    with Image.open(io.BytesIO(frame.data)) as image:
        return np.asarray(image.convert("L"), dtype=np.uint8)


#: The square :func:`_probe_shows` shows: magenta, bright (gray about 105, far above
#: :func:`frame_is_black`'s threshold) and no desktop's usual background; big enough to
#: survive the downscale of a 4K monitor and JPEG.
_PROBE_RGB = (255, 0, 255)
_PROBE_SIDE = 24
#: How long a compositor may take to draw the square before the capture is judged blind.
_PROBE_WAIT_S = 2.0


def _probe_shows(display_name: str | None, monitor: Rect, grab: Callable[[], Frame]) -> bool | None:
    """Whether a square shown in the middle of ``monitor`` comes out in ``grab`` (no longer
    all black), within :data:`_PROBE_WAIT_S`; None when it cannot be shown.

    The square is an override-redirect window: no window manager frames, places or focuses
    it, so nothing the person works in loses the focus, and it takes no input the person meant
    for another window for longer than the grabs. It is destroyed before this returns, and its
    connection closed (which would have the X server destroy it anyway).
    """
    from Xlib import X
    from Xlib import display as xdisplay

    try:
        conn = xdisplay.Display(display_name)
    except Exception as exc:
        log.info("no square to check the capture with: %s", exc)
        return None
    try:
        screen = conn.screen()
        red, green, blue = (c * 257 for c in _PROBE_RGB)  # X speaks 16-bit channels
        pixel = screen.default_colormap.alloc_color(red, green, blue).pixel
        side = max(1, min(_PROBE_SIDE, monitor.width, monitor.height))
        window = screen.root.create_window(
            monitor.left + (monitor.width - side) // 2, monitor.top + (monitor.height - side) // 2,
            side, side, 0, screen.root_depth, X.InputOutput, X.CopyFromParent,
            background_pixel=pixel, override_redirect=True)
        try:
            window.set_wm_name("holodesk doctor: capture check")
            window.set_wm_class("holodesk-doctor", "holodesk-doctor")
            window.map()
            conn.sync()
            deadline = time.monotonic() + _PROBE_WAIT_S
            while frame_is_black(_gray(grab())):
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.05)
            return True
        finally:
            window.destroy()
            conn.sync()
    except Exception as exc:  # an X error: the check cannot tell, and says the frame is black
        log.info("the capture check's square could not be shown: %s", exc)
        return None
    finally:
        conn.close()


def _overlap(a: Rect, b: Rect) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def _notifier_watcher(environ: Mapping[str, str]) -> bool:
    """Whether a StatusNotifier tray (KDE, GNOME's AppIndicator extension) is on the session bus.

    Qt uses it instead of the X11 tray when present. Best effort: jeepney comes with keyring's
    Secret Service backend; without it, or without a session bus, the answer is False.
    """
    address = environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        return False
    try:
        from jeepney import DBusAddress, new_method_call  # type: ignore[import-untyped]
        from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

        bus = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus",
                          interface="org.freedesktop.DBus")
        with open_dbus_connection(bus=address) as conn:
            reply = conn.send_and_get_reply(
                new_method_call(bus, "NameHasOwner", "s", ("org.kde.StatusNotifierWatcher",)),
                timeout=2.0,
            )
        return bool(reply.body[0])
    except Exception:
        log.debug("no StatusNotifier watcher found", exc_info=True)
        return False
