"""A baseline JPEG encoded in horizontal bands on several threads, spliced into one file.

The JPEG encode is most of a frame's cost (7 of 9.5 ms at 1080p on 2 cores) and simplejpeg
releases the GIL while encoding, so the frame is cut into bands of whole MCU rows, each band
is encoded on its own thread, and the bands are joined with restart markers:

* the header is the first band's, with the full height patched into SOF0 and a DRI segment
  (restart interval = the MCUs of one band) inserted before SOS;
* then each band's entropy-coded data (libjpeg pads it to a byte boundary with 1-bits before
  EOI), an ``RSTn`` marker between bands, and one EOI.

Every band but the last has exactly ``rows_per_band`` MCU rows, so each restart interval is
full and only the last one may be short, as the standard allows. A decoder resets the DC
predictors at each RST, exactly as each band's own encode started from zero, so the
coefficients are the ones a single-piece encode produces: the same pixels, the same quality,
a few bytes more (one RST per band, DC restarting at zero).

This only holds when every band uses the same tables: libjpeg-turbo writes the standard
Huffman tables unless told to optimize them, and the quantization tables depend only on the
quality. The headers are compared byte for byte (heights masked) and any difference, or
anything unexpected in the stream, falls back to one encode of the whole frame.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
import simplejpeg
from numpy.typing import NDArray

log = logging.getLogger(__name__)

_SOI = b"\xff\xd8"
_EOI = b"\xff\xd9"
_SOF0 = 0xC0
_SOS = 0xDA
_DRI = 0xDD
# Markers that carry no length field (RSTn, SOI, EOI, TEM).
_STANDALONE = {*range(0xD0, 0xD8), 0xD8, 0xD9, 0x01}
_MAX_INTERVAL = 0xFFFF
# MCU size in pixels for each chroma subsampling simplejpeg offers.
_MCU = {"444": (8, 8), "422": (16, 8), "420": (16, 16), "411": (32, 8), "440": (8, 16)}
# Below this many pixels a second thread costs more than it saves (a thread hand-off is
# ~0.1-0.3 ms here; a 0.25 Mpx encode about 1 ms).
MIN_SPLIT_PIXELS = 250_000


@dataclass(frozen=True)
class _Parsed:
    header: bytes  # SOI up to and including the SOS segment
    sof_height_at: int  # offset of SOF0's 16-bit height in ``header``
    sos_at: int  # offset of the SOS marker in ``header``
    entropy: bytes  # the scan's entropy-coded data, without EOI


def band_rows(width: int, height: int, bands: int, chroma: str) -> list[int] | None:
    """Row boundaries ``[0, r1, ..., height]`` for encoding in ``bands`` pieces, or ``None``
    when the frame cannot (or need not) be split.

    Every band but the last holds the same whole number of MCU rows; the last holds what is
    left (possibly fewer rows, possibly a partial MCU row). The restart interval (MCUs per
    band) must fit in 16 bits.
    """
    if bands < 2 or chroma not in _MCU:
        return None
    mcu_w, mcu_h = _MCU[chroma]
    mcu_rows = -(-height // mcu_h)
    per_band = -(-mcu_rows // bands)
    if per_band * -(-width // mcu_w) > _MAX_INTERVAL:
        return None
    cuts = list(range(0, height, per_band * mcu_h))
    if len(cuts) < 2:
        return None
    return [*cuts, height]


def _parse(data: bytes) -> _Parsed | None:
    """Split a single-scan baseline JPEG into header and entropy data; ``None`` if it is
    anything else (progressive, restart intervals already, trailing bytes)."""
    if not data.startswith(_SOI) or not data.endswith(_EOI):
        return None
    pos = 2
    sof_height_at = -1
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker in _STANDALONE:
            return None
        (length,) = struct.unpack_from(">H", data, pos + 2)
        end = pos + 2 + length
        if marker == _DRI or (0xC1 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC)):
            return None  # restarts already, or not baseline Huffman
        if marker == _SOF0:
            sof_height_at = pos + 5
        if marker == _SOS:
            if sof_height_at < 0:
                return None
            entropy = data[end:-2]
            # A scan's data holds only stuffed 0xFF00 bytes, never a marker; a lone EOI-like
            # pair inside would mean a second scan or garbage after the first.
            if _EOI in entropy:
                return None
            return _Parsed(data[:end], sof_height_at, pos, entropy)
        pos = end
    return None


def splice(parts: Sequence[bytes], height: int, interval: int) -> bytes | None:
    """Join band JPEGs (same width, same tables, every band but the last holding exactly
    ``interval`` MCUs) into one JPEG of ``height`` rows; ``None`` when they do not fit."""
    if len(parts) < 2 or not 0 < interval <= _MAX_INTERVAL:
        return None
    parsed = [_parse(p) for p in parts]
    if any(p is None for p in parsed):
        return None
    bands = [p for p in parsed if p is not None]
    first = bands[0]

    def masked(p: _Parsed) -> bytes:
        return p.header[:p.sof_height_at] + p.header[p.sof_height_at + 2:]

    if any(masked(p) != masked(first) or p.sof_height_at != first.sof_height_at
           for p in bands[1:]):
        return None  # different tables or layout: the bands cannot share one header
    header = bytearray(first.header)
    struct.pack_into(">H", header, first.sof_height_at, height)
    out = [bytes(header[:first.sos_at]), struct.pack(">HHH", 0xFFDD, 4, interval),
           bytes(header[first.sos_at:])]
    for i, band in enumerate(bands):
        if i:
            out.append(bytes((0xFF, 0xD0 + (i - 1) % 8)))
        out.append(band.entropy)
    out.append(_EOI)
    return b"".join(out)


def encode_jpeg_bands(pixels: NDArray[np.uint8], *, quality: int, colorspace: str,
                      chroma: str, bands: int, executor: Executor | None) -> bytes:
    """Encode ``pixels`` (an (h, w, c) C-contiguous array) as one baseline JPEG, in up to
    ``bands`` pieces on ``executor``'s threads (the calling thread encodes the first).

    Falls back to one simplejpeg encode of the whole frame when there is no executor, the
    frame is small, it cannot be cut into bands, or the bands' headers differ.
    """
    height, width = pixels.shape[:2]

    def encode(part: NDArray[np.uint8]) -> bytes:
        return bytes(simplejpeg.encode_jpeg(part, quality=quality, colorspace=colorspace,
                                            colorsubsampling=chroma))

    rows = band_rows(width, height, bands, chroma) if executor is not None else None
    if rows is None or width * height < MIN_SPLIT_PIXELS or not pixels.flags.c_contiguous:
        return encode(pixels)
    assert executor is not None
    futures = [executor.submit(encode, pixels[rows[i]:rows[i + 1]])
               for i in range(1, len(rows) - 1)]
    parts = [encode(pixels[rows[0]:rows[1]]), *(f.result() for f in futures)]
    mcu_w, mcu_h = _MCU[chroma]
    interval = (rows[1] // mcu_h) * -(-width // mcu_w)
    joined = splice(parts, height, interval)
    if joined is None:
        log.debug("JPEG bands could not be spliced; encoding %dx%d in one piece", width, height)
        return encode(pixels)
    return joined
