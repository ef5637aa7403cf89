"""The application an action goes to, found before the policy judges the action.

The safety policy judges what an action does *to which application*: a line submitted in a
terminal runs a command whatever it says, Enter in a search box does not. So before each
action the agent asks a :class:`TargetFinder` which window will receive it (the focused
window for keys and typing, the window under the point for the mouse) and the policy reads
the :class:`Target`'s :attr:`Target.kind`.

What is recognised, and what is not (docs/safety.md says the same for people):

* terminals by what their processes hold, whatever the window is called
  (:mod:`control.procfs`): a pty master or a terminal device, or a session on a terminal
  below the window's process (an emulator nobody has heard of, an editor's or IDE's built-in
  terminal, a program started directly on a pty). A window whose processes cannot be looked
  into counts as one too. The finder fills in :attr:`Target.terminal`;
* run-a-command dialogs (Alt+F2) by name: they hold no terminal, and what they submit runs.
  A name can only make the rules stricter, never clear a window;
* not recognised: a terminal inside a web page (a browser is an application, so a page's
  shell gets the application rules), a remote desktop or VM window (the application inside is
  invisible to X11), and a terminal multiplexer's panes (the emulator is what is seen).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Protocol

from control.procfs import TerminalSign
from model.coords import Rect

__all__ = [
    "FILE_MANAGERS",
    "NO_FINDER",
    "RUN_DIALOGS",
    "NoTargetFinder",
    "Target",
    "TargetFinder",
    "TargetKind",
    "app_names",
]


class TargetKind(StrEnum):
    """What kind of application receives an action: what the policy's rules depend on."""

    TERMINAL = "terminal"  # a shell (or something as powerful) reads every submitted line
    FILE_MANAGER = "file manager"  # a drag out of it moves or deletes files
    APPLICATION = "application"  # anything else: content rules (buttons, Enter after typing)
    HOLODESK = "holodesk"  # holodesk's own window, or the terminal running holodesk
    UNKNOWN = "unknown"  # the finder found no window there
    NO_FINDER = "no finder"  # this platform has no target finder (yet)


#: Run-a-command dialogs and launchers (Alt+F2): whatever they submit runs.
RUN_DIALOGS = frozenset({
    "krunner", "org.kde.krunner", "xfce4-appfinder", "gmrun", "rofi", "dmenu", "albert",
    "ulauncher", "synapse", "kupfer", "wofi", "fuzzel", "bemenu", "gnome-shell",
    "mate-panel", "lxpanel", "xdg-run",
})

#: File managers: a drag out of one moves, copies or deletes files.
FILE_MANAGERS = frozenset({
    "nautilus", "org.gnome.nautilus", "dolphin", "org.kde.dolphin", "thunar", "nemo",
    "pcmanfm", "pcmanfm-qt", "caja", "konqueror", "spacefm", "doublecmd", "krusader",
    "io.elementary.files",
})


def app_names(*names: str) -> frozenset[str]:
    """The lower-case names an application goes by, without a path or a ``.desktop`` tail."""
    out: set[str] = set()
    for name in names:
        n = name.strip().lower()
        if not n:
            continue
        n = n.rsplit("/", 1)[-1].removesuffix(".desktop")
        out.add(n)
    return frozenset(out)


class WindowListError(RuntimeError):
    """The windows on the screen cannot be listed now (an X error, a broken connection)."""


@dataclass(frozen=True)
class Target:
    """The window an action goes to, as far as the platform tells.

    ``window`` is the X window id of the client (top-level) window, 0 when none was found.
    ``process`` is the name of the window's process, ``inside`` the name of the program the
    terminal runs in front (``bash``, ``vim``), "" when unknown. ``terminal`` says why the
    window is a terminal (what its processes hold), None when nothing does. ``own`` is set by
    the finder for holodesk's own windows and the terminal that runs holodesk. ``rect`` is the
    window's frame in physical pixels of the virtual screen, when known. ``note`` says why the
    target is unknown (for the person).
    """

    window: int = 0
    wm_instance: str = ""
    wm_class: str = ""
    title: str = ""
    pid: int | None = None
    process: str = ""
    inside: str = ""
    own: bool = False
    desktop: bool = False  # the root window or a desktop-icons window
    rect: Rect | None = None
    note: str = ""
    finder: bool = True  # False: the platform has no finder, nothing is known
    terminal: TerminalSign | None = None
    #: A dialog (its type says so, or it is transient for another window): a key there may
    #: answer the question its title asks.
    dialog: bool = False
    #: Whether a menu is shown on the screen (a mapped popup-menu window), when the action was
    #: judged: the next letter, Enter or Space picks in it. None: the finder cannot tell.
    menu: bool | None = None

    @property
    def names(self) -> frozenset[str]:
        """Every name the application goes by, lower case: class, instance, process."""
        return app_names(self.wm_class, self.wm_instance, self.process)

    @property
    def found(self) -> bool:
        return self.finder and (self.window != 0 or self.desktop)

    @property
    def kind(self) -> TargetKind:
        if not self.finder:
            return TargetKind.NO_FINDER
        if self.own:
            return TargetKind.HOLODESK
        if not self.found:
            return TargetKind.UNKNOWN
        names = self.names
        if self.terminal is not None or names & RUN_DIALOGS:
            return TargetKind.TERMINAL
        if names & FILE_MANAGERS:
            return TargetKind.FILE_MANAGER
        return TargetKind.APPLICATION

    def matches(self, apps: Iterable[str]) -> bool:
        """Whether this window belongs to one of ``apps`` (names as a person writes them:
        ``firefox``, ``KeePassXC``, ``org.keepassxc.KeePassXC.desktop``)."""
        return bool(self.names & app_names(*apps))

    def label(self) -> str:
        """Plain words for the person: ``xterm — bash``, ``Firefox``, ``no window found``."""
        if not self.finder:
            return self.note or "unknown application (no target finder on this platform)"
        if not self.found:
            return self.note or "no window found"
        if self.desktop and not self.window:
            return "the desktop"
        name = self.wm_class or self.process or self.wm_instance or f"window 0x{self.window:x}"
        if self.inside and self.inside.lower() not in self.names:
            name = f"{name} \u2014 {self.inside}"
        if self.own:
            name = f"{name} (holodesk's own)"
        return name


#: The target where the platform has no finder: every submit is judged risky.
NO_FINDER = Target(finder=False,
                   note="unknown application (holodesk cannot see windows on this platform yet)")


class TargetFinder(Protocol):
    """Finds the application that receives an action."""

    def focused(self) -> Target:
        """The window that receives keys now (a Target with ``window == 0`` when none)."""
        ...

    def at(self, x: int, y: int) -> Target:
        """The top-level window under ``(x, y)``, physical pixels of the virtual screen."""
        ...

    def windows(self) -> Sequence[Target]:
        """The mapped top-level windows, bottom to top, each with its ``rect`` and names (not
        ``inside`` nor ``children``: this list is for painting windows out, at every frame).
        Raises :class:`WindowListError` when they cannot be listed (never an empty list for
        an unknown one: the caller paints everything out then)."""
        ...

    def activate(self, target: Target) -> bool:
        """Ask for the keyboard focus to go back to ``target``'s window (after holodesk's own
        confirmation took it); True once that window has it."""
        ...


class NoTargetFinder:
    """The finder of a platform holodesk cannot look into yet (Windows, macOS, Wayland);
    ``note`` says why to the person (default: :data:`NO_FINDER`'s)."""

    def __init__(self, note: str = "") -> None:
        self.target = replace(NO_FINDER, note=note) if note else NO_FINDER

    def focused(self) -> Target:
        return self.target

    def at(self, x: int, y: int) -> Target:
        return self.target

    def windows(self) -> Sequence[Target]:
        # Unknown, not none: a caller painting windows out paints everything out.
        raise WindowListError(self.target.note or "holodesk cannot list windows here")

    def activate(self, target: Target) -> bool:
        return False


def own_window_id(environ: dict[str, str] | None = None) -> int:
    """The window of the terminal running this process, when the terminal says (``WINDOWID``,
    set by xterm, urxvt, kitty, alacritty, konsole, st); 0 otherwise."""
    env = os.environ if environ is None else environ
    try:
        return int(env.get("WINDOWID", "0"), 0)
    except ValueError:
        return 0
