"""Screenshots with the target marked: drawing the marker, cropping around a target, and
loading screenshots off the GUI thread.

One marker everywhere (task window, confirmation panel, screen overlay, action log) so the
person learns one sign: a crosshair through the exact point inside a circle, drawn in a vivid
pink over a white halo so it stays visible on dark and light screens alike. A drag is two
markers joined by an arrow from where the button goes down to where it comes up.

Points arrive as logical screen points (:class:`model.coords.Point`); the screenshot is the
image the model was sent, so a point is placed with ``from_screen(..., Convention.PIXELS,
geometry)`` and then scaled to the file's actual size (it is the sent image, but scaling per
axis costs nothing and survives a thumbnail being passed instead).

Decoding a ~0.5 MB JPEG takes tens of milliseconds: :class:`ImageLoader` runs such work on a
:class:`QThreadPool` and hands the finished :class:`QImage` back through a queued signal.
QImage (unlike QPixmap) may be created and painted on any thread.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Sequence

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QIODevice,
    QLineF,
    QObject,
    QPointF,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QPen, QPolygonF

from model.coords import Convention, FrameGeometry, Point, Rect, from_screen
from ui.workers import Background

log = logging.getLogger(__name__)

MARKER_RGB = (255, 0, 170)
MARKER_COLOR = QColor(*MARKER_RGB)
HALO_COLOR = QColor(255, 255, 255)
MARKER_RADIUS = 14.0
CROP_SIZE = QSize(400, 250)


# -- drawing ---------------------------------------------------------------------------------


def _pens(width: float) -> tuple[QPen, QPen]:
    halo = QPen(HALO_COLOR, width + 3)
    halo.setCapStyle(Qt.PenCapStyle.RoundCap)
    ink = QPen(MARKER_COLOR, width)
    ink.setCapStyle(Qt.PenCapStyle.FlatCap)
    return halo, ink


def draw_marker(painter: QPainter, center: QPointF, radius: float = MARKER_RADIUS) -> None:
    """A circle with a crosshair whose lines cross exactly at ``center``.

    The crosshair runs through the centre (no gap) so the very pixel that will be clicked
    carries the marker colour; the arms reach past the circle so the point is found at a
    glance even on a busy screenshot.
    """
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    arm = radius * 1.7
    x, y = center.x(), center.y()
    lines = [QLineF(x - arm, y, x + arm, y), QLineF(x, y - arm, x, y + arm)]
    halo, ink = _pens(2.0)
    for pen in (halo, ink):
        painter.setPen(pen)
        painter.drawEllipse(center, radius, radius)
        for line in lines:
            painter.drawLine(line)
    painter.restore()


def draw_arrow(painter: QPainter, start: QPointF, end: QPointF) -> None:
    """An arrow from ``start`` to ``end`` (a drag), its head stopping at the end marker."""
    line = QLineF(start, end)
    if line.length() < 1:
        return
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    angle = math.atan2(end.y() - start.y(), end.x() - start.x())
    head = 14.0
    left = QPointF(
        end.x() - head * math.cos(angle - math.pi / 7),
        end.y() - head * math.sin(angle - math.pi / 7),
    )
    right = QPointF(
        end.x() - head * math.cos(angle + math.pi / 7),
        end.y() - head * math.sin(angle + math.pi / 7),
    )
    halo, ink = _pens(3.0)
    for pen in (halo, ink):
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawLine(line)
        painter.setBrush(pen.color())
        painter.drawPolygon(QPolygonF([end, left, right]))
    painter.restore()


def draw_points(
    painter: QPainter, points: Sequence[QPointF], radius: float = MARKER_RADIUS
) -> None:
    """A marker per point; with two points (a drag) an arrow from the first to the second."""
    if len(points) >= 2:
        draw_arrow(painter, points[0], points[1])
    for point in points:
        draw_marker(painter, point, radius)


def mark_image(image: QImage, points: Sequence[QPointF], radius: float = MARKER_RADIUS) -> QImage:
    """A copy of ``image`` with the points marked (the original is left as it is)."""
    marked = image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    if points:
        painter = QPainter(marked)
        try:
            draw_points(painter, points, radius)
        finally:
            painter.end()
    return marked


# -- coordinates -----------------------------------------------------------------------------


def image_points(
    points: Sequence[Point], geometry: FrameGeometry, image_size: QSize | None = None
) -> list[QPointF]:
    """Logical screen points as pixel positions in the screenshot.

    ``image_size`` is the size of the picture the points go on (default: the sent size);
    positions are the pixel centres (``+ 0.5``), where a marker drawn with antialiasing is
    centred on the pixel itself.
    """
    sx = sy = 1.0
    if image_size is not None and geometry.sent_width and geometry.sent_height:
        sx = image_size.width() / geometry.sent_width
        sy = image_size.height() / geometry.sent_height
    out = []
    for point in points:
        ix, iy = from_screen(point.x, point.y, Convention.PIXELS, geometry)
        out.append(QPointF((ix + 0.5) * sx, (iy + 0.5) * sy))
    return out


def crop_rect(
    image_size: QSize, points: Sequence[QPointF], size: QSize = CROP_SIZE, margin: int = 60
) -> QRect:
    """The part of an image to show around ``points``: at least ``size`` (when the image is
    that big), covering every point with ``margin`` to spare, centred on them and shifted
    to stay inside the image."""
    width, height = image_size.width(), image_size.height()
    if not points:
        return QRect(0, 0, width, height)
    xs = [p.x() for p in points]
    ys = [p.y() for p in points]
    want_w = max(size.width(), math.ceil(max(xs) - min(xs)) + 2 * margin)
    want_h = max(size.height(), math.ceil(max(ys) - min(ys)) + 2 * margin)
    # Keep the crop's aspect ratio (a long drag gets a wide, not a thin, crop).
    aspect = size.width() / size.height()
    if want_w / want_h > aspect:
        want_h = math.ceil(want_w / aspect)
    else:
        want_w = math.ceil(want_h * aspect)
    w, h = min(want_w, width), min(want_h, height)
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    left = min(max(0, round(cx - w / 2)), width - w)
    top = min(max(0, round(cy - h / 2)), height - h)
    return QRect(left, top, w, h)


def fit_size(size: QSize, bounds: QSize, *, upscale: bool = False) -> QSize:
    """``size`` scaled to fit ``bounds`` with its aspect ratio (never up unless ``upscale``)."""
    if size.isEmpty():
        return QSize(size)
    ratio = min(bounds.width() / size.width(), bounds.height() / size.height())
    if not upscale:
        ratio = min(ratio, 1.0)
    return QSize(max(1, round(size.width() * ratio)), max(1, round(size.height() * ratio)))


# -- reading (blocking: call on a worker thread) ---------------------------------------------


#: A screenshot to read: a file's path, or the encoded bytes when no file was kept.
ImageSource = str | bytes


class _Reader:
    """A QImageReader over a file or over bytes in memory (the buffer lives as long)."""

    def __init__(self, source: ImageSource) -> None:
        self._buffer: QBuffer | None = None
        if isinstance(source, str):
            self.reader = QImageReader(source)
            self.name = source
        else:
            self._buffer = QBuffer()
            self._buffer.setData(QByteArray(source))
            self._buffer.open(QIODevice.OpenModeFlag.ReadOnly)
            self.reader = QImageReader(self._buffer)
            self.name = "(in memory)"  # never the bytes themselves: they would flood the log


def read_scaled(source: ImageSource, bounds: QSize) -> QImage:
    """The image at ``source`` (a path or the bytes) decoded straight to a size that fits
    ``bounds`` (libjpeg scales while decoding: far cheaper than decoding in full and scaling
    after). A null QImage when it cannot be read."""
    held = _Reader(source)
    reader = held.reader
    size = reader.size()
    if size.isValid():
        reader.setScaledSize(fit_size(size, bounds))
    image = reader.read()
    if image.isNull():
        log.warning("cannot read screenshot %s: %s", held.name, reader.errorString())
    return image


def render_marked_crop(
    path: ImageSource,
    points: Sequence[Point],
    geometry: FrameGeometry,
    bounds: QSize,
    crop: QSize = CROP_SIZE,
    area: Rect | None = None,
) -> QImage:
    """The area around ``points`` cut from the screenshot at ``path`` (or in those bytes),
    scaled to fit ``bounds`` (up as well as down: a small crop is enlarged to be legible), with
    the points marked. Without points: ``area`` (screen pixels, e.g. the terminal a key goes
    to) when given, else the whole screenshot, fitted to ``bounds``. Null on failure."""
    held = _Reader(path)
    reader = held.reader
    size = reader.size()
    if not size.isValid():
        log.warning("cannot read screenshot %s: %s", held.name, reader.errorString())
        return QImage()
    spots = image_points(points, geometry, size)
    whole = QRect(0, 0, size.width(), size.height())
    clip = crop_rect(size, spots, crop) if spots else whole
    if not spots and area is not None:
        a, b = image_points((Point(area.left, area.top), Point(area.right, area.bottom)),
                            geometry, size)
        x0, y0, x1, y1 = (int(v) for v in (a.x(), a.y(), b.x(), b.y()))
        window = QRect(x0, y0, x1 - x0, y1 - y0).intersected(whole)
        if window.width() > 1 and window.height() > 1:
            clip = window
    out_size = fit_size(clip.size(), bounds, upscale=bool(spots))
    reader.setClipRect(clip)
    reader.setScaledSize(out_size)
    image = reader.read()
    if image.isNull():
        log.warning("cannot read screenshot %s: %s", held.name, reader.errorString())
        return image
    sx = out_size.width() / clip.width()
    sy = out_size.height() / clip.height()
    placed = [QPointF((p.x() - clip.left()) * sx, (p.y() - clip.top()) * sy) for p in spots]
    return mark_image(image, placed)


# -- off the GUI thread ----------------------------------------------------------------------


class ImageLoader(QObject):
    """Runs image work off the GUI thread; ``loaded(ticket, image)`` arrives on the GUI thread.

    ``submit`` returns the ticket of the job; a widget remembers the last one it asked for and
    ignores older results, so a slow decode never overwrites a newer screenshot. Built on
    :class:`ui.workers.Background`, whose relay makes a widget deleted mid-decode safe.
    """

    loaded = Signal(int, QImage)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = Background(self)
        self._tickets = itertools.count(1)

    def submit(self, work: Callable[[], QImage]) -> int:
        """Run ``work`` off the GUI thread; returns its ticket."""
        ticket = next(self._tickets)

        def failed(exc: BaseException) -> None:
            # The image just stays out; the log has why.
            log.error("loading a screenshot failed", exc_info=exc)
            self.loaded.emit(ticket, QImage())

        self._tasks.run(work, lambda image: self.loaded.emit(ticket, image), failed)
        return ticket
