"""The target finder of X11: which window (and which program) receives an action.

What is read, and why (docs/safety.md says the same for people):

* the focused window: the window manager's ``_NET_ACTIVE_WINDOW``; without a manager that
  sets it, the X input focus walked up to its top-level client (the window with ``WM_STATE``,
  as xprop and xdotool find it); when the focus is the root (or follows the pointer), the
  window under the pointer, since that is where X sends the keys then;
* the window under a point: the X server's own answer (``TranslateCoordinates`` on the root),
  which honours input shapes, so a click-through overlay is not taken for the target;
* of a window: ``WM_CLASS``, the title (``_NET_WM_NAME``, else ``WM_NAME``), its process (the
  X-Resource extension's client pid; else ``_NET_WM_PID`` when ``WM_CLIENT_MACHINE`` is this
  machine) and from ``/proc`` the process's name and what its processes hold: a pty master,
  a terminal device or a session on a terminal make it a terminal, whatever it is called, and
  the terminal's foreground process group is the program in front (:mod:`control.procfs`);
* the frame's rectangle in root coordinates: physical pixels of the virtual screen, the
  coordinates the executor clicks in.

A pid is trusted only where it means a process on this machine: over a remote display (ssh -X,
a TCP display) the server's pids are another machine's, and an application's ``_NET_WM_PID``
is its own claim, checked against ``WM_CLIENT_MACHINE``.

Nothing here raises to the caller: a window that closes while it is looked at, a display that
cannot be reached, all give a :class:`~control.target.Target` with ``window == 0`` and a note,
which the policy treats as unknown (risky). python-xlib is imported on first use.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from control.procfs import (
    PROC,
    TerminalSign,
    TerminalView,
    holds_pty_master,
    look_into,
    process_name,
    read_stat,
)
from control.target import (
    NoTargetFinder,
    Target,
    TargetFinder,
    WindowListError,
    app_names,
    own_window_id,
)
from control.window_watch_x11 import StructureWatch, close_quietly
from model.coords import Rect

log = logging.getLogger(__name__)

__all__ = [
    "SESSION_PROCESSES",
    "OwnProcess",
    "X11TargetFinder",
    "make_target_finder",
    "terminal_ancestors",
]

_T = TypeVar("_T")

#: The class holodesk's Qt windows carry (Qt's xcb plugin uses the application name that
#: ui/app.py sets with ``QApplication.setApplicationName("holodesk")``).
HOLODESK_WM_CLASS = "holodesk"
#: How long :meth:`X11TargetFinder.activate` waits for the manager to move the focus.
_ACTIVATE_WAIT_S = 1.0

#: Processes that are the session itself, never "the terminal that runs holodesk": the walk up
#: from holodesk stops before them (marking the whole desktop shell holodesk's own would make
#: every click on it refused, and they are not what the person started holodesk in).
SESSION_PROCESSES = frozenset({
    "init", "systemd", "launchd", "sshd", "sshd-session", "login", "su", "agetty",
    "xinit", "startx", "xorg", "x", "xwayland", "gdm", "gdm3", "gdm-x-session",
    "gdm-wayland-session", "gdm-session-worker", "lightdm", "sddm", "sddm-helper", "xdm",
    "lxdm", "gnome-session", "gnome-session-binary", "gnome-shell", "plasmashell",
    "ksmserver", "startplasma-x11", "startplasma-wayland", "plasma_session", "kwin_x11",
    "kwin_wayland", "xfce4-session", "xfwm4", "lxsession", "lxqt-session", "mate-session",
    "cinnamon-session", "cinnamon", "budgie-wm", "mutter", "marco", "metacity", "muffin",
    "openbox", "fluxbox", "icewm", "i3", "sway", "bspwm", "awesome", "dwm",
})

_NO_FOCUS = "no window has the keyboard focus"


# --- holodesk's own windows ----------------------------------------------------------------------


def _stdio_is_a_tty() -> bool:
    for fd in (0, 1):
        try:
            if os.isatty(fd):
                return True
        except OSError:
            continue
    return False


def terminal_ancestors(pid: int, proc: Path = PROC) -> tuple[int, ...]:
    """The processes above ``pid`` up to and including the first that holds a pty master (the
    terminal emulator, whatever its name), stopping before pid 1 and any session process.

    Without a terminal on the way (holodesk over ssh) the walk ends at the session and returns
    the shells it passed, which own no windows: harmless, and a program that does own windows
    there (an IDE whose terminal runs holodesk) is rightly holodesk's. In tmux the walk ends at
    the tmux server (it holds the panes' masters), which owns no window.
    """
    chain: list[int] = []
    stat = read_stat(pid, proc)
    parent = stat.ppid if stat else 0
    while parent > 1 and parent not in chain and len(chain) < 64:
        names = app_names(process_name(parent, proc))
        if not names or names & SESSION_PROCESSES:
            break
        chain.append(parent)
        if holds_pty_master(parent, proc):
            break
        stat = read_stat(parent, proc)
        parent = stat.ppid if stat else 0
    return tuple(chain)


@dataclass(frozen=True)
class OwnProcess:
    """What counts as holodesk's own: windows an action must never go to.

    ``pids``: this process and, when holodesk runs in a terminal, the processes up to the
    terminal emulator (its windows are the terminal that runs ``holodesk run``). ``windows``:
    the terminal window ``$WINDOWID`` names. ``wm_classes``: the window class of holodesk's Qt
    windows, whichever process shows them.
    """

    pids: frozenset[int] = frozenset()
    windows: frozenset[int] = frozenset()
    wm_classes: frozenset[str] = frozenset({HOLODESK_WM_CLASS})

    def owns(self, target: Target) -> bool:
        if target.window and target.window in self.windows:
            return True
        if target.pid and target.pid in self.pids:
            return True
        return bool(target.wm_class) and target.wm_class.lower() in self.wm_classes

    @classmethod
    def current(cls, *, proc: Path = PROC, environ: Mapping[str, str] | None = None,
                tty: bool | None = None, pid: int | None = None) -> OwnProcess:
        """This process's: its pid, the terminal above it (only when stdin or stdout is a
        terminal: a desktop launcher's parents are the session) and ``$WINDOWID``."""
        me = os.getpid() if pid is None else pid
        pids = {me}
        if _stdio_is_a_tty() if tty is None else tty:
            pids.update(terminal_ancestors(me, proc))
        window = own_window_id(dict(os.environ if environ is None else environ))
        return cls(pids=frozenset(pids), windows=frozenset({window} if window else ()))


# --- X11 ---------------------------------------------------------------------------------------


def _local_display(name: str | None) -> bool:
    """Whether the display is on this machine (a Unix socket): only then are the server's
    client pids pids here. ``localhost:10`` (ssh -X) is a forwarded, remote display."""
    name = name if name is not None else os.environ.get("DISPLAY", "")
    host = name.rsplit(":", 1)[0] if ":" in name else ""
    return host in ("", "unix") or host.startswith("/")  # launchd-style socket paths too


def _same_host(a: str, b: str) -> bool:
    """Whether two host names name one machine (a short name and its domain name alike)."""
    return a.strip().lower().split(".")[0] == b.strip().lower().split(".")[0]


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")
    return str(value) if value is not None else ""


class _Gone(Exception):
    """A connection-level failure: the display is closed and opened again next time."""


class X11TargetFinder:
    """:class:`~control.target.TargetFinder` over python-xlib, on its own X connection.

    The connection opens on first use and is shared under a lock, so the agent thread and a
    UI thread may both ask. ``own`` says which windows are holodesk's (default: this process's,
    :meth:`OwnProcess.current`).
    """

    def __init__(self, display_name: str | None = None, own: OwnProcess | None = None,
                 *, proc: Path = PROC) -> None:
        self.display_name = display_name
        self.own = OwnProcess.current() if own is None else own
        self.proc = proc
        self._lock = threading.Lock()
        self._display: Any = None
        self._local = _local_display(display_name)
        self._watch = StructureWatch(display_name)
        self._list_lock = threading.Lock()
        self._listed: tuple[Target, ...] | None = None
        self._listed_at: int | None = None  # the watch's generation when listed
        # Which window inside each top-level is the application's (top id: client id), for
        # one generation of the watch: finding it walks the top-level's children asking each
        # for WM_STATE (tens of round trips where no window manager sets it), and only a
        # change the watch sees (a window framed, unframed, created, destroyed) changes it.
        self._clients: dict[int, int] = {}
        self._clients_at: int | None = None
        self._generation: int | None = None  # the watch's, when the current question began
        self._provisional = False  # a top-level was named without a marked client inside
        self._hostname = socket.gethostname()

    # -- the protocol --

    def focused(self) -> Target:
        return self._ask(self._focused, "the focused window", lambda note: Target(note=note))

    def at(self, x: int, y: int) -> Target:
        return self._ask(lambda d: self._at(d, x, y), f"the window at ({x}, {y})",
                         lambda note: Target(note=note))

    def windows(self) -> Sequence[Target]:
        # Asked for at every frame (to paint windows out): listed again only when a top-level
        # window came, went, moved, restacked or was (un)mapped since the last list (the
        # watch); the names of a window do not change while it is mapped (ICCCM sets them
        # before), its title may (the list is for painting, which does not look at it).
        with self._list_lock:
            generation = self._watch.generation()
            if generation is None or generation != self._listed_at or self._listed is None:
                self._provisional = False
                why: list[str] = []
                listed = self._ask(self._windows, "the windows",
                                   lambda note: why.append(note))
                if listed is None:
                    # Not "no windows": the caller paints everything out rather than nothing.
                    self._listed = None
                    raise WindowListError(why[0] if why else "the windows cannot be listed")
                self._listed = tuple(listed)
                # A window named for want of a marked client may be named otherwise once its
                # manager marks it, which the watch does not see: listed again next time.
                self._listed_at = None if self._provisional else generation
            return self._listed if self._listed is not None else ()

    def activate(self, target: Target) -> bool:
        if not target.window:
            return False
        self._ask(lambda d: self._activate(d, target.window), "the focus back",
                  lambda note: None)
        # The manager moves the focus when it gets to the request: wait for it, briefly.
        deadline = time.monotonic() + _ACTIVATE_WAIT_S
        while True:
            if self.focused().window == target.window:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)

    def close(self) -> None:
        with self._list_lock:
            self._listed = None
            self._clients = {}
            self._watch.close()
        with self._lock:
            self._drop()

    # -- connection and errors --

    def _ask(self, query: Callable[[Any], _T], what: str, failed: Callable[[str], _T]) -> _T:
        from Xlib import error as xerror

        with self._lock:
            self._generation = self._watch.generation()
            for attempt in (1, 2):
                try:
                    return query(self._connection())
                except _Gone as e:
                    log.debug("target finder: %s: %s", what, e)
                    return failed(str(e))
                except xerror.ConnectionClosedError as e:
                    self._drop()
                    log.debug("target finder: the X connection closed asking for %s: %s",
                              what, e)
                    if attempt == 2:
                        return failed("the X display went away; holodesk cannot tell which "
                                      "application receives the action")
                except xerror.XError as e:
                    # A window closed between two questions: look again once, from the top
                    # (a client remembered inside a frame may be the window that closed: the
                    # root watch does not see a client closing inside its frame).
                    log.debug("target finder: %s changed while looked at: %s", what, e)
                    self._clients = {}
                    if attempt == 2:
                        return failed("the window closed while holodesk looked at it")
                except Exception as e:  # never raise into the agent: unknown is judged risky
                    self._drop()
                    log.debug("target finder: %s failed", what, exc_info=True)
                    return failed(f"holodesk could not look at {what} ({type(e).__name__}: "
                                  f"{e})")
        return failed(f"holodesk could not look at {what}")

    def _connection(self) -> Any:
        if self._display is None:
            from Xlib import display as xdisplay

            try:
                self._display = xdisplay.Display(self.display_name)
            except Exception as e:  # DisplayError, OSError, and python-xlib's own slips
                name = self.display_name or os.environ.get("DISPLAY", "")
                raise _Gone(f"the X display {name or '(DISPLAY not set)'} cannot be opened "
                            f"({e}); run holodesk in an X11 session") from e
        return self._display

    def _drop(self) -> None:
        display, self._display = self._display, None
        close_quietly(display, "the target finder")

    # -- queries (under the lock, on a live connection) --

    def _prop(self, d: Any, window: Any, name: str) -> Any:
        from Xlib import X

        prop = window.get_full_property(d.get_atom(name), X.AnyPropertyType)
        return None if prop is None else prop.value

    def _window(self, d: Any, wid: int) -> Any:
        return d.create_resource_object("window", wid)

    def _has_state(self, d: Any, window: Any) -> bool:
        return self._prop(d, window, "WM_STATE") is not None

    def _toplevel(self, d: Any, window: Any) -> Any:
        """The ancestor of ``window`` that is a child of the root (None for the root)."""
        root_id = d.screen().root.id
        current = window
        for _ in range(64):
            if current.id == root_id:
                return None
            parent = current.query_tree().parent
            if not parent or parent.id == root_id:
                return current
            current = parent
        return current

    def _client_below(self, d: Any, top: Any) -> Any:
        """The client window inside a top-level (a frame): the first with ``WM_STATE``,
        breadth first (XmuClientWindow); the top-level itself when none has it (an
        override-redirect menu, a window on a desktop without a manager)."""
        generation = self._generation
        if generation is None or generation != self._clients_at:
            self._clients = {}
            self._clients_at = generation
        elif top.id in self._clients:
            return self._window(d, self._clients[top.id])
        client, marked = self._find_client_below(d, top)
        # None marked inside: maybe a frame its manager has not finished (it may mark the
        # client after mapping the frame, a property change the root watch does not see).
        # Remembered only where no manager ever marks one: an override-redirect window, or
        # any window while no manager runs (one that starts reframes the windows: the watch
        # sees that; a manager that does not reframe them names the same window).
        if marked or top.get_attributes().override_redirect or not self._managed(d):
            if generation is not None:
                self._clients[top.id] = client.id
        else:
            self._provisional = True
        return client

    def _managed(self, d: Any) -> bool:
        """Whether a window manager runs: it alone redirects the root's children's requests
        (ICCCM), so some client selects SubstructureRedirect on the root."""
        from Xlib import X

        masks = d.screen().root.get_attributes().all_event_masks
        return bool(masks & X.SubstructureRedirectMask)

    def _find_client_below(self, d: Any, top: Any) -> tuple[Any, bool]:
        """The client and whether it has ``WM_STATE`` (else it is ``top``, for want of one)."""
        if self._has_state(d, top):
            return top, True
        level = [top]
        for _ in range(4):
            below = [c for w in level for c in w.query_tree().children]
            for child in below:
                if self._has_state(d, child):
                    return child, True
            level = below
            if not level:
                break
        return top, False

    def _client_above(self, d: Any, window: Any) -> tuple[Any, Any]:
        """For a window deep inside an application (the input focus): its client and the
        top-level holding it."""
        top = self._toplevel(d, window)
        if top is None:
            return None, None
        current = window
        while current.id != top.id:
            if self._has_state(d, current):
                return current, top
            current = current.query_tree().parent
        return self._client_below(d, top), top

    def _wm_check(self, d: Any) -> int:
        value = self._prop(d, d.screen().root, "_NET_SUPPORTING_WM_CHECK")
        return int(value[0]) if value else 0

    def _activate(self, d: Any, wid: int) -> None:
        from Xlib import X, protocol

        root = d.screen().root
        window = self._window(d, wid)
        if self._wm_check(d):
            # EWMH: ask the manager (source 2, a pager: a user's request, not an app's).
            event = protocol.event.ClientMessage(
                window=window, client_type=d.get_atom("_NET_ACTIVE_WINDOW"),
                data=(32, [2, X.CurrentTime, 0, 0, 0]))
            root.send_event(event, event_mask=X.SubstructureRedirectMask
                            | X.SubstructureNotifyMask)
        else:
            window.set_input_focus(X.RevertToParent, X.CurrentTime)
        d.flush()

    def _focused(self, d: Any) -> Target:
        from Xlib import X

        root = d.screen().root
        active = self._prop(d, root, "_NET_ACTIVE_WINDOW")
        named: tuple[Any, Any] | None = None
        if active and int(active[0]):
            # A window the manager names but that is gone raises here: unknown, not a guess.
            client, top = self._client_above(d, self._window(d, int(active[0])))
            if client is not None:
                named = client, top
        focus = d.get_input_focus().focus
        if focus == X.NONE:
            return self._describe(d, *named) if named else Target(note=_NO_FOCUS)
        if focus != X.PointerRoot and focus.id != root.id:
            # X hands the keys to the input focus, whatever the manager calls active (an
            # application may set the focus itself, or hold a window of another program
            # embedded in its own): that window, and the process that made it, decide.
            client, top = self._client_above(d, focus)
            if client is None:
                return Target(note=_NO_FOCUS, menu=self._menu_shown(d))
            if top.id == self._wm_check(d) or top.get_attributes().map_state != X.IsViewable:
                # The manager parks the focus on its own window when no window has it.
                return Target(note=_NO_FOCUS, menu=self._menu_shown(d))
            return self._describe(d, client, top, leaf=focus)
        if named:
            return self._describe(d, *named)
        # Focus on the root (or following the pointer): X sends keys to the window under it.
        pointer = root.query_pointer()
        if not pointer.child:
            return Target(desktop=True, note="the desktop", menu=self._menu_shown(d))
        return self._describe(d, self._client_below(d, pointer.child), pointer.child,
                              leaf=self._leaf(d, pointer.child, pointer.root_x, pointer.root_y))

    def _at(self, d: Any, x: int, y: int) -> Target:
        root = d.screen().root
        child = root.translate_coords(root, x, y).child
        if not child:
            return Target(desktop=True, note="the desktop", menu=self._menu_shown(d))
        return self._describe(d, self._client_below(d, child), child,
                              leaf=self._leaf(d, child, x, y))

    def _leaf(self, d: Any, top: Any, x: int, y: int) -> Any:
        """The deepest window under ``(x, y)`` inside ``top``: the one the click goes to, which
        another program may have made (a terminal embedded in an application's window)."""
        root = d.screen().root
        window = top
        for _ in range(32):
            child = window.translate_coords(root, x, y).child
            if not child:
                break
            window = child
        return window

    def _windows(self, d: Any) -> list[Target]:
        from Xlib import X

        out = []
        manager = self._wm_check(d)
        for top in d.screen().root.query_tree().children:  # bottom to top
            attrs = top.get_attributes()
            if attrs.map_state != X.IsViewable or attrs.win_class != X.InputOutput:
                continue
            if top.id == manager:
                continue
            target = self._describe(d, self._client_below(d, top), top, deep=False)
            if not target.wm_class:
                # Named after it was mapped (ICCCM says before; not every toolkit does): a
                # property change the watch does not see. Listed again next time.
                self._provisional = True
            out.append(target)
        return out

    def _describe(self, d: Any, client: Any, top: Any, *, deep: bool = True,
                  leaf: Any = None) -> Target:
        """``deep=False`` leaves out what the window's processes hold (whether it is a terminal,
        and the program in front): that costs a walk of /proc, and the window list is asked
        for at every frame to paint windows out, which needs the names and the rectangle
        only. ``leaf`` is the window the event itself goes to (the input focus, the deepest
        window under the point): when another process made it, what that process holds
        counts too."""
        wm_class = _text(self._prop(d, client, "WM_CLASS")).split("\0")
        instance = wm_class[0] if wm_class else ""
        klass = wm_class[1] if len(wm_class) > 1 else ""
        title = _text(self._prop(d, client, "_NET_WM_NAME") or self._prop(d, client, "WM_NAME"))
        pid = self._pid(d, client)
        process = process_name(pid, self.proc) if pid else ""
        view = look_into(pid, self.proc) if deep else None
        if view is not None and leaf is not None and leaf.id != client.id:
            maker = self._server_pid(d, leaf)
            if maker and maker != pid:
                inner = look_into(maker, self.proc)
                if inner.sign is not None:
                    view = inner
        if view is not None and view.sign is None:
            view = self._claimed_view(d, client, pid) or view
        types = self._prop(d, client, "_NET_WM_WINDOW_TYPE") or ()
        desktop = d.get_atom("_NET_WM_WINDOW_TYPE_DESKTOP") in types
        dialog = deep and (d.get_atom("_NET_WM_WINDOW_TYPE_DIALOG") in types
                           or self._prop(d, client, "WM_TRANSIENT_FOR") is not None)
        geometry = top.get_geometry()
        border = 2 * int(geometry.border_width)
        rect = Rect(int(geometry.x), int(geometry.y), int(geometry.width) + border,
                    int(geometry.height) + border)
        terminal = view.sign if view is not None else None
        if desktop and terminal is TerminalSign.NO_PROCESS:
            terminal = None  # the desktop's icons window of a manager that names no process
        target = Target(window=int(client.id), wm_instance=instance, wm_class=klass,
                        title=title, pid=pid or None, process=process,
                        inside=view.inside if view is not None else "",
                        desktop=desktop, rect=rect, terminal=terminal, dialog=dialog,
                        menu=self._menu_shown(d) if deep else None)
        return replace(target, own=True) if self.own.owns(target) else target

    def _menu_shown(self, d: Any) -> bool:
        """Whether a menu is shown on the screen: a mapped override-redirect window typed as a
        menu (GTK, Qt, Tk and Mozilla set _NET_WM_WINDOW_TYPE to DROPDOWN_MENU, POPUP_MENU,
        MENU or COMBO on their popups) or of Tk's menu class "Menu". Whichever application
        made it: an open menu holds the keyboard grab, so it takes the next key."""
        from Xlib import X
        from Xlib import error as xerror

        menus = {d.get_atom(f"_NET_WM_WINDOW_TYPE_{name}")
                 for name in ("DROPDOWN_MENU", "POPUP_MENU", "MENU", "COMBO")}
        for top in d.screen().root.query_tree().children:
            try:
                attrs = top.get_attributes()
                if (attrs.map_state != X.IsViewable or not attrs.override_redirect
                        or attrs.win_class != X.InputOutput):
                    continue
                types = self._prop(d, top, "_NET_WM_WINDOW_TYPE") or ()
                if menus & set(types):
                    return True
                wm_class = _text(self._prop(d, top, "WM_CLASS")).split("\0")
                if len(wm_class) > 1 and wm_class[1] == "Menu":
                    return True
            except (xerror.BadWindow, xerror.BadDrawable):
                continue  # gone since the list: not shown
        return False

    def _server_pid(self, d: Any, window: Any) -> int:
        """The process that made ``window``, as the X server knows it (0: not known)."""
        if self._local and d.has_extension("X-Resource"):
            from Xlib.ext import res

            reply = d.res_query_client_ids([{"client": window.id,
                                             "mask": res.LocalClientPIDMask}])
            for item in reply.ids:
                if item.spec.mask == res.LocalClientPIDMask and item.value:
                    return int(item.value[0])
        return 0

    def _claimed_view(self, d: Any, client: Any, pid: int) -> TerminalView | None:
        """What the window's own claims add to what its connection's process holds.

        A program on another machine (``WM_CLIENT_MACHINE``, as over ``ssh -X``) cannot be
        looked into: judged as a terminal. A ``_NET_WM_PID`` of this machine other than the
        process the X server names (the connection goes through a relay) is looked into too;
        only what it shows holding counts, since the claim is the application's own (a
        sandbox's pid of another namespace names some other process here)."""
        machine = _text(self._prop(d, client, "WM_CLIENT_MACHINE"))
        if machine and not _same_host(machine, self._hostname):
            return TerminalView(TerminalSign.ELSEWHERE)
        claimed = self._prop(d, client, "_NET_WM_PID")
        if not claimed or not self._local or int(claimed[0]) in (0, pid):
            return None
        other = int(claimed[0])
        try:
            if (self.proc / str(other)).stat().st_uid != os.getuid():
                return None
        except OSError:
            return None
        inner = look_into(other, self.proc)
        if inner.sign in (TerminalSign.PTY_MASTER, TerminalSign.TTY_SESSION,
                          TerminalSign.TTY_DEVICE):
            return inner
        return None

    def _pid(self, d: Any, client: Any) -> int:
        pid = self._server_pid(d, client)
        if pid:
            return pid
        # The application's own claim: a pid on the machine it names.
        claimed = self._prop(d, client, "_NET_WM_PID")
        if not claimed:
            return 0
        machine = _text(self._prop(d, client, "WM_CLIENT_MACHINE"))
        if (machine and machine != self._hostname) or (not machine and not self._local):
            return 0
        return int(claimed[0])


# --- choosing a finder -------------------------------------------------------------------------

_WAYLAND_NOTE = ("unknown application (on Wayland holodesk cannot see which application "
                 "receives an action; run holodesk in an X11 session)")


def make_target_finder(display: str | None = None, *,
                       environ: Mapping[str, str] | None = None,
                       platform: str | None = None) -> TargetFinder:
    """The finder for this desktop: :class:`X11TargetFinder` on Linux with an X display, a
    :class:`~control.target.NoTargetFinder` elsewhere.

    Under Wayland (``WAYLAND_DISPLAY`` set, or the session says so) X11 sees only the
    XWayland clients: a native Wayland terminal would be invisible, and the window under a
    point could be an X window hidden behind it. Half an answer would let a submit into a
    Wayland terminal through as "some X application", so there holodesk admits it sees
    nothing and every submit is judged risky.
    """
    env = os.environ if environ is None else environ
    plat = sys.platform if platform is None else platform
    if not plat.startswith("linux"):
        return NoTargetFinder()
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return NoTargetFinder(note=_WAYLAND_NOTE)
    if not (display or env.get("DISPLAY")):
        return NoTargetFinder(note="unknown application (no X display: DISPLAY is not set)")
    return X11TargetFinder(display, OwnProcess.current(environ=env))

