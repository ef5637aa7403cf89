"""The on-screen target overlay, keeping holodesk's windows out of screenshots, and the mapping
between the agent's logical screen points and Qt's global coordinates.

Coordinates. The agent's points are pyautogui's logical points. Qt places windows in
device-independent pixels (DIP). Per platform:

* X11 and Windows (Qt is per-monitor DPI aware, and so is pyautogui's view then): logical
  points are native pixels. Qt 6 keeps each screen's top-left corner where it is natively and
  divides distances inside the screen by the screen's devicePixelRatio, so for the screen
  containing the point: ``qt = origin + (logical - origin) / dpr``. With dpr 1 (the usual
  X11 case) that is the identity.
* macOS: pyautogui and Qt both speak points: the identity.

The overlay is a frameless, always-on-top tool window that ignores input and never takes the
focus (the agent may be typing into the window below). Only the marker's own pixels are part
of the window (a shape mask from the marker's alpha): on an X11 desktop without a compositor a
"translucent" window is black, and the mask keeps the overlay from hiding the screen.

Capture exclusion: :func:`exclude_from_capture` asks the platform to leave a window out of
screenshots (Windows 10 2004+, macOS); on X11 there is no such facility, so it returns False
and the caller paints the window's rectangle over in the captured frame instead
(``MssCapturer(exclude=...)``), with :class:`WindowRects` supplying the rectangles.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import math
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, Qt
from PySide6.QtGui import (
    QBitmap,
    QGuiApplication,
    QImage,
    QPainter,
    QPaintEvent,
    QRegion,
    QWindow,
)
from PySide6.QtWidgets import QWidget

from model.coords import Point, Rect
from ui.marker import draw_points

log = logging.getLogger(__name__)

OVERLAY_RADIUS = 22.0
WDA_EXCLUDEFROMCAPTURE = 0x11
NS_WINDOW_SHARING_NONE = 0


# -- coordinates -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScreenMap:
    """One screen as Qt reports it: its geometry (DIP) and device pixel ratio."""

    geometry: QRect
    ratio: float

    @property
    def native(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) in native (logical, for the agent) pixels."""
        g = self.geometry
        return (g.x(), g.y(), g.x() + g.width() * self.ratio, g.y() + g.height() * self.ratio)


def current_screens() -> list[ScreenMap]:
    """The screens of the running QGuiApplication."""
    return [ScreenMap(s.geometry(), float(s.devicePixelRatio()))
            for s in QGuiApplication.screens()]


def _points_are_dip() -> bool:
    return sys.platform == "darwin"


def _screen_for(x: float, y: float, screens: Sequence[ScreenMap]) -> ScreenMap | None:
    for screen in screens:
        left, top, right, bottom = screen.native
        if left <= x < right and top <= y < bottom:
            return screen
    return screens[0] if screens else None


def logical_to_qt(x: float, y: float, screens: Sequence[ScreenMap] | None = None, *,
                  identity: bool | None = None) -> QPointF:
    """A logical screen point (the agent's) in Qt global coordinates (see the module doc)."""
    if identity if identity is not None else _points_are_dip():
        return QPointF(x, y)
    screen = _screen_for(x, y, current_screens() if screens is None else screens)
    if screen is None or screen.ratio == 1:
        return QPointF(x, y)
    ox, oy = screen.geometry.x(), screen.geometry.y()
    return QPointF(ox + (x - ox) / screen.ratio, oy + (y - oy) / screen.ratio)


def qt_rect_to_physical(rect: QRect, screens: Sequence[ScreenMap] | None = None, *,
                        identity: bool | None = None) -> Rect:
    """A Qt global rectangle (DIP) in native pixels of the virtual screen: what capture masks.

    On X11 and Windows native pixels are also the capture's physical pixels. On macOS the
    capture scale is applied by the caller (there the window is excluded by the system).
    """
    if identity if identity is not None else _points_are_dip():
        return Rect(rect.x(), rect.y(), rect.width(), rect.height())
    centre = rect.center()
    found = None
    for screen in current_screens() if screens is None else screens:
        if screen.geometry.contains(centre):
            found = screen
            break
    ratio = found.ratio if found is not None else 1.0
    ox, oy = (found.geometry.x(), found.geometry.y()) if found is not None else (0, 0)
    left = ox + (rect.x() - ox) * ratio
    top = oy + (rect.y() - oy) * ratio
    right = ox + (rect.x() + rect.width() - ox) * ratio
    bottom = oy + (rect.y() + rect.height() - oy) * ratio
    x0, y0 = math.floor(left), math.floor(top)
    return Rect(x0, y0, math.ceil(right) - x0, math.ceil(bottom) - y0)


def physical_rect_to_qt(rect: Rect, screens: Sequence[ScreenMap] | None = None, *,
                        identity: bool | None = None) -> Rect:
    """A rectangle in native pixels of the virtual screen (a window the run works in, as the
    target finder gives it) in Qt global coordinates: the inverse of :func:`qt_rect_to_physical`
    on the screen holding its middle."""
    if identity if identity is not None else _points_are_dip():
        return rect
    top_left = logical_to_qt(rect.left, rect.top, screens)
    bottom_right = logical_to_qt(rect.right, rect.bottom, screens)
    x0, y0 = math.floor(top_left.x()), math.floor(top_left.y())
    return Rect(x0, y0, max(1, math.ceil(bottom_right.x()) - x0),
                max(1, math.ceil(bottom_right.y()) - y0))


# -- the overlay -----------------------------------------------------------------------------


OVERLAY_FLAGS = (
    Qt.WindowType.FramelessWindowHint
    | Qt.WindowType.WindowStaysOnTopHint
    | Qt.WindowType.Tool  # no taskbar entry
    | Qt.WindowType.WindowTransparentForInput  # clicks go to the window below
    | Qt.WindowType.WindowDoesNotAcceptFocus  # typing goes to the window below
    # X11: an override-redirect window: no window manager moves, decorates or lowers it.
    | Qt.WindowType.X11BypassWindowManagerHint
)


class TargetOverlay(QWidget):
    """Marks points on the real screen: ``show_points(points)``, ``clear()``.

    The window covers the points' bounding box (plus the marker) and nothing else; it is
    click-through, never focused, stays on top and has no taskbar entry. ``screens`` and
    ``identity`` override the coordinate mapping (tests); by default they come from Qt.
    """

    def __init__(self, parent: QWidget | None = None, *, radius: float = OVERLAY_RADIUS,
                 screens: Sequence[ScreenMap] | None = None,
                 identity: bool | None = None) -> None:
        super().__init__(parent, OVERLAY_FLAGS)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground, True)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWindowTitle("holodesk target")
        self._radius = radius
        self._screens = screens
        self._identity = identity
        self._local: list[QPointF] = []
        self._global: list[QPointF] = []

    @property
    def global_points(self) -> list[QPointF]:
        """Where the markers are, in Qt global coordinates."""
        return list(self._global)

    def show_points(self, points: Sequence[Point]) -> None:
        """Mark ``points`` (logical screen points; two points: a drag, with an arrow)."""
        if not points:
            self.clear()
            return
        self._global = [logical_to_qt(p.x, p.y, self._screens, identity=self._identity)
                        for p in points]
        pad = math.ceil(self._radius * 1.7) + 8
        xs = [p.x() for p in self._global]
        ys = [p.y() for p in self._global]
        left, top = math.floor(min(xs)) - pad, math.floor(min(ys)) - pad
        right, bottom = math.ceil(max(xs)) + pad, math.ceil(max(ys)) + pad
        self.setGeometry(QRect(left, top, right - left, bottom - top))
        self._local = [QPointF(p.x() - left, p.y() - top) for p in self._global]
        self.setMask(self._shape(right - left, bottom - top))
        self.show()
        self.raise_()
        self.update()

    def clear(self) -> None:
        """Remove the markers."""
        self._local = []
        self._global = []
        self.hide()

    def _shape(self, width: int, height: int) -> QRegion:
        image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        try:
            draw_points(painter, self._local, self._radius)
        finally:
            painter.end()
        return QRegion(QBitmap.fromImage(image.createAlphaMask()))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            painter.fillRect(self.rect(), Qt.GlobalColor.transparent)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
            draw_points(painter, self._local, self._radius)
        finally:
            painter.end()


# -- keeping holodesk out of screenshots -----------------------------------------------------


def exclude_from_capture(widget: QWidget) -> bool:
    """Ask the platform to leave ``widget``'s window out of screen captures.

    True when the platform took the request: Windows (SetWindowDisplayAffinity with
    WDA_EXCLUDEFROMCAPTURE, Windows 10 2004 and later) or macOS (NSWindow sharingType none).
    False elsewhere (X11 has no such facility: mask the window in the frame instead) and on
    any failure: best effort, never raises. Call it once the window exists (after show()).
    """
    try:
        if sys.platform == "win32":
            return _exclude_windows(int(widget.winId()))
        if sys.platform == "darwin":
            return _exclude_macos(int(widget.winId()))
    except Exception:  # best effort: a missing API must never break the UI
        log.info("cannot exclude a window from capture", exc_info=True)
    return False


def _exclude_windows(hwnd: int) -> bool:
    windll = getattr(ctypes, "windll", None)
    if windll is None:
        return False
    user32 = windll.user32
    user32.SetWindowDisplayAffinity.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    user32.SetWindowDisplayAffinity.restype = ctypes.c_int
    return bool(user32.SetWindowDisplayAffinity(ctypes.c_void_p(hwnd), WDA_EXCLUDEFROMCAPTURE))


def _exclude_macos(view: int) -> bool:
    # winId() is an NSView*; its window gets sharingType NSWindowSharingNone.
    path = ctypes.util.find_library("objc")
    if not path or not view:
        return False
    objc = ctypes.cdll.LoadLibrary(path)
    objc.sel_registerName.restype = ctypes.c_void_p
    objc.sel_registerName.argtypes = [ctypes.c_char_p]
    send_ptr = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
        ("objc_msgSend", objc))
    send_uint = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulong)(
        ("objc_msgSend", objc))
    window = send_ptr(view, objc.sel_registerName(b"window"))
    if not window:
        return False
    send_uint(window, objc.sel_registerName(b"setSharingType:"), NS_WINDOW_SHARING_NONE)
    return True


class WindowRects(QObject):
    """The on-screen rectangles of tracked windows, readable from any thread.

    ``MssCapturer(exclude=rects.rects)`` calls :meth:`rects` on the capture worker; Qt must
    not be asked from there, so the rectangles are kept current on the GUI thread (an event
    filter on move, resize, show and hide) and read under a lock. Rectangles are native
    pixels of the virtual screen (see :func:`qt_rect_to_physical`). Only windows really on
    screen are painted out: ``isVisible()`` stays true for a minimised window and for one the
    window manager unmapped (another workspace), and painting those out would hide whatever the
    model needs to see where they were. So a window counts while it is shown, not minimised
    (its window state, which Qt takes from the X11 ``WM_STATE``) and not unmapped since it was
    last shown (an expose event saying it is no longer exposed: what Qt reports when the
    server unmaps it). From ``show()`` until the window system says otherwise it counts, so a
    window being mapped is never missed.
    """

    def __init__(self, parent: QObject | None = None, *,
                 screens: Sequence[ScreenMap] | None = None,
                 identity: bool | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._rects: dict[int, Rect] = {}
        self._widgets: dict[int, QWidget] = {}
        self._handles: dict[int, int] = {}  # id(QWindow) -> id(its widget)
        self._unmapped: set[int] = set()  # widgets the window system unmapped after show()
        self._screens = screens
        self._identity = identity

    def keep_out(self, window: QWidget | None) -> None:
        """Keep ``window`` out of the model's screenshots: excluded by the platform where it
        can (Windows, macOS), its rectangle painted out of the frame where it cannot (X11)."""
        if window is not None and not exclude_from_capture(window):
            self.track(window)

    def track(self, widget: QWidget) -> None:
        """Keep ``widget``'s window rectangle (while it is visible)."""
        key = id(widget)
        self._widgets[key] = widget
        widget.installEventFilter(self)
        widget.destroyed.connect(lambda _=None, k=key: self._forget(k))
        self._watch_handle(widget)
        self._update(widget)

    def _watch_handle(self, widget: QWidget) -> None:
        """Listen to the native window's expose events (it exists once the widget is shown)."""
        handle = widget.windowHandle()
        if handle is not None and id(handle) not in self._handles:
            key = id(handle)
            self._handles[key] = id(widget)
            handle.installEventFilter(self)
            handle.destroyed.connect(lambda _=None, h=key: self._handles.pop(h, None))

    def rects(self) -> list[Rect]:
        """The visible tracked windows' rectangles (thread-safe)."""
        with self._lock:
            return list(self._rects.values())

    def _forget(self, key: int) -> None:
        self._widgets.pop(key, None)
        self._unmapped.discard(key)
        with self._lock:
            self._rects.pop(key, None)

    def _update(self, widget: QWidget) -> None:
        key = id(widget)
        if on_screen(widget) and key not in self._unmapped:
            frame = widget.frameGeometry()
            rect = qt_rect_to_physical(QRect(QPoint(frame.x(), frame.y()), frame.size()),
                                       self._screens, identity=self._identity)
            with self._lock:
                self._rects[key] = rect
        else:
            with self._lock:
                self._rects.pop(key, None)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if isinstance(watched, QWindow):
            if kind == QEvent.Type.Expose:
                widget = self._widgets.get(self._handles.get(id(watched), -1))
                if widget is not None:
                    if watched.isExposed():
                        self._unmapped.discard(id(widget))
                    else:
                        self._unmapped.add(id(widget))
                    self._update(widget)
            return False
        if not isinstance(watched, QWidget):
            return False
        if kind == QEvent.Type.Show:
            self._unmapped.discard(id(watched))
            self._watch_handle(watched)
        if kind in (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show,
                    QEvent.Type.Hide, QEvent.Type.WindowStateChange):
            self._update(watched)
        return False


def on_screen(widget: QWidget) -> bool:
    """Shown and not minimised (``isVisible()`` alone stays true for a minimised window)."""
    return widget.isVisible() and not widget.isMinimized()
