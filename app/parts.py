"""The model client's and the screen capturer's configuration, built from settings.

One place, so `holodesk run`, the desktop app, doctor, calibrate and bench all talk to the
model and grab the screen exactly the same way (what a check or a measurement says is then
true of a run).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from app.settings import Settings
from control.capture import CaptureTarget, ExcludeRects, MssCapturer
from model.client import ClientConfig


def client_config(settings: Settings, key: str | None, **changes: Any) -> ClientConfig:
    """How a run reaches the model; ``changes`` adjusts fields (e.g. ``temperature=0.0``)."""
    config = ClientConfig(
        base_url=settings.endpoint,
        api_key=key,
        model=settings.model,
        request_timeout=settings.request_timeout,
        temperature=settings.temperature,
        tls_fingerprint=settings.tls_fingerprint,
        plain_http_ok=settings.endpoint in settings.plain_http_ok,
    )
    return dataclasses.replace(config, **changes) if changes else config


def make_capturer(
    settings: Settings, *, exclude: ExcludeRects | None = None, display: str | None = None
) -> MssCapturer:
    """A capturer of the configured monitor, sending frames as a run does.

    ``exclude``: rectangles painted out of every frame (holodesk's own windows); ``display``:
    an explicit X display name instead of ``$DISPLAY``. Raises ValueError for a monitor
    setting that does not parse.
    """
    return MssCapturer(
        CaptureTarget.parse(settings.monitor),
        max_side=settings.max_side,
        image_format=settings.image_format,
        jpeg_quality=settings.jpeg_quality,
        exclude=exclude,
        display=display,
    )
