"""The GUI's one renderer of a problem: the message, then the fix in the windows' own terms.

A fix's words (``Fix.text``) hold in every front end; its ``setting`` becomes the place in the
Settings dialog that changes it, its ``remedy`` the menu item that does it (the CLI names a
command instead: app/cli/render.py). So a window never shows a command-line option for a
structured fix. A window with a button for a remedy can read :attr:`ProblemView.remedy`.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.problem import Fix, HolodeskError, Problem, Remedy

#: Where each setting is changed in the Settings dialog (its group and field label).
SETTING_PLACES: dict[str, str] = {
    "endpoint": "Settings > Model server > Endpoint URL",
    "plain_http_ok": "Settings > Model server > Send unencrypted (plain http) to this server",
    "tls_fingerprint": "Settings > Model server > TLS fingerprint",
    "api_key": "Settings > Model server > API key",
    "model": "Settings > Model server > Model",
    "convention": "Settings > Runs > Coordinates",
    "monitor": "Settings > Runs > Monitor",
    "confirm": "Settings > Runs > Confirm actions",
    "max_steps": "Settings > Runs > Max steps",
    "max_seconds": "Settings > Runs > Max time",
    "stop_hotkey": "Settings > Runs > Stop hotkey",
    "image_format": "Settings > Runs > Screenshot format",
    "jpeg_quality": "Settings > Runs > JPEG quality",
    "retention_days": "Settings > Runs > Keep runs for",
    "log_screenshots": "Settings > Runs > Keep full screenshots",
}

#: The menu item (the tray's, or the stand-in window's button) that does each remedy.
REMEDY_PLACES: dict[Remedy, str] = {
    Remedy.START_SERVER: "the tray menu's Start model server",
    Remedy.CHECK_SERVER: "Settings > Model server > Test connection",
    Remedy.RUN_DOCTOR: "the tray menu's Check set-up…",
    Remedy.CALIBRATE: "the tray menu's Calibrate…",
    Remedy.SET_API_KEY: "Settings > Model server > API key",
    Remedy.OPEN_SETTINGS: "the tray menu's Settings",
    Remedy.SHOW_LOG: "the tray menu's Action log",
}


def setting_place(setting: str) -> str:
    """Where ``setting`` is changed: its field in Settings, else its key in the settings file."""
    return SETTING_PLACES.get(setting, f"the {setting} setting in settings.toml")


def plain_words(text: str) -> str:
    """Words as a window shows them: no Markdown backticks around a name (the terminal's
    habit for something to type: a window quotes nothing to type)."""
    return text.replace("`", "")


def _places(fix: Fix) -> str:
    """Where in the GUI to do ``fix``, as a sentence of its own ("Use the tray menu's Start
    model server, or change Settings > Model server > Endpoint URL."); "" when it names no
    place."""
    remedy = REMEDY_PLACES[fix.remedy] if fix.remedy is not None else ""
    setting = setting_place(fix.setting) if fix.setting else ""
    ways = [f"use {remedy}" if remedy else "",
            f"change {setting}" if setting and setting != remedy else ""]
    said = ", or ".join(way for way in ways if way)
    return _sentence(said[:1].upper() + said[1:]) if said else ""


def _sentence(text: str) -> str:
    """``text`` ending as a sentence does, so that another may follow it."""
    text = text.rstrip()
    return text if not text or text.endswith((".", "!", "?", "…")) else f"{text}."


def _with_places(words: str, fix: Fix | None) -> str:
    """``words`` and, as the next sentence, where in the GUI to do ``fix``."""
    where = _places(fix) if fix is not None else ""
    words = plain_words(words)
    return f"{_sentence(words)} {where}" if where and words else words or where


def fix_text(fix: Fix | None) -> str:
    """The fix as a window says it: its words, then where in the GUI to do it; "" for none."""
    if fix is None:
        return ""
    return _with_places(fix.text, fix)


def reason_text(reason: str, fix: Fix | None) -> str:
    """A run's end reason (which holds the fix's words) with where in the GUI to do the fix:
    the window's counterpart of the terminal's reason line (app/cli/render.py)."""
    return _with_places(reason, fix)


@dataclass(frozen=True)
class ProblemView:
    """What a window shows of a problem: ``message``, ``fix`` in GUI terms ("" for none),
    and the remedy and setting for a window that has a button or field for them."""

    message: str
    fix: str = ""
    remedy: Remedy | None = None
    setting: str | None = None

    def text(self, label: str = "Fix") -> str:
        """The message and, on a second line, ``{label}: {fix}`` (the describe() form)."""
        return f"{self.message}\n{label}: {self.fix}" if self.fix else self.message

    def line(self) -> str:
        """The message and the fix on one line, for a status line or a tooltip."""
        return f"{self.message} {self.fix}".strip()


def view(problem: Problem | HolodeskError) -> ProblemView:
    """The problem as a window shows it."""
    fix = problem.fix
    return ProblemView(
        plain_words(problem.message),
        fix_text(fix),
        fix.remedy if fix is not None else None,
        fix.setting if fix is not None else None,
    )
