"""The board window of `holodesk eval`'s drag-an-item task: two boxes, "To do" and "Done", and
a card in "To do" to be dragged into "Done" (a Tk canvas; press, motion and release move it).

The card is painted :data:`CARD`, or :data:`CARD_HOVER` while the pointer is on it, and the
"Done" box is framed in :data:`DROP_BOX` (app/demo/task_look.py): what the demo model reads.
The state file says which box the card is in.
"""

from __future__ import annotations

from typing import Any

from app.demo.task_look import CARD, CARD_HOVER, CARD_TITLE, DROP_BOX, TaskWindow
from ui.practice.tasks.base import TaskApp, hex_colour

_WIDTH, _HEIGHT = 520, 300
#: The boxes: name and (left, top, right, bottom) on the canvas.
_BOXES = {"todo": (20, 40, 240, 280), "done": (280, 40, 500, 280)}
_TITLES = {"todo": "To do", "done": "Done"}
_CARD_SIZE = (170, 56)


class DragApp(TaskApp):
    kind = TaskWindow.DRAG
    title = "holodesk board window (eval)"

    def build(self) -> None:
        import tkinter as tk

        self.box = "todo"
        self.canvas = tk.Canvas(self.body, width=_WIDTH, height=_HEIGHT, bg="white",
                                highlightthickness=0)
        self.canvas.pack()
        for name, (left, top, right, bottom) in _BOXES.items():
            frame = hex_colour(DROP_BOX) if name == "done" else "#909090"
            self.canvas.create_rectangle(left, top, right, bottom, outline=frame, width=5,
                                         fill="#f4f4f4")
            self.canvas.create_text(left, top - 20, text=_TITLES[name], anchor="w",
                                    font=("TkDefaultFont", 12, "bold"))
        left, top = self._home("todo")
        self.card = self.canvas.create_rectangle(left, top, left + _CARD_SIZE[0],
                                                 top + _CARD_SIZE[1], fill=hex_colour(CARD),
                                                 outline="#606060", tags="card")
        self.canvas.create_text(left + 12, top + _CARD_SIZE[1] / 2, text=CARD_TITLE,
                                anchor="w", font=("TkDefaultFont", 12), tags="card")
        self.grabbed: tuple[float, float] | None = None
        self.canvas.tag_bind("card", "<Enter>", lambda _e: self._hover(True))
        self.canvas.tag_bind("card", "<Leave>", lambda _e: self._hover(False))
        self.canvas.tag_bind("card", "<ButtonPress-1>", self._press)
        self.canvas.bind("<B1-Motion>", self._motion)
        self.canvas.bind("<ButtonRelease-1>", self._release)

    @staticmethod
    def _home(box: str) -> tuple[int, int]:
        left, top, right, _bottom = _BOXES[box]
        return left + (right - left - _CARD_SIZE[0]) // 2, top + 30

    def _hover(self, on: bool) -> None:
        if self.grabbed is None:
            self.canvas.itemconfigure(self.card, fill=hex_colour(CARD_HOVER if on else CARD))

    def _press(self, event: Any) -> None:
        self.grabbed = (event.x, event.y)

    def _motion(self, event: Any) -> None:
        if self.grabbed is None:
            return
        self.canvas.move("card", event.x - self.grabbed[0], event.y - self.grabbed[1])
        self.grabbed = (event.x, event.y)

    def _release(self, _event: Any) -> None:
        if self.grabbed is None:
            return
        self.grabbed = None
        left, top, right, bottom = self.canvas.coords(self.card)
        x, y = (left + right) / 2, (top + bottom) / 2
        into = next((name for name, (bl, bt, br, bb) in _BOXES.items()
                     if bl <= x <= br and bt <= y <= bb), self.box)
        # Dropped anywhere else, the card goes back to its box; in a box it sits at its top.
        self.box = into
        home = self._home(into)
        self.canvas.move("card", home[0] - left, home[1] - top)
        self._hover(self.canvas.find_withtag("current") != ())
        self.write()

    def fields(self) -> dict[str, Any]:
        return {"box": self.box}
