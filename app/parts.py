"""The model client's and the screen capturer's configuration, built from settings.

One place, so `holodesk run`, the desktop app, doctor, calibrate and bench all talk to the
model and grab the screen exactly the same way (what a check or a measurement says is then
true of a run).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from app.settings import Settings
from control.capture import CaptureTarget, ExcludeRects, MssCapturer
from model.client import ClientConfig, ServedModel
from model.contracts import Codec, ContractKind
from model.coords import Convention

log = logging.getLogger(__name__)


@runtime_checkable
class Closeable(Protocol):
    """A part of a run that holds something until closed (an X connection, a file, the
    input devices); the session closes it as it closes (app/session.py)."""

    def close(self) -> None: ...


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


def run_codec(settings: Settings) -> Codec | None:
    """The contract a run speaks: the ``model_profile`` setting's (docs/models.md,
    docs/contract.md); None, holodesk's own dialect, while none is set."""
    if not settings.model_profile:
        return None
    from model.contracts import codec_for
    from model.profiles import profile_by_key

    return codec_for(profile_by_key(settings.model_profile).codec_config())


@dataclass(frozen=True)
class ContractChoice:
    """The contract a run speaks to the model it found, and what the person should hear of
    the choice ("" when nothing: a model holodesk knows)."""

    codec: Codec
    notice: str = ""


def auto_codec(entry: ServedModel) -> ContractChoice:
    """The contract for the model a server serves, when no profile is named: its profile's
    (docs/models.md), H's documented contract for every model holodesk knows, Holotron-12B
    included (the holo-nano tools, docs/contract.md); for a model no profile knows, H's
    documented contract with the hub's tool names, with a notice saying so and how to name
    a profile. ``model_profile = "legacy"`` keeps holodesk's own dialect."""
    from model.contracts import codec_for
    from model.profiles import find_profile

    match = find_profile(entry.name, entry.root)
    if match.notice:
        log.warning("%s", match.notice)
    return ContractChoice(codec_for(match.profile.codec_config()), match.notice or "")


def convention_notice(settings: Settings, codec: Codec | None) -> str:
    """What the person should know when the ``convention`` setting does not apply: H's
    contracts fix the coordinates ("" when it applies or is the one they fix)."""
    if run_convention(settings, codec) == settings.convention:
        return ""
    return (f"the convention setting ({settings.convention.value}) is not used: H's contract "
            "fixes points to 0-1000 of the screenshot (set the model profile to legacy for "
            "holodesk's own dialect, docs/contract.md)")


def run_convention(settings: Settings, codec: Codec | None) -> Convention:
    """The coordinates the model answers in: H's contracts fix them (integers 0-1000 of the
    image sent); holodesk's own dialect uses the ``convention`` setting."""
    if codec is None or codec.kind is ContractKind.LEGACY:
        return settings.convention
    return Convention.NORM1000


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
