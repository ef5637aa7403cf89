"""Masking holodesk's own windows out of captured frames: the pixel rules (unit, through the
fake capturer) and a real window on a private Xvfb that must not reach the frame (x11)."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
import simplejpeg
from numpy.typing import NDArray
from PIL import Image

from control.capture import (
    MASK_BGRX,
    CaptureTarget,
    EncodeOptions,
    Frame,
    MssCapturer,
    mask_bgrx,
)
from model.coords import Rect
from tests.support.fake_capturer import FakeCapturer
from tests.support.target_app import RunningApp
from tests.support.xvfb import Xvfb, xvfb_available

GREY = MASK_BGRX[2], MASK_BGRX[1], MASK_BGRX[0]
PNG = EncodeOptions(image_format="png")


def decode(frame: Frame) -> NDArray[np.uint8]:
    if frame.mime == "image/jpeg":
        decoded: NDArray[np.uint8] = simplejpeg.decode_jpeg(frame.data, colorspace="RGB")
        return decoded
    return np.asarray(Image.open(io.BytesIO(frame.data)).convert("RGB"))


def noise(width: int, height: int, seed: int = 3) -> NDArray[np.uint8]:
    """Random RGB pixels, none of them exactly the mask grey by accident in a whole block."""
    return np.random.default_rng(seed).integers(0, 255, (height, width, 3), np.uint8)


def grey_mask(pixels: NDArray[np.uint8]) -> NDArray[np.bool_]:
    out: NDArray[np.bool_] = np.all(pixels == np.array(GREY, np.uint8), axis=-1)
    return out


def expected_mask(width: int, height: int, boxes: Sequence[tuple[int, int, int, int]]
                  ) -> NDArray[np.bool_]:
    out = np.zeros((height, width), bool)
    for x0, y0, x1, y1 in boxes:
        out[y0:y1, x0:x1] = True
    return out


# -- unit ------------------------------------------------------------------------------------


def test_pixels_inside_the_rectangles_are_grey_and_the_rest_untouched() -> None:
    screen = noise(400, 300)
    rects = [Rect(10, 20, 50, 40), Rect(380, 250, 100, 100)]  # the second one sticks out
    cap = FakeCapturer([screen], options=PNG, exclude=lambda: rects)
    pixels = decode(cap.grab())
    want = expected_mask(400, 300, [(10, 20, 60, 60), (380, 250, 400, 300)])
    assert np.array_equal(grey_mask(pixels), want)
    assert np.array_equal(pixels[~want], screen[~want])


def test_offsets_follow_the_monitor_origin_even_when_negative() -> None:
    # The captured area is a monitor left of and above the primary one.
    screen = noise(320, 200, seed=5)
    area = Rect(-320, -200, 320, 200)
    rects = [
        Rect(-300, -190, 20, 10),  # inside: pixels (20, 10)-(40, 20)
        Rect(-10, -10, 100, 100),  # straddles the corner with the primary: (310, 190)-(320, 200)
        Rect(0, 0, 1920, 1080),  # the primary monitor: outside the area, nothing painted
    ]
    cap = FakeCapturer([screen], monitor=area, options=PNG, exclude=lambda: rects)
    pixels = decode(cap.grab())
    want = expected_mask(320, 200, [(20, 10, 40, 20), (310, 190, 320, 200)])
    assert np.array_equal(grey_mask(pixels), want)
    assert np.array_equal(pixels[~want], screen[~want])


def test_a_region_with_more_pixels_than_physical_units_scales_the_rectangles() -> None:
    # Pixels per physical unit 2 (as on a Retina capture through points): rectangles double.
    raw = noise(200, 100).tobytes()
    bgrx = np.zeros((100, 200, 4), np.uint8)
    bgrx[..., :3] = np.frombuffer(raw, np.uint8).reshape(100, 200, 3)
    out = mask_bgrx(bgrx.tobytes(), 200, 100, Rect(1000, 500, 100, 50), [Rect(1010, 510, 5, 5)])
    painted = np.frombuffer(out, np.uint8).reshape(100, 200, 4)
    is_grey = np.all(painted == np.array(MASK_BGRX, np.uint8), axis=-1)
    assert np.array_equal(is_grey, expected_mask(200, 100, [(20, 20, 30, 30)]))


def test_no_rectangles_means_the_same_buffer_and_bytes_are_never_painted_in_place() -> None:
    raw = bytes(16 * 8 * 4)
    assert mask_bgrx(raw, 16, 8, Rect(0, 0, 16, 8), []) is raw
    assert mask_bgrx(raw, 16, 8, Rect(0, 0, 16, 8), [Rect(100, 100, 5, 5)]) is raw
    painted = mask_bgrx(raw, 16, 8, Rect(0, 0, 16, 8), [Rect(0, 0, 4, 4)])
    assert raw == bytes(16 * 8 * 4) and painted != raw
    buffer = bytearray(16 * 8 * 4)
    assert mask_bgrx(buffer, 16, 8, Rect(0, 0, 16, 8), [Rect(0, 0, 4, 4)]) is buffer


def test_the_mask_applies_before_downscaling_and_to_the_settle_frames() -> None:
    screen = np.zeros((1440, 2560, 3), np.uint8)
    cap = FakeCapturer([screen], exclude=lambda: [Rect(0, 0, 1280, 1440)])
    pixels = decode(cap.grab())  # sent at 2048x1152
    assert pixels.shape[:2] == (1152, 2048)
    assert np.abs(pixels[500, 100].astype(int) - GREY).max() <= 6
    assert pixels[500, 1900].max() <= 6
    small = cap.grab_small()
    assert small[90, 10] > 100 and small[90, 300] < 10


def test_a_failing_mask_paints_the_whole_frame_out() -> None:
    """Where the windows to hide are is unknown: the frame shows nothing rather than them (a
    password manager must not reach the model because a lookup failed)."""
    def broken() -> Sequence[Rect]:
        raise RuntimeError("window gone")

    screen = noise(64, 48)
    cap = FakeCapturer([screen], options=PNG, exclude=broken)
    assert grey_mask(decode(cap.grab())).all()


def test_the_mask_is_asked_again_for_every_frame() -> None:
    rects: list[Rect] = []
    screen = noise(64, 48)
    cap = FakeCapturer([screen], options=PNG, exclude=lambda: rects)
    assert not grey_mask(decode(cap.grab())).any()
    rects.append(Rect(0, 0, 8, 8))
    assert grey_mask(decode(cap.grab())).sum() == 64


# -- x11 -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def screen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Xvfb, RunningApp]]:
    if not xvfb_available():
        pytest.skip("Xvfb is not installed")
    workdir: Path = tmp_path_factory.mktemp("capture_mask")
    with Xvfb(1280, 800) as server:
        app = RunningApp(server, workdir, geometry="1000x660+100+50")
        try:
            yield server, app
        finally:
            app.stop()


@pytest.mark.x11
def test_a_masked_window_does_not_appear_in_the_frame(screen: tuple[Xvfb, RunningApp]) -> None:
    server, app = screen
    left, top, width, height = app.window
    window = Rect(left, top, width, height)
    with server.activated(), MssCapturer(options=PNG, display=server.display) as plain, \
            MssCapturer(options=PNG, display=server.display,
                        exclude=lambda: [window]) as masked:
        before = decode(plain.grab())
        after = decode(masked.grab())
    inside = expected_mask(1280, 800, [(window.left, window.top, window.right, window.bottom)])
    assert grey_mask(after)[inside].all()
    assert np.array_equal(after[~inside], before[~inside])
    for widget in app.widgets.values():  # every coloured widget was there, and is gone
        x, y = widget.solid_center
        assert tuple(before[y, x]) == widget.rgb
        assert tuple(after[y, x]) == GREY


@pytest.mark.x11
def test_a_region_capture_masks_only_its_part_of_the_window(
        screen: tuple[Xvfb, RunningApp]) -> None:
    server, app = screen
    save = app.widgets["save"]
    sx, sy, sw, sh = save.rect
    # The region starts in the middle of the save button; the mask covers the whole button.
    region = Rect(sx + sw // 2, sy, 400, 300)
    target = CaptureTarget.area(region)
    with server.activated(), MssCapturer(target, options=PNG, display=server.display) as plain, \
            MssCapturer(target, options=PNG, display=server.display,
                        exclude=lambda: [Rect(sx, sy, sw, sh)]) as masked:
        before = decode(plain.grab())
        after = decode(masked.grab())
        small = masked.grab_small()
    assert after.shape[:2] == (300, 400)
    inside = expected_mask(400, 300, [(0, 0, sw - sw // 2, sh)])
    assert grey_mask(after)[inside].all()
    assert not grey_mask(before)[inside].all()
    assert np.array_equal(after[~inside], before[~inside])
    assert small.shape == (38, 50)  # 300 / 8 rounded up
    assert abs(int(small[2, 2]) - GREY[0]) <= 2


@pytest.mark.x11
def test_a_settle_look_paints_out_the_windows_there_at_that_look(
        screen: tuple[Xvfb, RunningApp]) -> None:
    """A window painted out when the wait began and gone since (the confirmation panel hiding)
    is watched from then on."""
    server, app = screen
    sx, sy, sw, sh = app.widgets["save"].rect
    shown = [True]

    def exclude() -> list[Rect]:
        return [Rect(sx, sy, sw, sh)] if shown[0] else []

    with server.activated(), MssCapturer(display=server.display, exclude=exclude) as cap:
        grab = cap.small_grabber()
        masked = grab()
        shown[0] = False
        unmasked = grab()
    x, y = (sx + sw // 2) // 8, (sy + sh // 2) // 8
    assert abs(int(masked[y, x]) - GREY[0]) <= 2
    assert abs(int(unmasked[y, x]) - GREY[0]) > 2
