"""Screen capture: target parsing, sizing rules, the fake capturer (unit), and mss on private
Xvfb servers showing the Tk target app (x11).

mss runs in this process but is always handed the Xvfb's display name explicitly
(``MssCapturer(display=...)``), and on Linux capture never imports pyautogui.
"""

from __future__ import annotations

import dataclasses
import io
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import simplejpeg
from numpy.typing import NDArray
from PIL import Image

from control.capture import (
    MIN_LONG_SIDE,
    CaptureTarget,
    EncodeOptions,
    Frame,
    MssCapturer,
    frame_small,
    scale_bgrx,
    target_size,
    thumbnail,
)
from model.coords import Convention, Point, Rect, from_screen, to_screen
from tests.support.fake_capturer import FakeCapturer
from tests.support.target_app import RunningApp, Widget
from tests.support.xvfb import Xvfb, xvfb_available

needs_xvfb = pytest.mark.skipif(not xvfb_available(), reason="Xvfb is not installed")


def decode(frame: Frame) -> NDArray[np.uint8]:
    """The frame's pixels as an RGB array."""
    if frame.mime == "image/jpeg":
        return simplejpeg.decode_jpeg(frame.data, colorspace="RGB")
    return np.asarray(Image.open(io.BytesIO(frame.data)).convert("RGB"))


def assert_colour_at(pixels: NDArray[np.uint8], x: float, y: float,
                     rgb: tuple[int, int, int], tolerance: int = 16) -> None:
    """The 5x5 patch around (x, y) of the image is ``rgb`` (within ``tolerance``)."""
    xi, yi = round(x), round(y)
    patch = pixels[yi - 2:yi + 3, xi - 2:xi + 3].reshape(-1, 3).astype(int)
    worst = int(np.abs(patch - np.array(rgb)).max())
    assert worst <= tolerance, f"at ({xi}, {yi}): {patch[12].tolist()} is not {rgb}"


def image_point(widget: Widget, frame: Frame) -> tuple[float, float]:
    """Where the widget's solid centre is in the sent image."""
    sx, sy = widget.solid_center
    return from_screen(sx, sy, Convention.PIXELS, frame.geometry)


# -- unit: targets and sizes ---------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("1", CaptureTarget("monitor", monitor=1)),
    ("0", CaptureTarget("monitor", monitor=0)),
    ("all", CaptureTarget("monitor", monitor=0)),
    ("monitor:2", CaptureTarget("monitor", monitor=2)),
    ("Mouse", CaptureTarget("mouse")),
    ("primary", CaptureTarget("primary")),
    ("1366x768+1920+0", CaptureTarget("region", region=Rect(1920, 0, 1366, 768))),
    ("1920x1080-1920+0", CaptureTarget("region", region=Rect(-1920, 0, 1920, 1080))),
])
def test_capture_targets_parse_and_print_back(text: str, expected: CaptureTarget) -> None:
    target = CaptureTarget.parse(text)
    assert target == expected
    assert CaptureTarget.parse(str(target)) == target


@pytest.mark.parametrize("text", ["", "left", "-1", "0x10+0+0", "10x10", "monitor:x"])
def test_bad_capture_targets_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        CaptureTarget.parse(text)


@pytest.mark.parametrize(("size", "max_side", "expected"), [
    ((2560, 1440), 2048, ((2048, 1152), 1)),
    ((3840, 2160), 2048, ((1920, 1080), 2)),  # integer box reduction: close enough to 2048
    ((5120, 2880), 2048, ((2048, 1152), 1)),  # 1/3 would be too small
    ((1920, 1080), 2048, ((1920, 1080), 1)),
    ((1280, 720), 2048, ((1280, 720), 1)),  # never upscaled
    ((1440, 2560), 2048, ((1152, 2048), 1)),  # portrait
    ((2560, 1440), 1024, ((1366, 768), 1)),  # never down to the model's small grid
    ((2732, 1536), 1000, ((1366, 768), 2)),
])
def test_target_size(size: tuple[int, int], max_side: int,
                     expected: tuple[tuple[int, int], int]) -> None:
    assert target_size(*size, max_side) == expected


def test_a_16_9_frame_never_shrinks_to_720p() -> None:
    for width in range(1366, 8000, 97):
        height = width * 9 // 16
        for max_side in (512, 1280, 1366, 2048):
            (w, h), _ = target_size(width, height, max_side)
            assert max(w, h) >= MIN_LONG_SIDE
            assert w * h > 1280 * 720


# -- unit: the fake capturer and the encoders ------------------------------------------------


def picture(width: int, height: int, colour: tuple[int, int, int]) -> Image.Image:
    image = Image.new("RGB", (width, height), colour)
    image.paste((0, 0, 255), (width // 4, height // 4, width // 2, height // 2))
    return image


def test_fake_capturer_encodes_like_the_real_one() -> None:
    images = [picture(2560, 1440, (255, 0, 0)), picture(2560, 1440, (0, 255, 0))]
    cap = FakeCapturer(images, monitor=Rect(100, 0, 2560, 1440))
    first = cap.grab()
    assert (first.width, first.height, first.mime) == (2048, 1152, "image/jpeg")
    assert first.geometry.monitor == Rect(100, 0, 2560, 1440)
    pixels = decode(first)
    assert_colour_at(pixels, 100, 100, (255, 0, 0))
    assert_colour_at(pixels, 2048 * 3 / 8, 1152 * 3 / 8, (0, 0, 255))
    second = cap.grab()
    assert_colour_at(decode(second), 100, 100, (0, 255, 0))
    assert_colour_at(decode(cap.grab()), 100, 100, (0, 255, 0))  # the last one stays
    assert cap.grab_small().shape == (180, 320)
    assert first.data_url().startswith("data:image/jpeg;base64,/9j/")


@pytest.mark.parametrize(("size", "target", "k"), [
    ((2560, 1440), (2048, 1152), 1), ((3840, 2160), (1920, 1080), 2), ((1001, 999), (334, 333), 3),
])
def test_scaling_in_bands_equals_scaling_in_one_piece(
        size: tuple[int, int], target: tuple[int, int], k: int) -> None:
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 255, (size[1], size[0], 4), np.uint8).tobytes()
    image = Image.frombuffer("RGBX", size, raw, "raw", "RGBX", 0, 1)
    whole = image.reduce(k) if k > 1 else image.resize(target, Image.Resampling.BICUBIC)
    pillow = np.asarray(whole)
    for bands in (1, 2, 3, 4):
        banded = scale_bgrx(raw, *size, target, k, "bicubic", bands=bands)
        assert banded.shape == (target[1], target[0], 4)
        assert np.array_equal(banded, pillow)


def test_png_frames_are_lossless() -> None:
    image = picture(1600, 900, (12, 34, 56))
    cap = FakeCapturer([image], options=EncodeOptions(image_format="png"))
    frame = cap.grab()
    assert frame.mime == "image/png"
    assert np.array_equal(decode(frame), np.asarray(image))


def test_fake_capturer_from_a_callable() -> None:
    screen = [np.zeros((720, 1280, 3), np.uint8)]
    cap = FakeCapturer(lambda: screen[0])
    before = cap.grab_small()
    screen[0] = np.full((720, 1280, 3), 200, np.uint8)
    after = cap.grab_small()
    assert before.shape == after.shape == (90, 160)
    assert int(after.mean()) - int(before.mean()) > 150


def test_thumbnail() -> None:
    frame = FakeCapturer([picture(2560, 1440, (255, 0, 0))]).grab()
    thumb = Image.open(io.BytesIO(thumbnail(frame)))
    assert thumb.format == "JPEG" and thumb.size == (320, 180)
    png = FakeCapturer([picture(800, 1000, (0, 0, 0))],
                       options=EncodeOptions(image_format="png")).grab()
    assert Image.open(io.BytesIO(thumbnail(png, max_side=100))).size == (80, 100)


@pytest.mark.parametrize("size", [(1920, 1080), (3840, 2160), (2560, 1440), (1366, 768)])
def test_the_thumbnail_from_the_kept_pixels_matches_the_one_from_the_jpeg(
        size: tuple[int, int]) -> None:
    # A busy picture (noise, sharp edges): a wrong channel order, a shifted or wrongly scaled
    # image would all show as a large difference.
    rng = np.random.default_rng(3)
    w, h = size
    image = np.repeat(np.repeat(rng.integers(0, 256, (h // 40 + 1, w // 40 + 1, 3), np.uint8),
                                40, 0), 40, 1)[:h, :w]
    image[:, : w // 3] = (250, 30, 30)
    frame = FakeCapturer([image]).grab()
    assert frame.pixels is not None
    fast = np.asarray(Image.open(io.BytesIO(thumbnail(frame))).convert("RGB"), np.int16)
    slow_frame = dataclasses.replace(frame, pixels=None)
    slow = np.asarray(Image.open(io.BytesIO(thumbnail(slow_frame))).convert("RGB"), np.int16)
    assert fast.shape == slow.shape and max(fast.shape[:2]) == 320
    assert float(np.abs(fast - slow).mean()) < 6
    assert tuple(fast[fast.shape[0] // 2, 20]) == pytest.approx((250, 30, 30), abs=25)


# -- x11: mss on Xvfb ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("capture")


def screen_with_app(width: int, height: int, geometry: str,
                    workdir: Path) -> Iterator[tuple[Xvfb, RunningApp]]:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed")
    with Xvfb(width, height) as server:
        app = RunningApp(server, workdir / f"{width}x{height}", geometry=geometry)
        try:
            yield server, app
        finally:
            app.stop()


@pytest.fixture(scope="module")
def small_screen(workdir: Path) -> Iterator[tuple[Xvfb, RunningApp]]:
    yield from screen_with_app(1280, 800, "1000x660+100+50", workdir)


@pytest.fixture(scope="module")
def qhd_screen(workdir: Path) -> Iterator[tuple[Xvfb, RunningApp]]:
    yield from screen_with_app(2560, 1440, "1000x660+1200+600", workdir)


@pytest.fixture(scope="module")
def wide_screen(workdir: Path) -> Iterator[tuple[Xvfb, RunningApp]]:
    # Xvfb cannot lay out two monitors for mss: a 3286x1080 screen with a 1366x768 region at
    # +1920+0 stands in for a second monitor right of a 1920x1080 one.
    yield from screen_with_app(3286, 1080, "1000x660+2100+60", workdir)


COLOURED = ("save", "cancel", "open", "field", "pad")


@pytest.mark.x11
@pytest.mark.parametrize("image_format", ["jpeg", "png"])
def test_capture_finds_the_window_colours_in_place(
        small_screen: tuple[Xvfb, RunningApp], image_format: str) -> None:
    server, app = small_screen
    options = EncodeOptions(image_format="png") if image_format == "png" else EncodeOptions()
    with server.activated(), MssCapturer(options=options, display=server.display) as cap:
        frame = cap.grab()
    assert (frame.width, frame.height) == (1280, 800)
    assert frame.geometry.monitor == Rect(0, 0, 1280, 800)
    assert frame.geometry.scale == 1.0
    assert frame.capture_ms >= 0 and frame.encode_ms > 0
    pixels = decode(frame)
    tolerance = 0 if image_format == "png" else 16
    for name in COLOURED:
        widget = app.widgets[name]
        assert_colour_at(pixels, *image_point(widget, frame), widget.rgb, tolerance)


@pytest.mark.x11
def test_a_1440p_screen_is_sent_at_2048x1152_and_maps_back(
        qhd_screen: tuple[Xvfb, RunningApp]) -> None:
    server, app = qhd_screen
    with server.activated(), MssCapturer(display=server.display) as cap:
        frame = cap.grab()
    assert (frame.width, frame.height) == (2048, 1152)
    assert frame.geometry.monitor == Rect(0, 0, 2560, 1440)
    pixels = decode(frame)
    for name in COLOURED:
        widget = app.widgets[name]
        ix, iy = image_point(widget, frame)
        assert_colour_at(pixels, ix, iy, widget.rgb)
        # A perfect model answering in norm1000 at that spot clicks the widget.
        nx, ny = from_screen(*widget.solid_center, Convention.NORM1000, frame.geometry)
        mapped = to_screen(round(nx), round(ny), Convention.NORM1000, frame.geometry)
        left, top, w, h = widget.solid
        assert Rect(left, top, w, h).contains(mapped.point.x, mapped.point.y)


@pytest.mark.x11
def test_a_region_target_keeps_its_origin(wide_screen: tuple[Xvfb, RunningApp]) -> None:
    server, app = wide_screen
    target = CaptureTarget.parse("1366x768+1920+0")
    with server.activated(), MssCapturer(target, display=server.display) as cap:
        assert [str(m) for m in cap.monitors()] == ["3286x1080+0+0", "3286x1080+0+0"]
        frame = cap.grab()
        small = cap.grab_small()
    assert frame.geometry.monitor == Rect(1920, 0, 1366, 768)
    assert (frame.width, frame.height) == (1366, 768)
    assert small.shape == (96, 171)
    pixels = decode(frame)
    for name in ("save", "cancel", "field"):
        widget = app.widgets[name]
        sx, sy = widget.solid_center
        assert_colour_at(pixels, sx - 1920, sy, widget.rgb)
        nx, ny = from_screen(sx, sy, Convention.NORM1000, frame.geometry)
        assert 0 <= nx <= 1000 and 0 <= ny <= 1000
        mapped = to_screen(nx, ny, Convention.NORM1000, frame.geometry)
        assert abs(mapped.point.x - sx) <= 1 and abs(mapped.point.y - sy) <= 1
    # A point the model puts past the region is clamped into it, never onto the other screen.
    edge = to_screen(1000, 1000, Convention.NORM1000, frame.geometry)
    assert edge.point == Point(1920 + 1366 - 1, 768 - 1)
    outside = to_screen(1200, 500, Convention.NORM1000, frame.geometry)
    assert outside.clamped and outside.point.x == 1920 + 1366 - 1


@pytest.mark.x11
def test_regions_are_clipped_to_the_screen_and_bad_monitors_refused(
        small_screen: tuple[Xvfb, RunningApp]) -> None:
    server, _ = small_screen
    with server.activated(), \
            MssCapturer(CaptureTarget.parse("800x600+1000+500"), display=server.display) as cap:
        assert cap.monitor() == Rect(1000, 500, 280, 300)
        assert (cap.grab().width, cap.grab().height) == (280, 300)
    with server.activated(), \
            MssCapturer(CaptureTarget.parse("100x100+5000+0"), display=server.display) as cap, \
            pytest.raises(ValueError, match="outside the screen"):
        cap.grab()
    with server.activated(), MssCapturer(CaptureTarget.screen(3), display=server.display) as cap, \
            pytest.raises(ValueError, match="monitor 3 does not exist"):
        cap.grab()


@pytest.mark.x11
def test_mouse_and_primary_targets(small_screen: tuple[Xvfb, RunningApp]) -> None:
    server, _ = small_screen
    loc = subprocess.run(["xdotool", "getmouselocation", "--shell"], env=server.env(),
                         capture_output=True, text=True, check=True).stdout
    fields = dict(line.split("=", 1) for line in loc.split())
    pointer = (int(fields["X"]), int(fields["Y"]))
    with server.activated(), MssCapturer(CaptureTarget.under_mouse(), display=server.display,
                                         pointer=lambda: pointer) as cap:
        assert cap.monitor() == Rect(0, 0, 1280, 800)
    with server.activated(), MssCapturer(CaptureTarget.primary(), display=server.display) as cap:
        assert cap.grab().geometry.monitor == Rect(0, 0, 1280, 800)


@pytest.mark.x11
def test_each_thread_gets_its_own_mss_instance(small_screen: tuple[Xvfb, RunningApp]) -> None:
    server, _ = small_screen
    with server.activated():
        cap = MssCapturer(display=server.display)
        sizes: list[tuple[int, ...]] = []
        main = cap.grab()
        worker = threading.Thread(target=lambda: sizes.append(cap.grab_small().shape))
        worker.start()
        worker.join()
        assert sizes == [(100, 160)] and main.width == 1280
        assert len(cap._instances) == 2
        cap.close()
    assert cap._instances == []
    with pytest.raises(RuntimeError, match="closed"):
        cap.grab()


@pytest.mark.x11
def test_4k_is_reduced_by_two() -> None:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed")
    with Xvfb(3840, 2160) as server, server.activated(), \
            MssCapturer(display=server.display) as cap:
        frame = cap.grab()
        assert (frame.width, frame.height) == (1920, 1080)
        assert frame.geometry.monitor == Rect(0, 0, 3840, 2160)
        assert len(frame.data) > 0


def test_the_small_frame_of_the_sent_pixels_is_the_one_a_grab_would_give() -> None:
    rng = np.random.default_rng(5)
    screen = rng.integers(0, 256, (1080, 1920, 3), np.uint8)
    cap = FakeCapturer([screen, screen])
    frame = cap.grab()
    small = frame_small(frame)
    assert small is not None and small.shape == (135, 240)
    assert np.array_equal(small, cap.grab_small())
    # A 4K screen is sent at 1920x1080: its small frame is that size's.
    big = FakeCapturer([np.repeat(np.repeat(screen, 2, 0), 2, 1)]).grab()
    big_small = frame_small(big)
    assert big_small is not None and big_small.shape == (135, 240)
    assert float(np.abs(big_small.astype(int) - small.astype(int)).mean()) < 1
    assert frame_small(dataclasses.replace(frame, pixels=None)) is None
