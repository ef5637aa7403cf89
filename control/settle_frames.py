"""The frames of one settle wait: tiny ones for the detector, and the next screenshot made
while the screen is quiet.

After an action the detector (control/settle.py) polls until the screen has been still for
its quiet window; the step after then grabs and encodes the screenshot it sends (6 ms at
1080p, 15 at 4K on this project's CI machine). Most of that can happen during the wait:
when the detector's next look is likely its last, :meth:`SettleFrames.prepare` starts
encoding the pixels of the look it just took, on a thread of its own; the last look compares
its pixels with those, byte for byte, and :meth:`SettleFrames.frame` hands the encoded
screenshot over only when they were the same, the look was recent and the windows painted
out are still the ones painted out then. Anything else, and the step grabs as before: the
screenshot is never older or other than the one a grab at the end of the wait would take.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Protocol

from control.frame import Frame, GrayFrame
from model.coords import Rect

log = logging.getLogger(__name__)

#: How old the last look may be when the step takes its screenshot from it: the loop goes
#: from the end of the wait to the next step's capture at once (a pause drops the frame).
MAX_AGE_S = 0.05


@dataclass(frozen=True)
class Shot:
    """One look at the screen: BGRX pixels with the windows in ``rects`` painted out."""

    raw: bytes | bytearray = field(repr=False)
    width: int
    height: int
    at: float  # time.monotonic() when read
    capture_ms: float
    rects: tuple[Rect, ...]


class ShotSource(Protocol):
    """What a capturer gives :class:`SettleFrames`."""

    def shot(self, rects: tuple[Rect, ...] | None) -> Shot:
        """Read the screen, ``rects`` painted out (None: the windows to paint out, looked up
        right after the read)."""
        ...

    def small(self, shot: Shot) -> GrayFrame:
        """The detector's tiny grey frame of ``shot``."""
        ...

    def encode(self, shot: Shot) -> Frame:
        """The screenshot ``grab()`` would make of these pixels."""
        ...

    def rects(self) -> tuple[Rect, ...]:
        """The windows to paint out, looked up now."""
        ...


_SPECULATION: ThreadPoolExecutor | None = None
_SPECULATION_LOCK = threading.Lock()


def _speculation() -> ThreadPoolExecutor:
    # A thread of its own: the encode itself hands its bands to the scaling pool, and a task
    # of that pool waiting on its own pool could wait forever.
    global _SPECULATION
    with _SPECULATION_LOCK:
        if _SPECULATION is None:
            _SPECULATION = ThreadPoolExecutor(max_workers=1,
                                              thread_name_prefix="holodesk-settle-encode")
        return _SPECULATION


class SettleFrames:
    """Call it for the detector's frames; see the module docstring for the rest.

    Each look paints out the windows to paint out as they are at that look (looked up right
    after it read the screen, as a grab does): a window that goes away during the wait (the
    confirmation panel hiding) leaves the screen under it watched from then on."""

    def __init__(self, source: ShotSource, clock: Callable[[], float] = time.monotonic,
                 finish: Callable[[Frame], Frame] | None = None) -> None:
        """``finish`` runs on each frame made ahead, on the same thread (the capturer's
        :func:`~control.capture.finished`: what the step does with a frame next)."""
        self._source = source
        self._clock = clock
        self._finish = finish
        self._lock = threading.Lock()
        self._last: Shot | None = None
        self._small: GrayFrame | None = None
        self._encoding: tuple[Shot, Future[Frame]] | None = None
        self._confirmed: tuple[Shot, Future[Frame]] | None = None

    def __call__(self) -> GrayFrame:
        shot = self._source.shot(None)
        with self._lock:
            last, self._last = self._last, shot
            unchanged = last is not None and _same_pixels(last, shot)
            if unchanged and self._small is not None:
                small = self._small  # a byte compare costs less than the reduction
            else:
                small = self._small = self._source.small(shot)
            self._confirmed = None
            if self._encoding is not None:
                encoded, future = self._encoding
                # What is encoded is the look before (prepare, or a look that confirmed it):
                # the compare just made says whether it is still the screen.
                same = unchanged if encoded is last else _same_pixels(encoded, shot)
                if same:
                    # The pixels being encoded are still the screen, as of this look.
                    self._encoding = self._confirmed = (shot, future)
                else:
                    future.cancel()
                    self._encoding = None
        return small

    def looked_at(self) -> float:
        """When the last look read the screen (``time.monotonic()``)."""
        with self._lock:
            return self._last.at if self._last is not None else self._clock()

    def prepare(self) -> None:
        """Start encoding the last look's pixels (the detector's next look is likely its last).
        """
        with self._lock:
            shot = self._last
            if shot is None:
                return
            if self._encoding is not None and self._encoding[0] is shot:
                return  # a look keeps an encoding only when it saw the same pixels
            self._encoding = (shot, _speculation().submit(self._made, shot))

    def _made(self, shot: Shot) -> Frame:
        frame = self._source.encode(shot)
        return self._finish(frame) if self._finish is not None else frame

    def frame(self) -> Frame | None:
        """The screenshot of the last look, made during the wait; None when there is none to
        trust (the step grabs): the last look did not confirm it, it is older than
        :data:`MAX_AGE_S`, the windows to paint out changed, or the encode failed."""
        with self._lock:
            confirmed, self._confirmed, self._encoding = self._confirmed, None, None
        if confirmed is None:
            return None
        shot, future = confirmed
        if self._clock() - shot.at > MAX_AGE_S or self._source.rects() != shot.rects:
            future.cancel()
            return None
        try:
            frame = future.result()
        except Exception:  # the grab that follows makes it again, or says what is wrong
            log.debug("the screenshot made during the settle wait failed", exc_info=True)
            return None
        # The pixels are the last look's: its time, and the read that took it.
        return replace(frame, captured_at=shot.at, capture_ms=shot.capture_ms)


def _same_pixels(a: Shot, b: Shot) -> bool:
    return (a.width, a.height, a.rects) == (b.width, b.height, b.rects) and a.raw == b.raw
