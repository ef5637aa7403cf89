"""The banded JPEG encode: one valid baseline JPEG, the same pixels as one-piece encoding."""

from __future__ import annotations

import io
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import simplejpeg
from numpy.typing import NDArray
from PIL import Image, ImageDraw

from control.capture import EncodeOptions, _pool, encode_bgrx
from control.jpeg_split import MIN_SPLIT_PIXELS, band_rows, encode_jpeg_bands, splice

SIZES = [(1920, 1080), (1366, 768), (2048, 1152), (1001, 999), (1283, 717), (641, 397)]


@pytest.fixture(scope="module")
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=9) as pool:
        yield pool


def screen_like(width: int, height: int, seed: int = 3) -> NDArray[np.uint8]:
    """BGRX pixels with text, hard edges, gradients and noise (every kind of block)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    rgb = np.stack([xx * 255 // max(1, width), yy * 255 // max(1, height),
                    (xx ^ yy) & 0xFF], -1).astype(np.int16)
    rgb += rng.integers(-12, 12, rgb.shape, dtype=np.int16)
    image = Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for i in range(0, height, 17):
        draw.text((3 + i % 40, i), f"line {i}: the quick brown fox 0123456789", fill="#101010")
    draw.rectangle((width // 3, height // 3, width // 2, height // 2), fill="#ffffff")
    out = np.zeros((height, width, 4), np.uint8)
    out[..., :3] = np.asarray(image)[..., ::-1]
    return out


def pil_pixels(data: bytes) -> NDArray[np.uint8]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        image = Image.open(io.BytesIO(data))
        assert image.format == "JPEG"
        image.load()
        return np.asarray(image)


def plain(pixels: NDArray[np.uint8], chroma: str = "444", quality: int = 90) -> bytes:
    return bytes(simplejpeg.encode_jpeg(pixels, quality=quality, colorspace="BGRX",
                                        colorsubsampling=chroma))


def markers(data: bytes) -> list[int]:
    return [data[i + 1] for i in range(len(data) - 1)
            if data[i] == 0xFF and data[i + 1] not in (0x00, 0xFF)]


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_two_bands_decode_like_the_bands_stacked_and_like_one_piece(
        width: int, height: int, executor: ThreadPoolExecutor) -> None:
    pixels = screen_like(width, height)
    rows = band_rows(width, height, 2, "444")
    assert rows is not None and rows[1] % 8 == 0 and rows[-1] == height
    data = encode_jpeg_bands(pixels, quality=90, colorspace="BGRX", chroma="444", bands=2,
                             executor=executor)
    found = markers(data)
    assert found[0] == 0xD8 and found[-1] == 0xD9
    assert found.count(0xDD) == 1 and found.count(0xD0) == 1  # spliced, not a fallback
    decoded = pil_pixels(data)
    assert decoded.shape == (height, width, 3)
    stacked = np.concatenate([pil_pixels(plain(pixels[rows[i]:rows[i + 1]]))
                              for i in range(len(rows) - 1)])
    assert np.array_equal(decoded, stacked)
    # DC restarts at zero in both, so the coefficients are the one-piece encode's.
    assert np.array_equal(decoded, pil_pixels(plain(pixels)))
    assert np.array_equal(simplejpeg.decode_jpeg(data, colorspace="RGB"),
                          simplejpeg.decode_jpeg(plain(pixels), colorspace="RGB"))


@pytest.mark.parametrize("chroma", ["422", "420"])
@pytest.mark.parametrize(("width", "height"), [(1001, 999), (1366, 768)])
def test_subsampled_chroma_bands_use_whole_mcus(width: int, height: int, chroma: str,
                                                executor: ThreadPoolExecutor) -> None:
    pixels = screen_like(width, height)
    data = encode_jpeg_bands(pixels, quality=90, colorspace="BGRX", chroma=chroma, bands=2,
                             executor=executor)
    assert 0xDD in markers(data)
    # Not the stacked bands: a whole-image decoder upsamples chroma across the seam.
    assert np.array_equal(pil_pixels(data), pil_pixels(plain(pixels, chroma)))


@pytest.mark.parametrize("bands", [3, 4, 10])
def test_many_bands_cycle_the_restart_markers(bands: int,
                                              executor: ThreadPoolExecutor) -> None:
    pixels = screen_like(1920, 1080)
    rows = band_rows(1920, 1080, bands, "444")
    assert rows is not None and len(rows) - 1 == bands
    data = encode_jpeg_bands(pixels, quality=90, colorspace="BGRX", chroma="444",
                             bands=bands, executor=executor)
    restarts = [m for m in markers(data) if 0xD0 <= m <= 0xD7]
    assert restarts == [0xD0 + i % 8 for i in range(bands - 1)]
    assert np.array_equal(pil_pixels(data), pil_pixels(plain(pixels)))


def test_what_cannot_be_split_is_encoded_in_one_piece(executor: ThreadPoolExecutor) -> None:
    small = screen_like(400, 300)
    assert small.shape[0] * small.shape[1] < MIN_SPLIT_PIXELS
    one_row = screen_like(2000, 8)
    odd = screen_like(999, 501)
    for pixels, bands, pool in [(small, 2, executor), (one_row, 2, executor),
                                (odd, 1, executor), (odd, 2, None)]:
        data = encode_jpeg_bands(pixels, quality=90, colorspace="BGRX", chroma="444",
                                 bands=bands, executor=pool)
        assert data == plain(pixels)
    assert band_rows(1920, 8, 2, "444") is None  # one MCU row
    assert band_rows(8 * 70_000, 16, 2, "444") is None  # interval over 65535 MCUs
    assert band_rows(8 * 65_535, 16, 2, "444") == [0, 8, 16]


def test_bands_with_different_tables_are_not_spliced() -> None:
    pixels = screen_like(640, 480)
    top, bottom = pixels[:240], pixels[240:]
    assert splice([plain(top), plain(bottom)], 480, 30 * 80) is not None
    assert splice([plain(top), plain(bottom, quality=80)], 480, 30 * 80) is None
    assert splice([plain(top), plain(bottom, chroma="420")], 480, 30 * 80) is None

    def pillow(part: NDArray[np.uint8], **kwargs: object) -> bytes:
        out = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(part[..., 2::-1])).save(
            out, "JPEG", quality=90, subsampling=0, **kwargs)
        return out.getvalue()

    # Optimized Huffman tables differ per band; progressive is not one baseline scan.
    assert splice([pillow(top, optimize=True), pillow(bottom, optimize=True)], 480,
                  30 * 80) is None
    assert splice([pillow(top, progressive=True), pillow(bottom, progressive=True)], 480,
                  30 * 80) is None
    assert splice([plain(top)], 480, 30 * 80) is None
    assert splice([plain(top), plain(bottom)], 480, 0) is None


def test_frames_encode_in_bands_by_default_on_one_pool() -> None:
    pixels = screen_like(1920, 1080)
    raw = bytearray(pixels.tobytes())
    one, _, _ = encode_bgrx(raw, 1920, 1080, EncodeOptions(jpeg_bands=1))
    assert 0xDD not in markers(one)
    banded, w, h = encode_bgrx(raw, 1920, 1080, EncodeOptions(jpeg_bands=2))
    assert (w, h) == (1920, 1080) and 0xDD in markers(banded)
    assert np.array_equal(pil_pixels(banded), pil_pixels(one))
    pool = _pool()
    for _ in range(10):
        encode_bgrx(raw, 1920, 1080, EncodeOptions(jpeg_bands=2))
    # One pool for the process: its few workers, never a thread per frame.
    workers = [t for t in threading.enumerate() if t.name.startswith("holodesk-scale")]
    assert _pool() is pool and 1 <= len(workers) <= pool._max_workers
    with pytest.raises(ValueError):
        EncodeOptions(jpeg_bands=0)
