"""A stand-in screen: given pictures go through the real downscale, mask and encode code.

It implements :class:`control.capture.Capturer`, so the agent loop, the calibrator and the
settle detector run on it as on :class:`~control.capture.MssCapturer`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from control.capture import (
    SMALL_FACTOR,
    EncodeOptions,
    ExcludeRects,
    Frame,
    GrayFrame,
    _bgrx_image,
    _excluded,
    encode_pixels,
    finished,
    mask_bgrx,
    small_gray,
)
from control.settle_frames import SettleFrames, Shot
from model.coords import FrameGeometry, Rect

FakeImage = Image.Image | NDArray[np.uint8]


def _to_bgrx(image: FakeImage) -> tuple[bytes, int, int]:
    if isinstance(image, Image.Image):
        rgb = np.asarray(image.convert("RGB"))
    else:
        rgb = np.asarray(image, dtype=np.uint8)
        if rgb.ndim == 2:
            rgb = np.stack([rgb] * 3, axis=-1)
        rgb = rgb[..., :3]
    h, w = rgb.shape[:2]
    bgrx = np.zeros((h, w, 4), np.uint8)
    bgrx[..., 0] = rgb[..., 2]
    bgrx[..., 1] = rgb[..., 1]
    bgrx[..., 2] = rgb[..., 0]
    return bgrx.tobytes(), w, h


class FakeCapturer:
    """A :class:`Capturer` showing given pictures through the real downscale/encode code.

    ``source`` is a sequence of images (PIL images or RGB/gray uint8 arrays): each call to
    ``grab`` or ``grab_small`` shows the next one and the last one stays on screen; or a
    callable returning the current image (for tests that change the "screen" themselves).
    ``monitor`` defaults to the first image's size at the origin. ``exclude`` masks as in
    :class:`MssCapturer` (rectangles in the coordinates of ``monitor``).
    """

    def __init__(
        self,
        source: Sequence[FakeImage] | Callable[[], FakeImage],
        *,
        monitor: Rect | None = None,
        scale: float = 1.0,
        options: EncodeOptions | None = None,
        small_factor: int = SMALL_FACTOR,
        clock: Callable[[], float] = time.monotonic,
        exclude: ExcludeRects | None = None,
    ) -> None:
        if not callable(source) and not source:
            raise ValueError("FakeCapturer needs at least one image")
        self._source = source
        self._index = 0
        self.options = options or EncodeOptions()
        self.small_factor = small_factor
        self.scale = scale
        self.clock = clock
        self.exclude = exclude
        self.grabs = 0
        self.looks = 0  # screens read: grabs and settle looks
        first = self._peek()
        _, w, h = _to_bgrx(first)
        self._monitor = monitor or Rect(0, 0, w, h)
        self.closed = False

    def _peek(self) -> FakeImage:
        if callable(self._source):
            return self._source()
        return self._source[min(self._index, len(self._source) - 1)]

    def _next(self) -> FakeImage:
        image = self._peek()
        if not callable(self._source):
            self._index += 1
        return image

    def monitor(self) -> Rect:
        return self._monitor

    def rects(self) -> tuple[Rect, ...]:
        return tuple(_excluded(self.exclude))

    def shot(self, rects: tuple[Rect, ...] | None = None) -> Shot:
        self.looks += 1
        raw, w, h = _to_bgrx(self._next())
        at = self.clock()
        if rects is None:
            rects = self.rects()
        return Shot(mask_bgrx(raw, w, h, self._monitor, rects), w, h, at, 0.0, rects)

    def encode(self, shot: Shot) -> Frame:
        started = time.perf_counter()
        data, pixels = encode_pixels(shot.raw, shot.width, shot.height, self.options)
        encode_ms = (time.perf_counter() - started) * 1000
        geometry = FrameGeometry(pixels.shape[1], pixels.shape[0], self._monitor, self.scale)
        return Frame(data, self.options.mime, geometry, shot.at, 0.0, encode_ms, pixels)

    def small(self, shot: Shot) -> GrayFrame:
        return small_gray(_bgrx_image(shot.raw, shot.width, shot.height), self.small_factor)

    def grab(self) -> Frame:
        self.grabs += 1
        return self.encode(self.shot())

    def grab_small(self) -> GrayFrame:
        return self.small(self.shot())

    def small_grabber(self) -> SettleFrames:
        return SettleFrames(self, clock=self.clock, finish=finished)

    def close(self) -> None:
        self.closed = True
