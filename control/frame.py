"""A screenshot as holodesk keeps it: :class:`Frame` (encoded, with what maps the model's answer
back to the screen) and :data:`GrayFrame` (the settle detector's tiny grey picture).

control/capture.py makes them; control/settle_frames.py makes them ahead during a settle wait.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from model.coords import FrameGeometry

GrayFrame = NDArray[np.uint8]


@dataclass(frozen=True)
class Frame:
    """One encoded screenshot and everything needed to map the model's answer back."""

    data: bytes
    mime: str  # "image/jpeg" or "image/png"
    geometry: FrameGeometry
    captured_at: float  # time.monotonic() when the pixels were read
    capture_ms: float  # reading the pixels
    encode_ms: float  # downscaling + encoding
    #: The sent pixels before encoding, BGRX (h, w, 4), when the capturer kept them: the
    #: thumbnail is made from them (2 ms) instead of decoding the JPEG just encoded (7 ms).
    pixels: NDArray[np.uint8] | None = field(default=None, compare=False, repr=False)
    #: Made ahead with the frame (:func:`finished`), when it was made during a settle wait.
    thumb: bytes | None = field(default=None, compare=False, repr=False)
    small: GrayFrame | None = field(default=None, compare=False, repr=False)

    @property
    def width(self) -> int:
        return self.geometry.sent_width

    @property
    def height(self) -> int:
        return self.geometry.sent_height

    def data_url(self) -> str:
        """The frame as a ``data:`` URL, the form an OpenAI image_url content part takes."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"
