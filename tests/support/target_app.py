"""A real target window for the X11 tests: big solid-colour buttons, a text field, a drag pad.

Run it on a test's Xvfb::

    python -m tests.support.target_app --events EVENTS.jsonl [--layout LAYOUT.json]
        [--geometry 1000x700+100+50] [--animate-ms 600] [--image PICTURE.png]
        [--class-name HolodeskTarget] [--label save=Store]

Every event it receives is appended to EVENTS as one JSON object per line, flushed at once
(``type`` is pointer_press (any widget), press, release, click, double_click, triple_click,
motion_count, key_down, key_up, text, scroll, yview, focus_in, animate_start, animate_frame,
animate_end, ready, sync). Each carries ``t``
(``time.monotonic()``, comparable across processes on Linux). When the window is mapped it
writes LAYOUT (atomically): the window rectangle and, per widget, its screen rectangle, its
colour and a ``solid`` sub-rectangle guaranteed to be that colour alone.

There is no window manager on Xvfb, so the app takes the keyboard focus itself (focus_force
at start and on every click). It behaves like a modern app where the tests need it to: Ctrl+A
selects all in the text fields (Tk on X11 binds it to nothing useful), Ctrl+V pastes the
CLIPBOARD (Tk's own binding, through UTF8_STRING, so non-ASCII text arrives intact).

``--image`` shows only that picture filling the window: the capture bench uses it as busy,
realistic screen content.

A test proves that nothing more is on its way (after a stop, a dry run, a refused step) with
:meth:`RunningApp.sync`, never with a sleep: it sends the window a ``HOLODESK_SYNC`` client
message, which the app logs as a ``sync`` event (see there why that is a proof).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tkinter as tk
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.xvfb import Xvfb

REPO_ROOT = Path(__file__).resolve().parents[2]

# name: (x, y, width, height, colour) inside the window; the solid part is below the label.
BUTTONS: dict[str, tuple[int, int, int, int, str]] = {
    "save": (40, 40, 200, 100, "#ff0000"),
    "cancel": (280, 40, 200, 100, "#00ff00"),
    "open": (40, 520, 200, 100, "#ff00ff"),
    "animate": (280, 520, 200, 100, "#ff8000"),
}
FIELDS: dict[str, tuple[int, int, int, int, str]] = {
    "field": (40, 180, 440, 44, "#0000ff"),
    "field2": (40, 250, 440, 44, "#00ffff"),
}
PAD = (540, 40, 420, 260, "#ffff00")
LIST = (40, 320, 440, 170, "#ffffff")
ANIM = (540, 330, 420, 290, "#000000")
LABEL_H = 28  # the button label sits in the top strip; the rest is solid colour
DEFAULT_GEOMETRY = "1000x660+0+0"
SYNC_PROTOCOL = "HOLODESK_SYNC"  # a WM_PROTOCOLS client message the app logs as "sync"

# Sends SYNC_PROTOCOL to window argv[1] and waits until the X server has processed the request.
# Under a window manager that window is the manager's frame: the message goes to the client
# inside it (the first window with WM_STATE, which the manager sets, breadth first).
_SEND_SYNC = """\
import sys
from Xlib import X, display, protocol
d = display.Display()
state = d.intern_atom('WM_STATE')

def client(top):
    level = [top]
    while level:
        for w in level:
            if w.get_full_property(state, X.AnyPropertyType) is not None:
                return w
        level = [c for w in level for c in w.query_tree().children]
    return top

w = client(d.create_resource_object('window', int(sys.argv[1])))
data = [d.intern_atom(sys.argv[2]), X.CurrentTime, 0, 0, 0]
w.send_event(protocol.event.ClientMessage(
    window=w, client_type=d.intern_atom('WM_PROTOCOLS'), data=(32, data)), event_mask=0)
d.sync()
"""


class EventLog:
    """Appends JSON lines and flushes each, so a reader in another process sees them at once."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def write(self, kind: str, **fields: Any) -> None:
        fields = {"type": kind, "t": time.monotonic(), **fields}
        self._file.write(json.dumps(fields, ensure_ascii=False) + "\n")
        self._file.flush()


class TargetApp:
    """The window and its bindings; see the module docstring."""

    def __init__(
        self,
        root: tk.Tk,
        log: EventLog,
        layout_path: Path | None,
        animate_ms: int,
        animate_interval_ms: int,
        labels: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.labels = labels or {}
        self.log = log
        self.layout_path = layout_path
        self.animate_ms = animate_ms
        self.animate_interval_ms = animate_interval_ms
        self.widgets: dict[str, tuple[tk.Widget, str, str]] = {}  # name: (widget, colour, kind)
        self.vars: dict[str, tk.StringVar] = {}
        self._press_widget: str | None = None
        self._motions = 0
        self._animating = False
        root.configure(bg="#d9d9d9")
        # Ctrl+A selects all, as in the apps holodesk drives (Tk's X11 default is nothing).
        # (Tk's emacs-like defaults make it <<LineStart>>: take it back.)
        root.event_delete("<<LineStart>>", "<Control-Key-a>", "<Control-Lock-Key-A>")
        root.event_add("<<SelectAll>>", "<Control-Key-a>")
        for name, (x, y, w, h, colour) in BUTTONS.items():
            self._button(name, x, y, w, h, colour)
        for name, (x, y, w, h, colour) in FIELDS.items():
            self._field(name, x, y, w, h, colour)
        self._pad()
        self._list()
        self._anim()
        root.bind_all("<KeyPress>", self._on_key_down, add="+")
        root.bind_all("<KeyRelease>", self._on_key_up, add="+")
        root.bind_all("<FocusIn>", self._on_focus, add="+")
        root.bind_all("<ButtonPress>", self._on_any_press, add="+")

    # -- widgets ----------------------------------------------------------------------------

    def _button(self, name: str, x: int, y: int, w: int, h: int, colour: str) -> None:
        frame = tk.Frame(
            self.root, bg=colour, bd=0, highlightthickness=0, name=name, cursor="hand2"
        )
        label = tk.Label(
            frame,
            text=self.labels.get(name, name.capitalize()),
            bg=colour,
            fg="#000000",
            bd=0,
            highlightthickness=0,
            font=("TkDefaultFont", 12, "bold"),
            name=f"{name}_label",
        )
        frame.place(x=x, y=y, width=w, height=h)
        label.place(x=0, y=0, width=w, height=LABEL_H)
        for widget in (frame, label):
            widget.bind("<ButtonPress>", lambda e, n=name: self._on_press(n, e))
            widget.bind("<ButtonRelease>", lambda e, n=name: self._on_release(n, e))
            widget.bind("<Double-Button-1>", lambda e, n=name: self._on_multi("double_click", n, e))
            widget.bind("<Triple-Button-1>", lambda e, n=name: self._on_multi("triple_click", n, e))
        self.widgets[name] = (frame, colour, "button")

    def _field(self, name: str, x: int, y: int, w: int, h: int, colour: str) -> None:
        var = tk.StringVar(self.root, name=f"{name}_var")
        fg = "#ffffff" if colour == "#0000ff" else "#000000"
        entry = tk.Entry(
            self.root,
            textvariable=var,
            bg=colour,
            fg=fg,
            insertbackground=fg,
            bd=0,
            highlightthickness=0,
            relief="flat",
            font=("TkFixedFont", 16),
            name=name,
            exportselection=False,
        )
        entry.place(x=x, y=y, width=w, height=h)
        var.trace_add("write", lambda *_: self.log.write("text", widget=name, value=var.get()))
        self.vars[name] = var
        self.widgets[name] = (entry, colour, "field")

    def _pad(self) -> None:
        x, y, w, h, colour = PAD
        pad = tk.Canvas(self.root, bg=colour, bd=0, highlightthickness=0, name="pad")
        pad.place(x=x, y=y, width=w, height=h)
        pad.bind("<ButtonPress-1>", lambda e: self._on_press("pad", e))
        pad.bind("<B1-Motion>", self._on_drag_motion)
        pad.bind("<ButtonRelease-1>", lambda e: self._on_release("pad", e))
        self.widgets["pad"] = (pad, colour, "pad")

    def _list(self) -> None:
        x, y, w, h, colour = LIST
        box = tk.Listbox(
            self.root,
            bg=colour,
            fg="#000000",
            bd=0,
            highlightthickness=0,
            name="list",
            font=("TkFixedFont", 12),
            activestyle="none",
        )
        for i in range(200):
            box.insert("end", f"Line {i:03d}: the quick brown fox jumps over the lazy dog")
        box.place(x=x, y=y, width=w, height=h)
        box.bind("<ButtonPress>", self._on_list_button, add="+")
        box.bind("<MouseWheel>", self._on_list_wheel, add="+")
        self.widgets["list"] = (box, colour, "list")

    def _anim(self) -> None:
        x, y, w, h, colour = ANIM
        canvas = tk.Canvas(self.root, bg=colour, bd=0, highlightthickness=0, name="anim")
        canvas.place(x=x, y=y, width=w, height=h)
        self.widgets["anim"] = (canvas, colour, "anim")

    # -- events -----------------------------------------------------------------------------

    def _on_any_press(self, event: tk.Event[Any]) -> None:
        # No window manager: take the keyboard focus ourselves, onto what was clicked.
        widget = event.widget
        self.log.write("pointer_press", widget=str(widget).rsplit(".", 1)[-1] or "root",
                       button=event.num, x=event.x_root, y=event.y_root)
        if isinstance(widget, tk.Entry):
            widget.focus_force()
        elif isinstance(widget, tk.Misc):
            self.root.focus_force()

    def _on_press(self, name: str, event: tk.Event[Any]) -> None:
        self._press_widget = name
        self._motions = 0
        self.log.write("press", widget=name, button=event.num, x=event.x_root, y=event.y_root)

    def _on_release(self, name: str, event: tk.Event[Any]) -> None:
        self.log.write("release", widget=name, button=event.num, x=event.x_root, y=event.y_root)
        if name == "pad":
            self.log.write("motion_count", widget=name, count=self._motions)
        inside = self._widget_at(event.x_root, event.y_root) == name
        if self._press_widget == name and inside and event.num in (1, 2, 3):
            self.log.write("click", widget=name, button=event.num, x=event.x_root, y=event.y_root)
            if name == "animate" and event.num == 1:
                self._start_animation()
        self._press_widget = None

    def _on_multi(self, kind: str, name: str, event: tk.Event[Any]) -> None:
        self.log.write(kind, widget=name, x=event.x_root, y=event.y_root)

    def _on_drag_motion(self, event: tk.Event[Any]) -> None:
        self._motions += 1

    def _on_list_button(self, event: tk.Event[Any]) -> None:
        num = int(event.num)
        if num in (4, 5):
            # Tk 8.6 on X11 reports the horizontal wheel (X buttons 6, 7) as Shift+4, Shift+5.
            horizontal = bool(int(event.state) & 1)
            if horizontal:
                direction, x_button = ("left", 6) if num == 4 else ("right", 7)
            else:
                direction, x_button = ("up", 4) if num == 4 else ("down", 5)
            self.log.write("scroll", widget="list", button=x_button, direction=direction,
                           x=event.x_root, y=event.y_root)
            self.root.after_idle(self._log_yview)

    def _on_list_wheel(self, event: tk.Event[Any]) -> None:
        direction = "up" if event.delta > 0 else "down"
        self.log.write(
            "scroll", widget="list", button=0, direction=direction, x=event.x_root, y=event.y_root
        )
        self.root.after_idle(self._log_yview)

    def _log_yview(self) -> None:
        box = self.widgets["list"][0]
        assert isinstance(box, tk.Listbox)
        self.log.write("yview", widget="list", first=box.yview()[0], index=box.nearest(0))

    def _on_key_down(self, event: tk.Event[Any]) -> None:
        self.log.write(
            "key_down",
            keysym=event.keysym,
            char=event.char,
            state=int(event.state),
            widget=self._focus_name(),
        )

    def _on_key_up(self, event: tk.Event[Any]) -> None:
        self.log.write(
            "key_up", keysym=event.keysym, state=int(event.state), widget=self._focus_name()
        )

    def _on_focus(self, event: tk.Event[Any]) -> None:
        self.log.write("focus_in", widget=str(event.widget).rsplit(".", 1)[-1] or "root")

    def _focus_name(self) -> str:
        focus = self.root.focus_get()
        return str(focus).rsplit(".", 1)[-1] if focus is not None else ""

    def _widget_at(self, x: int, y: int) -> str | None:
        for name, (widget, _, _) in self.widgets.items():
            left, top = widget.winfo_rootx(), widget.winfo_rooty()
            if left <= x < left + widget.winfo_width() and top <= y < top + widget.winfo_height():
                return name
        return None

    # -- animation (the settle bench) -------------------------------------------------------

    def _start_animation(self) -> None:
        if self._animating:
            return
        self._animating = True
        start = time.monotonic()
        self.log.write("animate_start", duration_ms=self.animate_ms)
        canvas = self.widgets["anim"][0]
        assert isinstance(canvas, tk.Canvas)
        colours = ["#202020", "#e0e0e0"]

        def tick(i: int) -> None:
            # ``changed_at`` is taken before the change is requested: it cannot be on screen
            # any earlier, so "returned after changed_at" is a safe test of "waited long enough".
            changed_at = time.monotonic()
            if (changed_at - start) * 1000 >= self.animate_ms:
                canvas.configure(bg=ANIM[4])
                self.root.update_idletasks()
                self.log.write("animate_end", frames=i, changed_at=changed_at)
                self._animating = False
                return
            canvas.configure(bg=colours[i % 2])
            self.root.update_idletasks()
            self.log.write("animate_frame", frame=i, changed_at=changed_at)
            self.root.after(self.animate_interval_ms, tick, i + 1)

        tick(0)

    # -- layout -----------------------------------------------------------------------------

    def write_layout(self) -> None:
        self.root.update_idletasks()
        widgets: dict[str, Any] = {}
        for name, (widget, colour, kind) in self.widgets.items():
            left, top = widget.winfo_rootx(), widget.winfo_rooty()
            w, h = widget.winfo_width(), widget.winfo_height()
            solid_top = top + LABEL_H if kind == "button" else top
            widgets[name] = {
                "kind": kind,
                "colour": colour,
                "rect": [left, top, w, h],
                "solid": [left, solid_top, w, top + h - solid_top],
                "center": [left + w // 2, top + h // 2],
            }
        layout = {
            "window": [
                self.root.winfo_rootx(),
                self.root.winfo_rooty(),
                self.root.winfo_width(),
                self.root.winfo_height(),
            ],
            "widgets": widgets,
            "pid": os.getpid(),
            "wid": int(self.root.wm_frame(), 16),
        }
        if self.layout_path is not None:
            tmp = self.layout_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(layout), encoding="utf-8")
            tmp.replace(self.layout_path)
        self.log.write("ready", layout=layout)


def _show_image(root: tk.Tk, path: Path, log: EventLog, layout_path: Path | None) -> None:
    photo = tk.PhotoImage(master=root, file=str(path))
    label = tk.Label(root, image=photo, bd=0, highlightthickness=0)
    label.image = photo  # type: ignore[attr-defined]  # keep a reference: Tk frees it otherwise
    label.place(x=0, y=0)

    def ready() -> None:
        root.update_idletasks()
        layout = {
            "window": [
                root.winfo_rootx(),
                root.winfo_rooty(),
                root.winfo_width(),
                root.winfo_height(),
            ],
            "widgets": {},
            "pid": os.getpid(),
            "wid": int(root.wm_frame(), 16),
        }
        if layout_path is not None:
            tmp = layout_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(layout), encoding="utf-8")
            tmp.replace(layout_path)
        log.write("ready", layout=layout)

    root.after(20, ready)


# -- the test side: launch the app on an Xvfb and read what it saw -------------------------------


@dataclass(frozen=True)
class Widget:
    """A widget of the running app, in screen pixels."""

    name: str
    kind: str
    colour: str
    rect: tuple[int, int, int, int]  # left, top, width, height
    solid: tuple[int, int, int, int]

    @property
    def center(self) -> tuple[int, int]:
        left, top, w, h = self.rect
        return left + w // 2, top + h // 2

    @property
    def solid_center(self) -> tuple[int, int]:
        left, top, w, h = self.solid
        return left + w // 2, top + h // 2

    @property
    def rgb(self) -> tuple[int, int, int]:
        c = self.colour.lstrip("#")
        return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


class RunningApp:
    """A target app process on an Xvfb; ``events()`` reads what it has logged so far."""

    def __init__(
        self,
        xvfb: Xvfb,
        workdir: Path,
        *,
        geometry: str = DEFAULT_GEOMETRY,
        extra_args: tuple[str, ...] = (),
        timeout: float = 20.0,
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.events_path = workdir / "events.jsonl"
        self.layout_path = workdir / "layout.json"
        self.events_path.write_text("", encoding="utf-8")
        self.layout_path.unlink(missing_ok=True)
        self._stderr = (workdir / "app.stderr").open("wb")
        env = xvfb.env()
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.target_app",
                "--events",
                str(self.events_path),
                "--layout",
                str(self.layout_path),
                "--geometry",
                geometry,
                *extra_args,
            ],
            env=env,
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        self._workdir = workdir
        self._env = env
        deadline = time.monotonic() + timeout
        while not self.layout_path.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"target app died: {self.stderr()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"target app not ready in {timeout}s: {self.stderr()}")
            time.sleep(0.02)
        raw = json.loads(self.layout_path.read_text(encoding="utf-8"))
        self.window: tuple[int, int, int, int] = tuple(raw["window"])
        self.wid = int(raw["wid"])  # the top-level (wrapper) window, for sync()
        self.widgets: dict[str, Widget] = {
            name: Widget(name, w["kind"], w["colour"], tuple(w["rect"]), tuple(w["solid"]))
            for name, w in raw["widgets"].items()
        }

    def stderr(self) -> str:
        return (self._workdir / "app.stderr").read_text(errors="replace")[-3000:]

    def events(self, kind: str | None = None, **match: Any) -> list[dict[str, Any]]:
        """The events logged so far, optionally of one type and with matching fields."""
        out: list[dict[str, Any]] = []
        for line in self.events_path.read_text(encoding="utf-8").splitlines():
            if not line.endswith("}"):
                continue  # a line being written right now
            event = json.loads(line)
            if kind is not None and event["type"] != kind:
                continue
            if all(event.get(k) == v for k, v in match.items()):
                out.append(event)
        return out

    def mark(self) -> int:
        """The number of events so far: pass it to ``events_since`` to see only newer ones."""
        return len(self.events_path.read_text(encoding="utf-8").splitlines())

    def events_since(
        self, mark: int, kind: str | None = None, **match: Any
    ) -> list[dict[str, Any]]:
        lines = self.events_path.read_text(encoding="utf-8").splitlines()[mark:]
        out = []
        for line in lines:
            if not line.endswith("}"):
                continue
            event = json.loads(line)
            if (kind is None or event["type"] == kind) and all(
                event.get(k) == v for k, v in match.items()
            ):
                out.append(event)
        return out

    def wait_for(
        self, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition"
    ) -> Any:
        """Poll ``predicate`` until it returns something truthy; fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if self.proc.poll() is not None:
                raise AssertionError(f"target app died while waiting for {what}: {self.stderr()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            time.sleep(0.02)

    def sync(self, timeout: float = 30.0) -> None:
        """Return once the app has handled every event the X server had queued for it.

        Sends the window a client message and waits until the app logs it. The server queues
        a client's events in the order it makes them, and Tk handles them in that order, so
        every input the server processed before the message has reached the app by then.
        Input from holodesk (pyautogui) and xdotool is processed before they go on: both wait
        for the server after each request (XSync). So after a process that sent input has
        returned or exited, ``sync`` proves that all of its input arrived, and nothing more
        is on its way: the condition a test of "nothing happened" must wait on.
        """
        mark = self.mark()
        subprocess.run([sys.executable, "-c", _SEND_SYNC, str(self.wid), SYNC_PROTOCOL],
                       env=self._env, check=True, timeout=timeout)
        self.wait_for(lambda: self.events_since(mark, "sync"), timeout, "the sync message")

    def text(self, widget: str = "field") -> str:
        """The field's last logged contents."""
        changes = self.events("text", widget=widget)
        return str(changes[-1]["value"]) if changes else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._stderr.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--layout", type=Path)
    parser.add_argument("--geometry", default=DEFAULT_GEOMETRY)
    parser.add_argument("--animate-ms", type=int, default=600)
    parser.add_argument("--animate-interval-ms", type=int, default=40)
    parser.add_argument("--image", type=Path)
    # The window class: a test names the app as another application (Tk capitalises it).
    parser.add_argument("--class-name", default="HolodeskTarget")
    # A changed window: a button with another label (--label save=Store).
    parser.add_argument("--label", action="append", default=[], metavar="BUTTON=TEXT")
    args = parser.parse_args(argv)
    log = EventLog(args.events)
    root = tk.Tk(className=args.class_name)
    root.title("holodesk target")
    root.geometry(args.geometry)
    root.protocol(SYNC_PROTOCOL, lambda: log.write("sync"))  # RunningApp.sync
    root.update_idletasks()
    if args.image is not None:
        _show_image(root, args.image, log, args.layout)
        root.wait_visibility(root)
    else:
        labels = dict(item.split("=", 1) for item in args.label)
        app = TargetApp(root, log, args.layout, args.animate_ms, args.animate_interval_ms,
                        labels)

        def ready() -> None:
            root.focus_force()
            fields = app.widgets["field"][0]
            fields.focus_set()
            app.write_layout()

        root.wait_visibility(root)
        root.after(50, ready)
    root.mainloop()


if __name__ == "__main__":
    main()
