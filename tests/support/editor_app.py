"""A small real text editor for the X11 tests: a real GUI program that writes files.

Run it on a test's Xvfb::

    python -m tests.support.editor_app --events EVENTS.jsonl --layout LAYOUT.json
        [--geometry 900x600+500+200]

A text area, a path field below it; Ctrl+S writes the text to the path (opened for writing
and truncated in place, as many editors save), Ctrl+O loads the path into the text area.
Its window class is ``Editor``. When it is mapped it writes LAYOUT (atomically): the window
and each widget's screen rectangle. Every save and load is appended to EVENTS as one JSON
object per line (``type``: ready, saved, opened, failed; ``path``, ``error``).

:class:`RunningEditor` starts it and reads what it did.
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
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.xvfb import Xvfb

REPO_ROOT = Path(__file__).resolve().parents[2]
CLASS_NAME = "Editor"
DEFAULT_GEOMETRY = "900x600+500+200"


class _Log:
    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def write(self, kind: str, **fields: Any) -> None:
        self._file.write(json.dumps({"type": kind, "t": time.monotonic(), **fields}) + "\n")
        self._file.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--layout", type=Path, required=True)
    parser.add_argument("--geometry", default=DEFAULT_GEOMETRY)
    args = parser.parse_args(argv)
    log = _Log(args.events)
    root = tk.Tk(className=CLASS_NAME)
    root.title("untitled - Editor")
    root.geometry(args.geometry)
    text = tk.Text(root, name="text", bg="#ffffff", fg="#000000", insertbackground="#000000",
                   font=("TkFixedFont", 14), undo=False)
    path = tk.Entry(root, name="path", bg="#ffffe0", fg="#000000", font=("TkFixedFont", 14))
    label = tk.Label(root, text="Save as (Ctrl+S saves, Ctrl+O opens):", anchor="w")
    text.place(x=10, y=10, relwidth=1.0, width=-20, relheight=1.0, height=-110)
    label.place(x=10, rely=1.0, y=-90, relwidth=1.0, width=-20, height=30)
    path.place(x=10, rely=1.0, y=-55, relwidth=1.0, width=-20, height=40)

    def save(_event: object = None) -> str:
        target = path.get().strip()
        try:
            with open(os.path.expanduser(target), "w", encoding="utf-8") as f:
                f.write(text.get("1.0", "end-1c"))
        except OSError as e:
            log.write("failed", path=target, error=str(e))
        else:
            root.title(f"{os.path.basename(target)} - Editor")
            log.write("saved", path=target)
        return "break"

    def load(_event: object = None) -> str:
        target = path.get().strip()
        try:
            with open(os.path.expanduser(target), encoding="utf-8") as f:
                content = f.read()
        except OSError as e:
            log.write("failed", path=target, error=str(e))
        else:
            text.delete("1.0", "end")
            text.insert("1.0", content)
            log.write("opened", path=target)
        return "break"

    root.bind_all("<Control-s>", save)
    root.bind_all("<Control-o>", load)

    def ready() -> None:
        root.update_idletasks()
        widgets = {name: [w.winfo_rootx(), w.winfo_rooty(), w.winfo_width(), w.winfo_height()]
                   for name, w in (("text", text), ("path", path))}
        layout = {"window": [root.winfo_rootx(), root.winfo_rooty(), root.winfo_width(),
                             root.winfo_height()], "wid": root.winfo_id(),
                  "widgets": widgets}
        tmp = args.layout.with_suffix(".tmp")
        tmp.write_text(json.dumps(layout), encoding="utf-8")
        tmp.replace(args.layout)
        log.write("ready", layout=layout)

    root.wait_visibility(root)
    root.after(50, ready)
    root.mainloop()


class RunningEditor:
    """The editor running on ``xvfb``; ``centre(name)`` of a widget, ``events()`` so far."""

    def __init__(self, xvfb: Xvfb, workdir: Path, *, geometry: str = DEFAULT_GEOMETRY,
                 timeout: float = 30.0) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.events_path = workdir / "events.jsonl"
        self.events_path.write_text("", encoding="utf-8")
        layout_path = workdir / "layout.json"
        self._stderr_path = workdir / "editor.stderr"
        env = xvfb.env()
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        with self._stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.support.editor_app", "--events",
                 str(self.events_path), "--layout", str(layout_path), "--geometry", geometry],
                env=env, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=err)
        self.screen = (1920, 1080)  # the display's size: a model's points are 0-1000 of it
        self.wait_for(layout_path.exists, timeout, "the editor's window")
        raw = json.loads(layout_path.read_text(encoding="utf-8"))
        self.window: tuple[int, int, int, int] = tuple(raw["window"])
        self.widgets: dict[str, tuple[int, int, int, int]] = {
            name: tuple(rect) for name, rect in raw["widgets"].items()}

    def centre(self, name: str) -> tuple[int, int]:
        left, top, width, height = self.widgets[name]
        return left + width // 2, top + height // 2

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        out = []
        for line in self.events_path.read_text(encoding="utf-8").splitlines():
            if line.endswith("}"):
                event = json.loads(line)
                if kind is None or event["type"] == kind:
                    out.append(event)
        return out

    def wait_for(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        from tests.support.gui import poll  # not in the editor's own process

        return poll(predicate, timeout, what, alive=self._died)

    def _died(self) -> str | None:
        if self.proc.poll() is None:
            return None
        return f"the editor died: {self._stderr_path.read_text(errors='replace')}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


if __name__ == "__main__":
    main()
