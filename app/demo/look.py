"""What the practice window looks like, and how the demo model sees it in a screenshot.

The practice window (ui/practice) marks each part with a colour of its own, so the demo model
can find it by looking at the pixels, as the test stand-ins do: the window's border, the name
field's frame, the Blue swatch in the colour list, the Save and Delete draft buttons' frames,
and a checklist of four squares whose colour says how far the task is (to do, in progress,
done). The colours are saturated and apart: each differs from every other mark, from Qt's
greys and from its selection colour by more than :data:`TOLERANCE` on some channel, so a
pixel of one never counts as another (tests/app/test_demo_model.py checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image

RGB = tuple[int, int, int]

#: The practice window's X11 window class: what the demo run is limited to (``only_in``).
PRACTICE_WM_CLASS = "holodesk-practice"

BORDER: RGB = (200, 0, 200)  # the window's frame, all round
NAME_FIELD: RGB = (255, 120, 0)  # the frame of the name field
BLUE_SWATCH: RGB = (30, 60, 230)  # the swatch of "Blue" in the colour list
OTHER_SWATCHES: dict[str, RGB] = {"Red": (230, 30, 30), "Green": (40, 170, 40)}
SAVE_BUTTON: RGB = (130, 70, 0)  # the frame of Save
DELETE_BUTTON: RGB = (160, 0, 60)  # the frame of Delete draft
# The rows window of `holodesk eval` (app/demo/rows.py): its frame, and the row to select.
ROWS_BORDER: RGB = (0, 110, 110)
WANTED_ROW_MARK: RGB = (120, 0, 255)
LIST_FRAME: RGB = (255, 160, 200)  # the frame round its list


class Status(StrEnum):
    """A checklist square's state, shown by its colour."""

    TODO = "todo"
    ACTIVE = "active"  # the name field has the keyboard focus, waiting for the name
    DONE = "done"


STATUS_COLORS: dict[Status, RGB] = {
    Status.TODO: (255, 210, 0),
    Status.ACTIVE: (0, 200, 235),
    Status.DONE: (0, 200, 120),
}

#: The practice task, in the order the checklist shows it.
STEPS: tuple[str, ...] = ("name", "colour", "saved", "deleted")
NAME = "Ada Lovelace"
COLOUR = "Blue"

#: How far a pixel may be from a mark's colour on any channel and still count as it (JPEG
#: moves colours, most at edges).
TOLERANCE = 40


@dataclass(frozen=True)
class Box:
    """A rectangle of image pixels, right and bottom exclusive."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom


@dataclass(frozen=True)
class Mark:
    """Where a colour mark is: the centre of its pixels and how many there are."""

    x: float
    y: float
    pixels: int


def _mask(pixels: object, color: RGB, tolerance: int = TOLERANCE) -> object:
    import numpy as np

    array = np.asarray(pixels, dtype=np.int16)
    return np.all(np.abs(array - np.array(color, dtype=np.int16)) <= tolerance, axis=2)


class Screenshot:
    """One screenshot as the demo model reads it."""

    def __init__(self, image: Image.Image) -> None:
        import numpy as np

        self.width, self.height = image.size
        self._pixels = np.asarray(image.convert("RGB"), dtype=np.int16)

    def window(self, border: RGB = BORDER) -> Box | None:
        """The practice window (or the one framed in ``border``): the box of its border, when
        the whole border is in view.

        All four sides must show (each at least half there): a window half covered or half
        off the screen is not one the model may act in.
        """
        import numpy as np

        mask = np.asarray(_mask(self._pixels, border))
        if int(mask.sum()) < 400:
            return None
        ys, xs = np.nonzero(mask)
        box = Box(int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
        if box.width < 200 or box.height < 150:
            return None
        edge = 3  # rows and columns at the border's outer edge
        sides = (
            mask[box.top:box.top + edge, box.left:box.right].any(axis=0).mean(),
            mask[box.bottom - edge:box.bottom, box.left:box.right].any(axis=0).mean(),
            mask[box.top:box.bottom, box.left:box.left + edge].any(axis=1).mean(),
            mask[box.top:box.bottom, box.right - edge:box.right].any(axis=1).mean(),
        )
        if min(sides) < 0.5:
            return None
        return box

    def find(self, color: RGB, inside: Box, min_pixels: int = 60) -> Mark | None:
        """The centre of ``color``'s pixels inside ``inside``, or None when too few show."""
        import numpy as np

        area = self._pixels[inside.top:inside.bottom, inside.left:inside.right]
        mask = np.asarray(_mask(area, color))
        count = int(mask.sum())
        if count < min_pixels:
            return None
        ys, xs = np.nonzero(mask)
        # +0.5: pixel i covers [i, i+1), its centre is i + 0.5
        return Mark(inside.left + float(xs.mean()) + 0.5, inside.top + float(ys.mean()) + 0.5,
                    count)

    def pixels(self, inside: Box) -> Any:
        """The pixels inside ``inside``: an array of rows of RGB (int16)."""
        return self._pixels[inside.top:inside.bottom, inside.left:inside.right]

    def mask(self, color: RGB, inside: Box) -> Any:
        """Which pixels inside ``inside`` show ``color`` (a boolean array of its rows)."""
        import numpy as np

        return np.asarray(_mask(self.pixels(inside), color))

    def extent(self, color: RGB, inside: Box, min_pixels: int = 60) -> Box | None:
        """The box round ``color``'s pixels inside ``inside``, or None when too few show."""
        import numpy as np

        mask = self.mask(color, inside)
        if int(mask.sum()) < min_pixels:
            return None
        ys, xs = np.nonzero(mask)
        return Box(inside.left + int(xs.min()), inside.top + int(ys.min()),
                   inside.left + int(xs.max()) + 1, inside.top + int(ys.max()) + 1)

    def checklist(self, inside: Box) -> list[Status]:
        """The checklist's squares from top to bottom, each by the colour most of it shows."""
        import numpy as np

        area = self._pixels[inside.top:inside.bottom, inside.left:inside.right]
        masks = {status: np.asarray(_mask(area, color)) for status, color in
                 STATUS_COLORS.items()}
        rows = np.zeros(area.shape[0], dtype=np.int32)
        for mask in masks.values():
            rows += mask.sum(axis=1)
        found: list[Status] = []
        y = 0
        height = area.shape[0]
        while y < height:
            if rows[y] < 4:
                y += 1
                continue
            start = y
            while y < height and rows[y] >= 4:
                y += 1
            if y - start < 6:  # a sliver (an edge's JPEG fringe), not a square
                continue
            counts = {status: int(mask[start:y].sum()) for status, mask in masks.items()}
            found.append(max(counts, key=lambda s: counts[s]))
        return found
