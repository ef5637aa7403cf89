"""Screen capture: one frame for the model (downscaled, encoded) and tiny frames for settling.

What a frame must be (see docs/holotron.md, Images): at most about 2048 px on the long
side (the model's processor gains nothing above it), never shrunk to 1280x720 or below (the
tile grid drops to 2x1 and text stops being legible), aspect ratio kept, JPEG q90 with 4:4:4
chroma (as legible as PNG, 10-20x cheaper), and the exact sent size remembered in the frame's
:class:`~model.coords.FrameGeometry` so clicks map back per axis.

The pipeline was chosen by measurement (bench/capture.py, numbers in bench/README.md):

* mss grabs BGRX pixels (XShm on X11: ~2 ms at 1080p, ~9 ms at 4K);
* simplejpeg encodes those bytes in place (no copy, no channel swap): faster than Pillow,
  which first has to convert BGRX to RGB (7 ms vs 9 ms at 1080p);
* the JPEG is encoded in horizontal bands on a few threads (simplejpeg releases the GIL) and
  spliced into one baseline JPEG with restart markers (control/jpeg_split.py): the same
  pixels, 4.4 ms instead of 7 at 1080p on 2 cores;
* downscaling uses Pillow: an integer box reduction when it lands close enough to
  ``max_side`` (a 4K screen becomes 1920x1080, sharp, in a fraction of the time a fractional
  resize to 2048x1152 takes), else a bicubic resize (2560x1440 to 2048x1152; much closer to
  Lanczos than bilinear, at 2/3 of Lanczos's cost). Both run in horizontal bands on a few
  threads (Pillow releases the GIL), with the same pixels as in one piece.

mss, like pyautogui, needs a display: it is imported lazily.
"""

from __future__ import annotations

import io
import logging
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import simplejpeg
from numpy.typing import NDArray
from PIL import Image

# Frame and GrayFrame live apart so control/settle_frames.py can name them without importing
# this module (which imports it): they are what capture makes, and are named from here too.
from control.frame import Frame as Frame
from control.frame import GrayFrame as GrayFrame
from control.jpeg_split import encode_jpeg_bands
from control.settle_frames import SettleFrames, Shot
from model.coords import FrameGeometry, Rect

if TYPE_CHECKING:
    from mss.base import MSS

log = logging.getLogger(__name__)

ImageFormat = Literal["jpeg", "png"]
# Below this long side a 16:9 frame falls to the model's 2x1 tile grid (1280x720 and less).
MIN_LONG_SIDE = 1366
DEFAULT_MAX_SIDE = 2048
SMALL_FACTOR = 8

_RESAMPLE = {
    "bicubic": Image.Resampling.BICUBIC,
    "bilinear": Image.Resampling.BILINEAR,
    "hamming": Image.Resampling.HAMMING,
    "lanczos": Image.Resampling.LANCZOS,
    "box": Image.Resampling.BOX,
}
_REGION_RE = re.compile(r"^\s*(\d+)x(\d+)([+-]\d+)([+-]\d+)\s*$")


# -- what to capture -------------------------------------------------------------------------


@dataclass(frozen=True)
class CaptureTarget:
    """Which part of the screen the agent sees (and is confined to).

    ``kind`` is ``"monitor"`` (``monitor`` numbered as mss does: 1 = first monitor, 0 = all
    monitors together), ``"primary"`` (the primary monitor, else the first), ``"mouse"`` (the
    monitor under the pointer when capture starts) or ``"region"`` (``region``, physical
    pixels of the virtual screen, e.g. to keep the agent to one window's area).
    """

    kind: Literal["monitor", "primary", "mouse", "region"] = "monitor"
    monitor: int = 1
    region: Rect | None = None

    @classmethod
    def screen(cls, index: int = 1) -> CaptureTarget:
        if index < 0:
            raise ValueError(f"monitor index must be >= 0, got {index}")
        return cls("monitor", monitor=index)

    @classmethod
    def under_mouse(cls) -> CaptureTarget:
        return cls("mouse")

    @classmethod
    def primary(cls) -> CaptureTarget:
        return cls("primary")

    @classmethod
    def area(cls, rect: Rect) -> CaptureTarget:
        if rect.width <= 0 or rect.height <= 0:
            raise ValueError(f"empty region {rect}")
        return cls("region", region=rect)

    @classmethod
    def parse(cls, text: str) -> CaptureTarget:
        """Parse ``"1"``, ``"0"``/``"all"``, ``"monitor:2"``, ``"primary"``, ``"mouse"`` or a
        region ``"WxH+X+Y"`` (X and Y may be negative: ``"1920x1080-1920+0"``)."""
        value = text.strip().lower()
        if value in {"mouse", "pointer", "cursor"}:
            return cls.under_mouse()
        if value == "primary":
            return cls.primary()
        if value == "all":
            return cls.screen(0)
        match = re.fullmatch(r"(?:monitor:?|screen:?)?\s*(\d+)", value)
        if match:
            return cls.screen(int(match.group(1)))
        match = _REGION_RE.match(value)
        if match:
            w, h, x, y = (int(g) for g in match.groups())
            return cls.area(Rect(x, y, w, h))
        raise ValueError(
            f"bad capture target {text!r}: use a monitor number (1 = first, 0 = all), "
            "'primary', 'mouse' or a region WxH+X+Y"
        )

    def __str__(self) -> str:
        if self.kind == "region":
            assert self.region is not None
            return str(self.region)
        if self.kind == "monitor":
            return str(self.monitor)
        return self.kind


# -- capturers --------------------------------------------------------------------------------


class Capturer(Protocol):
    """What the agent loop needs from a screen."""

    def grab(self) -> Frame:
        """Capture, downscale and encode one frame of the target."""
        ...

    def grab_small(self) -> GrayFrame:
        """A tiny grayscale frame (1/8 size) of the target: cheap, for settle detection."""
        ...

    def small_grabber(self) -> SettleFrames:
        """The frames of one settle wait (control/settle_frames.py): ``grab_small``, and the
        next screenshot made during the wait."""
        ...

    def monitor(self) -> Rect:
        """The captured rectangle, physical pixels of the virtual screen."""
        ...

    def close(self) -> None:
        """Release the capture resources."""
        ...


# -- pixel helpers (shared with the fake capturer of the tests) --------------------------------


def target_size(width: int, height: int, max_side: int, *,
                min_reduce_ratio: float = 0.9) -> tuple[tuple[int, int], int]:
    """The size a ``width`` x ``height`` capture is sent at, and the integer reduction factor
    used to get there (1 when a fractional resize is needed or nothing changes).

    Never upscales, keeps the aspect ratio, never goes under :data:`MIN_LONG_SIDE` on the long
    side. An integer factor ``k`` is used when ``long / k`` is at least ``min_reduce_ratio``
    of ``max_side`` (fast and sharp); otherwise the long side becomes ``max_side`` exactly.
    """
    max_side = max(max_side, MIN_LONG_SIDE)
    long_side = max(width, height)
    if long_side <= max_side:
        return (width, height), 1
    k = math.ceil(long_side / max_side)
    reduced = math.ceil(long_side / k)
    if reduced >= min_reduce_ratio * max_side and reduced >= MIN_LONG_SIDE:
        return (math.ceil(width / k), math.ceil(height / k)), k
    ratio = max_side / long_side
    return (max(1, round(width * ratio)), max(1, round(height * ratio))), 1


def _bgrx_image(raw: bytes | bytearray, width: int, height: int) -> Image.Image:
    # The bytes are B,G,R,X; Pillow calls them RGBX without copying. Resampling does not care
    # about channel order, and the encoders are told the real order.
    return Image.frombuffer("RGBX", (width, height), raw, "raw", "RGBX", 0, 1)


def small_gray(image: Image.Image, factor: int = SMALL_FACTOR) -> GrayFrame:
    """One luma-like channel, box-reduced by ``factor`` (channel order does not matter for
    detecting change).

    Luma first, then the reduction: the same cells up to rounding (both are weighted means),
    in half the time (one channel to reduce instead of four: 1.8 ms instead of 4.0 at 1080p,
    6 instead of 10.4 at 4K), and the settle loop grabs one every 25 ms.
    """
    gray = image.convert("L")
    return np.asarray(gray.reduce(factor) if factor > 1 else gray, dtype=np.uint8)


ExcludeRects = Callable[[], Sequence[Rect]]
"""Rectangles to paint over in every frame, physical pixels of the virtual screen.

Called on the grabbing thread for every frame: it must be cheap and thread-safe (the UI keeps
its windows' rectangles in a locked list rather than asking Qt from the capture worker).
"""

# A neutral mid grey: what is behind a masked window is unknown, and grey reads as "nothing
# here" to the model without looking like any control.
MASK_BGRX = (128, 128, 128, 255)


def mask_bgrx(raw: bytes | bytearray, width: int, height: int, area: Rect,
              rects: Sequence[Rect]) -> bytes | bytearray:
    """Paint ``rects`` grey in BGRX pixels showing ``area`` (physical px of the virtual screen).

    Only the parts of ``rects`` inside ``area`` are painted; ``area`` may have a negative
    origin (a monitor left of the primary one) and need not be the pixels' size (pixels per
    physical px are taken per axis). A bytearray (what mss returns) is painted in place;
    bytes are copied first. Returns the painted buffer (``raw`` itself when nothing hit).
    """
    boxes: list[tuple[int, int, int, int]] = []
    sx = width / area.width if area.width else 1.0
    sy = height / area.height if area.height else 1.0
    for rect in rects:
        left, top = max(rect.left, area.left), max(rect.top, area.top)
        right, bottom = min(rect.right, area.right), min(rect.bottom, area.bottom)
        if right <= left or bottom <= top:
            continue
        # Outward rounding: a window edge half over a pixel hides that whole pixel.
        x0 = max(0, math.floor((left - area.left) * sx))
        y0 = max(0, math.floor((top - area.top) * sy))
        x1 = min(width, math.ceil((right - area.left) * sx))
        y1 = min(height, math.ceil((bottom - area.top) * sy))
        if x1 > x0 and y1 > y0:
            boxes.append((x0, y0, x1, y1))
    if not boxes:
        return raw
    buffer = raw if isinstance(raw, bytearray) else bytearray(raw)
    pixels = np.frombuffer(buffer, np.uint8).reshape(height, width, 4)
    for x0, y0, x1, y1 in boxes:
        pixels[y0:y1, x0:x1] = MASK_BGRX
    return buffer


#: Paints a whole frame out (mask_bgrx clips it to the frame).
EVERYTHING = Rect(-(1 << 24), -(1 << 24), 1 << 25, 1 << 25)


def _excluded(exclude: ExcludeRects | None) -> Sequence[Rect]:
    if exclude is None:
        return ()
    try:
        return exclude()
    except Exception:
        # Not knowing where the windows to hide are, a frame shows nothing rather than them
        # (the run goes on: the next look asks again).
        log.warning("the capture mask failed; this frame is painted out entirely",
                    exc_info=True)
        return (EVERYTHING,)


@dataclass(frozen=True)
class EncodeOptions:
    """How frames are downscaled and encoded."""

    max_side: int = DEFAULT_MAX_SIDE
    image_format: ImageFormat = "jpeg"
    jpeg_quality: int = 90
    chroma: Literal["444", "422", "420"] = "444"
    png_compress_level: int = 1  # PNG is the fidelity option; level 1 keeps it under ~0.1 s
    resample: str = "bicubic"
    min_reduce_ratio: float = 0.9
    bands: int | None = None  # threads scaling in parallel; None = one per core (max 4)
    # JPEG encoded as this many bands on threads and spliced into one file with restart
    # markers (control/jpeg_split.py): the same pixels, ~40% less time on 2 cores.
    # None = one per core (max 4); 1 = one piece.
    jpeg_bands: int | None = None

    def __post_init__(self) -> None:
        if self.image_format not in ("jpeg", "png"):
            raise ValueError(f"image_format must be 'jpeg' or 'png', not {self.image_format!r}")
        if not 1 <= self.jpeg_quality <= 100:
            raise ValueError("jpeg_quality must be 1-100")
        if self.jpeg_bands is not None and self.jpeg_bands < 1:
            raise ValueError("jpeg_bands must be at least 1")
        if self.resample not in _RESAMPLE:
            raise ValueError(f"resample must be one of {sorted(_RESAMPLE)}")
        if self.max_side < MIN_LONG_SIDE:
            log.warning("max_side %d is below %d: frames would fall to the model's small tile "
                        "grid; using %d", self.max_side, MIN_LONG_SIDE, MIN_LONG_SIDE)

    @property
    def mime(self) -> str:
        return "image/jpeg" if self.image_format == "jpeg" else "image/png"


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=3, thread_name_prefix="holodesk-scale")
        return _POOL


def default_bands() -> int:
    """Horizontal bands scaled in parallel: one per core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


def _split(total: int, parts: int) -> list[int]:
    return [total * i // parts for i in range(parts + 1)]


def _in_bands(count: int, work: Callable[[int], NDArray[np.uint8]]) -> list[NDArray[np.uint8]]:
    if count == 1:
        return [work(0)]
    futures = [_pool().submit(work, i) for i in range(1, count)]
    first = work(0)
    return [first, *(f.result() for f in futures)]


def scale_bgrx(raw: bytes | bytearray, width: int, height: int, size: tuple[int, int], k: int,
               resample: str, bands: int) -> NDArray[np.uint8]:
    """BGRX pixels scaled to ``size`` (box reduction by ``k`` if > 1, else ``resample``), as an
    (h, w, 4) array.

    The work is cut into horizontal bands run on several threads (Pillow releases the GIL
    while resampling), with the same pixels as scaling in one piece:

    * a reduction band starts on a multiple of ``k`` source rows;
    * a resize runs as two explicit passes, horizontal on bands of source rows (each a
      zero-copy view of the buffer), then vertical on bands of output rows. One pass per call
      keeps Pillow from choosing the pass order per band (Pillow 13 goes vertical-first when
      the height shrinks "much more" than the width, judged on the whole image, not the box).
    """
    tw, th = size
    n = max(1, min(bands, th // 64))
    flat = np.frombuffer(raw, np.uint8)
    stride = width * 4
    if k > 1:
        image = _bgrx_image(raw, width, height)
        rows = _split(th, n)
        return np.concatenate(_in_bands(n, lambda i: np.asarray(
            image.reduce(k, (0, rows[i] * k, width, min(height, rows[i + 1] * k))))))
    method = _RESAMPLE[resample]
    src = _split(height, n)

    def horizontal(i: int) -> NDArray[np.uint8]:
        band = Image.frombuffer("RGBX", (width, src[i + 1] - src[i]),
                                flat[src[i] * stride:src[i + 1] * stride], "raw", "RGBX", 0, 1)
        return np.asarray(band.resize((tw, src[i + 1] - src[i]), method))

    wide = np.concatenate(_in_bands(n, horizontal))
    narrow = Image.frombuffer("RGBX", (tw, height), wide, "raw", "RGBX", 0, 1)
    out = _split(th, n)
    return np.concatenate(_in_bands(n, lambda i: np.asarray(narrow.resize(
        (tw, out[i + 1] - out[i]), method,
        (0, out[i] * height / th, tw, out[i + 1] * height / th)))))


def encode_bgrx(raw: bytes | bytearray, width: int, height: int,
                options: EncodeOptions) -> tuple[bytes, int, int]:
    """Downscale and encode BGRX pixels; returns (encoded bytes, sent width, sent height)."""
    data, pixels = encode_pixels(raw, width, height, options)
    return data, pixels.shape[1], pixels.shape[0]


def encode_pixels(raw: bytes | bytearray, width: int, height: int,
                  options: EncodeOptions) -> tuple[bytes, NDArray[np.uint8]]:
    """Downscale and encode BGRX pixels; returns the encoded bytes and the sent pixels (BGRX,
    (h, w, 4); a view of ``raw`` when nothing was scaled)."""
    (tw, th), k = target_size(width, height, options.max_side,
                              min_reduce_ratio=options.min_reduce_ratio)
    if (tw, th) == (width, height):
        pixels: NDArray[np.uint8] = np.frombuffer(raw, np.uint8).reshape(height, width, 4)
    else:
        pixels = scale_bgrx(raw, width, height, (tw, th), k, options.resample,
                            options.bands or default_bands())
        th, tw = pixels.shape[:2]
    if options.image_format == "jpeg":
        bands = options.jpeg_bands or default_bands()
        data = encode_jpeg_bands(pixels, quality=options.jpeg_quality, colorspace="BGRX",
                                 chroma=options.chroma, bands=bands,
                                 executor=_pool() if bands > 1 else None)
        return data, pixels
    rgb = Image.frombuffer("RGB", (tw, th), np.ascontiguousarray(pixels), "raw", "BGRX", 0, 1)
    out = io.BytesIO()
    rgb.save(out, "PNG", compress_level=options.png_compress_level)
    return out.getvalue(), pixels


def frame_small(frame: Frame, factor: int = SMALL_FACTOR) -> GrayFrame | None:
    """The tiny grayscale frame of the pixels ``frame`` was encoded from (None when the
    capturer did not keep them): the screen the model is shown, for telling whether it changed
    between steps, without a second grab (12 ms at 4K)."""
    if frame.pixels is None:
        return None
    h, w = frame.pixels.shape[:2]
    image = Image.frombuffer("RGBX", (w, h), np.ascontiguousarray(frame.pixels), "raw",
                             "RGBX", 0, 1)
    return small_gray(image, factor)


def finished(frame: Frame) -> Frame:
    """``frame`` with its thumbnail and its tiny frame made: what the step does with a frame
    next, done ahead where the frame is made ahead (control/settle_frames.py)."""
    return replace(frame, thumb=thumbnail(frame), small=frame_small(frame))


def thumbnail(frame: Frame, max_side: int = 320, quality: int = 75) -> bytes:
    """A small JPEG of the frame for the action log (long side ``max_side``)."""
    if frame.pixels is not None:
        h, w = frame.pixels.shape[:2]
        bgrx = Image.frombuffer("RGBX", (w, h), np.ascontiguousarray(frame.pixels), "raw",
                                "RGBX", 0, 1)
        # An integer box reduction (an area average) straight to the thumbnail when the size
        # divides (1920x1080 becomes 320x180 in ~2 ms, 2 ms less than via a bicubic pass);
        # otherwise to at least twice it, and a bicubic pass for the rest.
        long_side = max(w, h)
        k = max(1, long_side // max_side if long_side % max_side == 0
                else long_side // (2 * max_side))
        small = bgrx.reduce(k) if k > 1 else bgrx
        small.thumbnail((max_side, max_side), Image.Resampling.BICUBIC)
        return bytes(simplejpeg.encode_jpeg(np.asarray(small), quality=quality,
                                            colorspace="BGRX", colorsubsampling="420"))
    if frame.mime == "image/jpeg":
        # libjpeg scales by 1/2..1/8 while decoding: far cheaper than decoding in full.
        w, h = frame.width, frame.height
        ratio = max_side / max(w, h)
        rgb = simplejpeg.decode_jpeg(frame.data, colorspace="RGB", min_width=math.ceil(w * ratio),
                                     min_height=math.ceil(h * ratio))
        image = Image.fromarray(rgb)
    else:
        image = Image.open(io.BytesIO(frame.data)).convert("RGB")
    image.thumbnail((max_side, max_side), Image.Resampling.BICUBIC)
    return bytes(simplejpeg.encode_jpeg(np.asarray(image), quality=quality, colorspace="RGB",
                                        colorsubsampling="420"))


# -- the real capturer -----------------------------------------------------------------------


def _default_logical_size() -> tuple[int, int] | None:
    # On X11 mss and pyautogui ask the same X server for the same pixels: the scale is 1 and
    # pyautogui (which binds its display at import) need not be loaded by capture at all.
    if sys.platform.startswith("linux"):
        return None
    from control.pyautogui_loader import load_pyautogui

    pyautogui = load_pyautogui()

    size = pyautogui.size()
    return int(size.width), int(size.height)


def _default_pointer() -> tuple[int, int]:
    from control.pyautogui_loader import load_pyautogui

    pyautogui = load_pyautogui()

    pos = pyautogui.position()
    return int(pos.x), int(pos.y)


class MssCapturer:
    """Captures a :class:`CaptureTarget` with mss, the pipeline described in the module doc.

    One mss instance serves all grabs of a thread. mss instances are thread-bound on some
    platforms (GDI device contexts on Windows; the legacy Xlib backend on Linux), so the
    instance is created lazily in the thread that grabs, and a second grabbing thread gets its
    own; ``close()`` closes them all.

    ``display`` names the X11 display (default: ``$DISPLAY``): tests and benches pass their
    Xvfb's so the process never touches another display. ``logical_size`` returns pyautogui's
    screen size (default: ``pyautogui.size()``, except on Linux where the scale is 1) and
    ``pointer`` the pointer in logical points (default: ``pyautogui.position()``); both are
    injectable for tests. ``exclude`` returns rectangles (physical pixels of the virtual
    screen) painted grey in every frame before it is scaled and encoded: holodesk's own
    windows, where the platform cannot keep them out of screenshots (X11).
    """

    def __init__(
        self,
        target: CaptureTarget | None = None,
        max_side: int = DEFAULT_MAX_SIDE,
        image_format: ImageFormat = "jpeg",
        jpeg_quality: int = 90,
        *,
        options: EncodeOptions | None = None,
        display: str | None = None,
        logical_size: Callable[[], tuple[int, int] | None] | None = None,
        pointer: Callable[[], tuple[int, int]] | None = None,
        small_factor: int = SMALL_FACTOR,
        exclude: ExcludeRects | None = None,
    ) -> None:
        self.target = target or CaptureTarget.screen(1)
        self.exclude = exclude
        self.options = options or EncodeOptions(max_side=max_side, image_format=image_format,
                                                jpeg_quality=jpeg_quality)
        self.small_factor = small_factor
        self._display = display
        self._logical_size = logical_size or _default_logical_size
        self._pointer = pointer or _default_pointer
        self._local = threading.local()
        self._lock = threading.Lock()
        self._instances: list[MSS] = []
        self._region: dict[str, int] | None = None
        self._scale: float | None = None
        self._pixels_per_unit: float | None = None
        self._closed = False

    # mss instances, one per grabbing thread

    def _sct(self) -> MSS:
        sct: MSS | None = getattr(self._local, "sct", None)
        if sct is None:
            if self._closed:
                raise RuntimeError("capturer is closed")
            import mss

            kwargs: dict[str, Any] = {}
            if self._display is not None and sys.platform.startswith("linux"):
                kwargs["display"] = self._display
            sct = mss.MSS(**kwargs)
            self._local.sct = sct
            with self._lock:
                self._instances.append(sct)
        return sct

    def close(self) -> None:
        """Close every mss instance; the capturer cannot grab afterwards."""
        with self._lock:
            instances, self._instances = self._instances, []
            self._closed = True
        for sct in instances:
            try:
                sct.close()
            except Exception:  # closing is best effort: the display may already be gone
                log.debug("closing mss failed", exc_info=True)
        self._local = threading.local()

    def __enter__(self) -> MssCapturer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # geometry

    def monitors(self) -> list[Rect]:
        """All monitors as mss lists them (index 0 = the whole virtual screen)."""
        return [Rect(m["left"], m["top"], m["width"], m["height"]) for m in self._sct().monitors]

    def _resolve_region(self) -> dict[str, int]:
        if self._region is not None:
            return self._region
        sct = self._sct()
        monitors = sct.monitors
        kind = self.target.kind
        if kind == "monitor":
            index = self.target.monitor
            if index >= len(monitors):
                raise ValueError(
                    f"monitor {index} does not exist; there are {len(monitors) - 1} "
                    f"(1..{len(monitors) - 1}, 0 = all): "
                    + ", ".join(f"{i}: {_rect(m)}" for i, m in enumerate(monitors))
                )
            chosen = monitors[index]
        elif kind == "primary":
            chosen = sct.primary_monitor
        elif kind == "mouse":
            chosen = self._monitor_under_pointer(monitors)
        else:
            assert self.target.region is not None
            chosen = self._clip_region(self.target.region, monitors[0])
        self._region = {k: int(chosen[k]) for k in ("left", "top", "width", "height")}
        log.info("capturing %s: %s", self.target, _rect(self._region))
        return self._region

    def _monitor_under_pointer(self, monitors: Sequence[Any]) -> Any:
        x, y = self._pointer()
        units = self._units_per_logical(monitors)
        ux, uy = x * units, y * units
        for monitor in monitors[1:]:
            if _rect(monitor).contains(ux, uy):
                return monitor
        log.warning("pointer (%d, %d) is on no monitor; using monitor 1", x, y)
        return monitors[1]

    def _units_per_logical(self, monitors: Sequence[Any]) -> float:
        size = self._logical_size()
        if size is None:
            return 1.0
        primary = next((m for m in monitors[1:] if m.get("is_primary")), monitors[1])
        return float(primary["width"]) / size[0] if size[0] else 1.0

    @staticmethod
    def _clip_region(region: Rect, screen: Any) -> dict[str, int]:
        left = max(region.left, int(screen["left"]))
        top = max(region.top, int(screen["top"]))
        right = min(region.right, int(screen["left"]) + int(screen["width"]))
        bottom = min(region.bottom, int(screen["top"]) + int(screen["height"]))
        if right <= left or bottom <= top:
            raise ValueError(f"region {region} is outside the screen {_rect(screen)}")
        clipped = {"left": left, "top": top, "width": right - left, "height": bottom - top}
        if _rect(clipped) != region:
            log.warning("region %s clipped to the screen: %s", region, _rect(clipped))
        return clipped

    def monitor(self) -> Rect:
        """The captured rectangle in physical pixels of the virtual screen."""
        region = self._resolve_region()
        if self._pixels_per_unit is None:
            # A tiny grab tells how many pixels mss returns per unit of its coordinates.
            probe = {"left": region["left"], "top": region["top"],
                     "width": min(16, region["width"]), "height": min(16, region["height"])}
            shot = self._sct().grab(probe)
            self._learn_scale(shot.width, probe)
        ppu = self._pixels_per_unit or 1.0
        return Rect(round(region["left"] * ppu), round(region["top"] * ppu),
                    round(region["width"] * ppu), round(region["height"] * ppu))

    def _learn_scale(self, shot_width: int, region: dict[str, int]) -> float:
        if self._scale is None:
            # Physical pixels per mss unit (2 on a Retina Mac, where mss speaks in points),
            # times mss units per pyautogui point (1.25 on an unaware-scaled Windows display).
            self._pixels_per_unit = shot_width / region["width"]
            units = self._units_per_logical(self._sct().monitors)
            self._scale = self._pixels_per_unit * units
            log.info("capture scale: %.3f physical px per logical point", self._scale)
        return self._scale

    # grabbing

    def _grab_raw(self) -> tuple[Any, dict[str, int], float, float]:
        region = self._resolve_region()
        started = time.perf_counter()
        shot = self._sct().grab(region)
        at = time.monotonic()
        return shot, region, at, (time.perf_counter() - started) * 1000

    def shot(self, rects: tuple[Rect, ...] | None = None) -> Shot:
        """Read the screen with ``rects`` painted out (None: the windows to paint out, looked
        up right after the read, so one that was there when it was read is painted out)."""
        raw_shot, region, at, capture_ms = self._grab_raw()
        self._learn_scale(raw_shot.width, region)
        if rects is None:
            rects = self.rects()
        raw: bytes | bytearray = raw_shot.raw
        if rects:
            raw = mask_bgrx(raw, raw_shot.width, raw_shot.height, self.monitor(), rects)
        return Shot(raw, raw_shot.width, raw_shot.height, at, capture_ms, rects)

    def rects(self) -> tuple[Rect, ...]:
        return tuple(_excluded(self.exclude))

    def encode(self, shot: Shot) -> Frame:
        started = time.perf_counter()
        data, pixels = encode_pixels(shot.raw, shot.width, shot.height, self.options)
        encode_ms = (time.perf_counter() - started) * 1000
        geometry = FrameGeometry(pixels.shape[1], pixels.shape[0], self.monitor(),
                                 self._scale or 1.0)
        return Frame(data, self.options.mime, geometry, shot.at, shot.capture_ms, encode_ms,
                     pixels)

    def small(self, shot: Shot) -> GrayFrame:
        # Masked too: holodesk's own windows changing (the streaming thought) must not look
        # like the screen still settling.
        return small_gray(_bgrx_image(shot.raw, shot.width, shot.height), self.small_factor)

    def grab(self) -> Frame:
        return self.encode(self.shot())

    def grab_small(self) -> GrayFrame:
        return self.small(self.shot())

    def small_grabber(self) -> SettleFrames:
        return SettleFrames(self, finish=finished)


def _rect(monitor: Any) -> Rect:
    return Rect(int(monitor["left"]), int(monitor["top"]), int(monitor["width"]),
                int(monitor["height"]))
