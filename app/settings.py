"""Typed settings, saved as TOML in ``config_dir()/settings.toml``, overridable per process.

Precedence, lowest first: the defaults below, ``settings.toml``, ``HOLODESK_<KEY>``
environment variables (e.g. ``HOLODESK_MAX_STEPS=50``; an empty variable counts as unset),
then command-line options via :meth:`Settings.with_overrides`. Every layer is validated on its
own, so an error names exactly where the bad value came from. A safety value (app/approval.py)
from the file or the environment applies only as approved, or stricter: both are files another
program can write; the command line's options are the person's own.

The API key is not a setting. ``holodesk config set api_key`` reads it without echo on a
terminal, or one line of stdin (the command refuses a key given on its command line, which
`ps` and the shell history would keep; an empty value forgets it), and stores it in the
keyring via :mod:`app.secrets`; no code path
writes it to the TOML file: a hand-written ``api_key`` line in the file is an error that does
not repeat its value.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import annotated_types
import tomli_w
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from app import paths
from app.approval import (
    SAFETY_KEYS,
    Approvals,
    ApprovalUnavailable,
    PendingChange,
    Record,
    RecordState,
    ValueState,
    judge,
    local_endpoint,
    no_keyring_fix,
    read_record,
    record_path,
    show_value,
    write_record,
    write_unsigned,
)
from app.secrets import (
    SecretsError,
    SecretStore,
    delete_api_key,
    lookup_api_key,
    store_api_key,
)
from app.toml_text import toml_data
from control.hotkeys import DEFAULT_STOP_HOTKEY, HotkeyError, validate_stop_hotkey
from control.policy import ConfirmMode
from model.coords import Convention
from model.endpoint import normalize_base_url
from model.problem import HolodeskError
from model.serving.launcher import DEFAULT_MODEL as DEFAULT_SERVE_MODEL
from model.tls import normalize_fingerprint

_log = logging.getLogger(__name__)

ENV_PREFIX = "HOLODESK_"
DEFAULT_ENDPOINT = "http://127.0.0.1:8000/v1"

# Names under which people (and the README) refer to the key; none of them is a setting.
API_KEY_NAMES = frozenset({"api_key", "apikey", "key"})

_REGION = re.compile(r"^(\d+)x(\d+)([+-]\d+)([+-]\d+)$")
_HEADER = (
    "# holodesk settings. Change them with `holodesk config set KEY VALUE` or by hand\n"
    "# (comments are not kept). Only values that differ from the defaults are listed.\n"
    "# The API key is never stored here: see `holodesk config show`.\n"
)


class SettingsError(HolodeskError, ValueError):
    """A settings file, environment variable or value is invalid; the message says which."""


#: Password managers: what they show must never reach the model, and nothing typed or clicked
#: there is the model's business.
NEVER_TOUCH = ("keepassxc", "org.keepassxc.keepassxc", "keepass", "keepass2", "bitwarden",
               "1password", "enpass", "seahorse", "org.gnome.seahorse.application",
               "kwalletmanager5", "proton pass", "nordpass", "dashlane", "lastpass")


def app_names(text: str) -> tuple[str, ...]:
    """The applications in "firefox, libreoffice-calc" as a command line or `config set`
    gives them (empty: none named)."""
    return tuple(dict.fromkeys(v for v in (p.strip() for p in text.split(",")) if v))


def app_list(value: object) -> object:
    """"firefox, libreoffice-calc" as a command line or `config set` gives it, or a list."""
    if isinstance(value, str):
        value = app_names(value)
    if isinstance(value, list | tuple):
        names = [str(v).strip() for v in value]
        if any(not n or any(c in n for c in "\n\t") for n in names):
            raise ValueError("an application name is empty or holds a line break")
        return tuple(dict.fromkeys(names))
    return value


def path_list(value: object) -> object:
    """"~/notes, /srv/papers" as a command line or `config set` gives it, or a list: full
    paths (``~`` allowed, expanded where they are used)."""
    if isinstance(value, str):
        value = [v for v in (p.strip() for p in value.split(",")) if v]
    if isinstance(value, list | tuple):
        names = [str(v).strip() for v in value]
        for name in names:
            if not name or any(c in name for c in "\n\t\0"):
                raise ValueError("a path is empty or holds a line break")
            if not os.path.isabs(os.path.expanduser(name)):
                raise ValueError(f"{name!r} is not a full path: start it with / or ~/")
        return tuple(dict.fromkeys(names))
    return value


#: Where the person's own choices for one run come from (their command line or dialog).
COMMAND_LINE = "command line"


@dataclass(frozen=True)
class SettingsOrigin:
    """Where a :class:`Settings`' values came from and what reading them found: kept beside
    the values (two settings with equal values are equal, wherever they came from)."""

    #: Where each non-default value came from ("settings.toml", "$HOLODESK_X", "command line").
    sources: Mapping[str, str] = field(default_factory=dict)
    #: Keys whose value came from the environment or an override: never saved to the file.
    transient: frozenset[str] = frozenset()
    #: What the person should be told about the file: a stored value replaced by its default.
    notes: tuple[str, ...] = ()
    #: Safety values the file holds that the person has not approved (not in effect: the
    #: approved ones are), and what reading the record of approved values found
    #: (app/approval.py).
    pending: tuple[PendingChange, ...] = ()
    approval: RecordState = RecordState.MISSING
    approval_note: str = ""


class Settings(BaseModel):
    """Everything a person can configure, validated.

    Immutable: derive a changed copy with :meth:`with_overrides` (a run's own values:
    :meth:`for_run`); where the values came from is :attr:`origin`, given with
    :meth:`with_origin`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    endpoint: str = Field(
        default=DEFAULT_ENDPOINT,
        description="the model server's OpenAI-compatible base URL (/v1 is added when missing)",
    )
    model: str | None = Field(
        default=None, description="the served model name (empty: read it from /v1/models)"
    )
    tls_fingerprint: str | None = Field(
        default=None,
        description="the SHA-256 fingerprint of an https server's certificate to trust (as "
        "`holodesk serve --tls` prints it); empty: trust the system's certificate authorities",
    )
    plain_http_ok: tuple[str, ...] = Field(
        default=(),
        description="endpoints on other machines you agreed to reach over plain http, comma-"
        "separated (screenshots and the API key cross the network unencrypted; https is safer)",
    )
    convention: Convention = Field(
        default=Convention.NORM1000,
        description="how the model gives points in holodesk's own (legacy) contract: norm1000 "
        "(0-1000), norm1 (0-1), pixels; H's contract always uses 0-1000",
    )
    confirm: ConfirmMode = Field(
        default=ConfirmMode.RISKY,
        description="which actions to confirm first: always, risky or never",
    )
    monitor: str = Field(
        default="1",
        description="monitor index (1 = first, 0 = all), 'mouse', 'primary', or a region WxH+X+Y",
    )
    max_steps: int = Field(default=30, ge=1, le=500, description="end a run after this many steps")
    max_seconds: float = Field(
        default=900.0, gt=0, le=86_400, description="end a run after this many seconds"
    )
    image_format: Literal["jpeg", "png"] = Field(
        default="jpeg", description="how screenshots are encoded (PNG costs 10-20x more time)"
    )
    jpeg_quality: int = Field(
        default=90, ge=50, le=100, description="JPEG quality (90 keeps text as legible as PNG)"
    )
    # Lower bound: at or below 1280x720 the processor drops a 16:9 frame to a 2x1 tile grid and
    # small text becomes illegible (docs/holotron.md); 1366 is the smallest long side that
    # keeps the 4x2 grid. Upper bound: the processor stretches every image to at most 12 tiles of
    # 512 px, and the widest grid a real monitor gets is 5x2 (2560x1024, a 21:9 ultrawide);
    # anything larger only costs bytes and encode time.
    max_side: int = Field(
        default=2048, ge=1366, le=2560, description="longest side of the image sent, in pixels"
    )
    thinking: bool = Field(default=False, description="let the model reason before answering")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="sampling temperature")
    request_timeout: float = Field(
        default=120.0, gt=0, le=3600, description="seconds to wait for one model answer"
    )
    # 0 by default: each kind of action has its own reaction time (control/settle.py); a floor
    # here holds every action, a mouse move or a wait too, at least this long.
    settle_min: float = Field(
        default=0.0, ge=0.0, le=10.0,
        description="seconds to wait at least after an action (0: only until the screen is still)",
    )
    settle_max: float = Field(
        default=3.0, ge=0.0, le=60.0, description="seconds to wait at most for the screen to settle"
    )
    loop_limit: int = Field(
        default=3,
        ge=2,
        le=50,
        description="end a run when the same action on an unchanged screen comes this many times",
    )
    stop_hotkey: str = Field(
        default=DEFAULT_STOP_HOTKEY,
        description="the global emergency-stop hotkey (holodesk never presses it itself)",
    )
    never_touch: tuple[str, ...] = Field(
        default=NEVER_TOUCH,
        description="applications holodesk never acts in and paints out of screenshots "
        "(window class or program names, comma-separated)",
    )
    only_in: tuple[str, ...] = Field(
        default=(),
        description="when set, the only applications a run may act in (comma-separated; "
        "empty: any)",
    )
    protected_paths: tuple[str, ...] = Field(
        default=(),
        description="files and folders a run must never change, besides the built-in set "
        "(comma-separated; ~ allowed)",
    )
    retention_days: int = Field(
        default=30,
        ge=0,
        le=36_500,
        description="delete runs (and their screenshots) older than this many days; 0 keeps all",
    )
    log_screenshots: bool = Field(
        default=True,
        description="keep each step's full screenshot in the action log "
        "(off: a small thumbnail and the text only)",
    )
    # `holodesk serve` (and the tray's Start server). The port is not a setting of its own by
    # default: a server on another port than the endpoint's would be one holodesk never talks to.
    serve_model: str = Field(
        default=DEFAULT_SERVE_MODEL,
        description="what `holodesk serve` loads: a Hugging Face model name or a local folder",
    )
    model_profile: str = Field(
        default="",
        description="the model's profile: its contract, tools, reasoning, sampling and serve "
        "flags (docs/models.md; empty: found from the served model's name)",
    )
    serve_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="port for `holodesk serve` (empty: the endpoint's port when it is local, "
        "else 8000)",
    )
    serve_gpu_memory: float = Field(
        default=0.9,
        ge=0.1,
        le=0.98,
        description="share of GPU memory vLLM may take (--gpu-memory-utilization)",
    )
    # 16384: the least a step with three screenshots needs (app.status.MIN_CONTEXT); 131072: the
    # base model's longest context.
    serve_max_model_len: int = Field(
        default=32768,
        ge=16384,
        le=131072,
        description="context length vLLM serves, in tokens (--max-model-len)",
    )
    # At least 3: every step sends the last three screenshots (docs/holotron.md).
    serve_image_limit: int = Field(
        default=3,
        ge=3,
        le=16,
        description="images per request vLLM accepts (--limit-mm-per-prompt; a step sends 3)",
    )
    # Empty: the sessions whose caches fit the GPU (model/serving/capacity.py, `holodesk serve
    # --plan`); 1024: vLLM's own largest default.
    serve_max_num_seqs: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="most sessions vLLM runs at once (--max-num-seqs; empty: as many as fit "
        "the GPU's memory, from `holodesk serve --plan`)",
    )
    serve_tls: bool = Field(
        default=False,
        description="`holodesk serve` speaks https (a self-signed certificate is made when no "
        "files are set; its fingerprint is printed for the clients to pin)",
    )
    serve_ssl_keyfile: str | None = Field(
        default=None, description="the TLS private key for `holodesk serve --tls` (PEM)"
    )
    serve_ssl_certfile: str | None = Field(
        default=None, description="the TLS certificate for `holodesk serve --tls` (PEM)"
    )

    _origin: SettingsOrigin = PrivateAttr(default_factory=SettingsOrigin)

    @field_validator("endpoint", mode="before")
    @classmethod
    def _normalize_endpoint(cls, value: object) -> object:
        return normalize_endpoint(value) if isinstance(value, str) else value

    @field_validator("model", mode="before")
    @classmethod
    def _empty_model_is_none(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value

    @field_validator("tls_fingerprint", mode="before")
    @classmethod
    def _normalize_fingerprint(cls, value: object) -> object:
        if isinstance(value, str):
            return normalize_fingerprint(value) if value.strip() else None
        return value

    @field_validator("serve_ssl_keyfile", "serve_ssl_certfile", mode="before")
    @classmethod
    def _empty_path_is_none(cls, value: object) -> object:
        if isinstance(value, str):
            return str(Path(value.strip()).expanduser()) if value.strip() else None
        return value

    @field_validator("plain_http_ok", mode="before")
    @classmethod
    def _normalize_plain_http_ok(cls, value: object) -> object:
        # From `config set` or the environment: one string, endpoints separated by commas.
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        out: list[object] = []
        for item in items:
            if isinstance(item, str):
                if not item.strip():
                    continue
                item = normalize_endpoint(item)
            if item not in out:
                out.append(item)
        return tuple(out)

    @field_validator("serve_model", mode="before")
    @classmethod
    def _check_serve_model(cls, value: object) -> object:
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("must name a model (e.g. Hcompany/Holotron-12B) or a folder")
            return value.strip()
        return value

    @field_validator("model_profile", mode="before")
    @classmethod
    def _check_model_profile(cls, value: object) -> object:
        if isinstance(value, str) and value.strip():
            from model.profiles import UnknownProfile, profile_by_key, profile_keys

            try:
                return profile_by_key(value).key
            except UnknownProfile:
                raise ValueError(f"is not a model profile (one of: {', '.join(profile_keys())}; "
                                 "or empty)") from None
        return value.strip() if isinstance(value, str) else value

    @field_validator("serve_port", "serve_max_num_seqs", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        # From the file, the environment or `config set`: empty means "worked out" (the port
        # from the endpoint, the sessions from the GPU's memory).
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("monitor", mode="before")
    @classmethod
    def _check_monitor(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # TOML `monitor = 2` means the same as "2"
        return normalize_monitor(value) if isinstance(value, str) else value

    @field_validator("stop_hotkey", mode="before")
    @classmethod
    def _check_stop_hotkey(cls, value: object) -> object:
        # HotkeyError is a ValueError: pydantic reports its message as the problem.
        return validate_stop_hotkey(value) if isinstance(value, str) else value

    @field_validator("never_touch", "only_in", mode="before")
    @classmethod
    def _check_app_lists(cls, value: object) -> object:
        return app_list(value)

    @field_validator("protected_paths", mode="before")
    @classmethod
    def _check_path_list(cls, value: object) -> object:
        return path_list(value)

    @model_validator(mode="after")
    def _check_settle(self) -> Settings:
        if self.settle_min > self.settle_max:
            raise ValueError(
                f"settle_min ({self.settle_min:g}) must not exceed settle_max ({self.settle_max:g})"
            )
        return self

    def __eq__(self, other: object) -> bool:
        # Equal values are equal settings, wherever they came from (pydantic would compare the
        # private source map too).
        if not isinstance(other, Settings):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self.model_dump().items())))

    @property
    def origin(self) -> SettingsOrigin:
        """Where these values came from and what reading them found."""
        return self._origin

    def with_origin(self, origin: SettingsOrigin) -> Settings:
        """These values, said to come from ``origin``."""
        copy = self.model_copy()
        copy._origin = origin
        return copy

    @property
    def sources(self) -> Mapping[str, str]:
        """Where each value not at its default came from (absent: default or set in code)."""
        return dict(self._origin.sources)

    @property
    def notes(self) -> tuple[str, ...]:
        """Notices about the settings file (already logged as warnings): a stored value that is
        refused now and was replaced by its default. The CLI prints warnings; the desktop app
        shows these."""
        return self._origin.notes

    @property
    def pending(self) -> tuple[PendingChange, ...]:
        """The safety values changed in the file outside holodesk and not approved: each
        holds the approved value, which is the one in effect (app/approval.py)."""
        return self._origin.pending

    @property
    def approval_state(self) -> RecordState:
        """What reading the record of approved safety values found."""
        return self._origin.approval

    @property
    def approval_note(self) -> str:
        """What the person should know about that record ("" when nothing): not trusted,
        or no keyring to check it."""
        return self._origin.approval_note

    def with_overrides(
        self, overrides: Mapping[str, object], source: str = COMMAND_LINE
    ) -> Settings:
        """A copy with ``overrides`` applied and validated; errors name ``source`` and the key.

        Overridden values count as transient: :func:`save_settings` does not persist them.
        """
        merged = {**_field_values(self), **overrides}
        origin = self._origin
        return _validate(merged, lambda _name: source, replace(
            origin, sources={**origin.sources, **{name: source for name in overrides}},
            transient=origin.transient | set(overrides)))

    def for_run(self, values: RunValues) -> Settings:
        """A copy with one run's own ``values`` on top (app/run_request.py), never saved;
        :class:`SettingsError` names where a bad value came from."""
        result = self
        for source, given in values.by_source():
            result = result.with_overrides(given, source)
        return result


@dataclass(frozen=True)
class RunValues:
    """The values one run gets over the settings (a command line's options, the task window's
    choices, an automation's): a field left None keeps the setting. Never saved.

    ``sources`` says where a value came from, for the person (an error about it names it, and
    the run's :attr:`Settings.sources` keep it): ``(name, source)`` pairs; a value not listed
    came from :data:`COMMAND_LINE`, the person's own choice for this run.
    """

    confirm: ConfirmMode | None = None
    monitor: str | None = None
    only_in: tuple[str, ...] | None = None
    max_steps: int | None = None
    max_seconds: float | None = None
    endpoint: str | None = None
    model: str | None = None
    convention: Convention | None = None
    model_profile: str | None = None
    sources: tuple[tuple[str, str], ...] = ()

    def given(self) -> dict[str, Any]:
        """The values set, by setting name."""
        return {name: value for name in RunValues.names()
                if (value := getattr(self, name)) is not None}

    def source(self, name: str) -> str:
        """Where the value of ``name`` came from."""
        return dict(self.sources).get(name, COMMAND_LINE)

    def by_source(self) -> list[tuple[str, dict[str, object]]]:
        """The values set, grouped by where they came from."""
        out: dict[str, dict[str, object]] = {}
        for name, value in self.given().items():
            out.setdefault(self.source(name), {})[name] = value
        return list(out.items())

    def then(self, top: RunValues) -> RunValues:
        """These values with ``top``'s on top: a value ``top`` sets wins, with its source
        (the person's own choice over an automation's)."""
        ours, theirs = self.given(), top.given()
        return replace(
            self, **theirs,
            sources=tuple((name, top.source(name) if name in theirs else self.source(name))
                          for name in RunValues.names() if name in ours or name in theirs),
        )

    @staticmethod
    def names() -> tuple[str, ...]:
        """The settings a run may get a value of its own for."""
        return tuple(f.name for f in fields(RunValues) if f.name != "sources")


def normalize_endpoint(value: str) -> str:
    """``value`` as a base URL ending in ``/v1`` without a trailing slash; ValueError if unusable.

    A pasted ``.../v1/chat/completions`` or ``.../v1/models`` is cut back to ``.../v1``. Credentials
    in the URL are refused: they would end up in settings.toml and in the action log.
    """
    text = value.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as exc:
        raise ValueError(f"is not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("must start with http:// or https://")
    if not parts.hostname:
        raise ValueError("has no host name")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "must not contain credentials; store the API key with `holodesk config set api_key -`"
        )
    if parts.query or parts.fragment:
        raise ValueError("must not have a query string or fragment")
    return normalize_base_url(text)


def normalize_monitor(value: str) -> str:
    """A monitor spec in canonical form (``"2"``, ``"mouse"``, ``"1280x800+0+0"``), or ValueError.

    The grammar is :meth:`control.capture.CaptureTarget.parse`'s, so a value accepted here is
    one the capturer accepts: indexes as in mss (1 = first monitor, 0 = all of them),
    ``mouse``, ``primary``, or a region ``WxH+X+Y`` whose offsets may be negative (a monitor
    left of the primary). The common forms are checked here without importing the capture
    module (numpy, Pillow), which ``config show`` does not need.
    """
    text = value.strip().lower()
    if text == "mouse" or text.isdigit():
        return str(int(text)) if text.isdigit() else text
    match = _REGION.match(text)
    if match is not None:
        width, height, x, y = (int(g) for g in match.groups())
        if width < 1 or height < 1:
            raise ValueError("region width and height must be at least 1")
        return f"{width}x{height}{x:+d}{y:+d}"
    from control.capture import CaptureTarget

    try:
        return str(CaptureTarget.parse(text))
    except ValueError:
        raise ValueError(
            "must be a monitor index (1 = first, 0 = all), 'mouse', 'primary', or a region "
            "WxH+X+Y such as 1280x800+0+0"
        ) from None


def env_var(key: str) -> str:
    """The environment variable that overrides ``key``."""
    return ENV_PREFIX + key.upper()


def setting_names() -> list[str]:
    """Every valid settings key, in declaration order."""
    return list(Settings.model_fields)


def load_with_overrides(overrides: Mapping[str, object]) -> Settings:
    """The saved settings with a command line's options on top; a None option was not given.

    Raises :class:`SettingsError` naming the option's setting when a value is invalid.
    """
    settings = load_settings()
    given = {name: value for name, value in overrides.items() if value is not None}
    return settings.with_overrides(given) if given else settings


def load_settings(path: Path | None = None, environ: Mapping[str, str] | None = None, *,
                  store: SecretStore | None = None) -> Settings:
    """The settings in effect: defaults, then the file (missing = defaults), then environment.

    A safety value (:data:`app.approval.SAFETY_KEYS`) that the file changed outside holodesk
    and that is not stricter than the approved one is not used: the approved value is, and
    :attr:`Settings.pending` lists the change. ``store`` holds the key of the record of approved
    values (default: the system keyring). The environment is judged the same way: on a desktop
    it is made from files any program can write (``~/.config/environment.d``, ``~/.profile``),
    so a safety value there that asks less than the approved one waits for the person's
    approval too (:func:`approve_for_this_process`); only the command line's options
    (:meth:`Settings.with_overrides`) are the person's one-off.

    Raises :class:`SettingsError` naming the file or variable, the key and the bad value.
    """
    path = paths.settings_path() if path is None else path
    env = os.environ if environ is None else environ
    file_values, notes = _read_file_noting(path)
    for note in notes:
        _log.warning("%s", note)
    label = str(path)
    from_file = _validate(file_values, lambda _name: label)
    approvals = read_record(record_path(path.parent), store)
    defaults = _field_values(Settings())
    approved = {key: _approved_value(key, approvals, defaults) for key in _safety_keys()}
    # No keyring to tell holodesk's own write from another program's: an endpoint on this
    # machine or the person's network applies as set, one on the internet does not.
    lenient = not approvals.keyring
    pending = list(_pending_changes(from_file, approved, lenient=lenient))
    sources = {name: path.name for name in file_values}
    used = dict(file_values)
    for change in pending:
        used[change.key] = change.approved
        sources[change.key] = f"approved; the change in {path.name} is not applied"
        _log.info("not applied (changed outside holodesk, not approved): %s",
                  change.describe())
    if approvals.problem:
        _warn_once(approvals.problem)
    env_values = {
        name: env[var]
        for name in Settings.model_fields
        if (var := env_var(name)) in env and env[var]
    }
    if env_values:
        with_env = _field_values(_validate(
            {**used, **env_values},
            lambda name: "$" + env_var(name) if name in env_values else label))
        for key in _safety_keys():
            if key in env_values and not _env_allowed(key, approved[key], with_env[key],
                                                      lenient=lenient):
                change = PendingChange(key, approved[key], with_env[key],
                                       source="$" + env_var(key))
                pending.append(change)
                del env_values[key]
                _log.info("not applied (from the environment, not approved): %s",
                          change.describe())
    sources.update({name: "$" + env_var(name) for name in env_values})
    origin = SettingsOrigin(
        sources=sources,
        # The approved value in effect is not the file's: a save keeps the file's as it is.
        transient=frozenset(env_values) | {c.key for c in pending if not c.source},
        notes=notes, pending=tuple(pending), approval=approvals.state,
        approval_note=approvals.problem)
    return _validate({**used, **env_values},
                     lambda name: "$" + env_var(name) if name in env_values else label, origin)


# Safety values from the environment the person approved while this process runs (their answer
# to the question): remembered in memory only, never written anywhere.
_env_approved: dict[str, Any] = {}


def approve_for_this_process(change: PendingChange) -> None:
    """The person approved ``change``, a value from the environment: it applies in this
    process from now on (its next reads of the settings), and nowhere else."""
    _env_approved[change.key] = change.in_file
    _log.info("approved by you for this process: %s = %s from %s", change.key,
              show_value(change.in_file), change.source)


def _env_allowed(key: str, approved: Any, value: Any, *, lenient: bool = False) -> bool:
    """Whether the environment's ``value`` of safety key ``key`` applies: the approved one or
    stricter (:func:`_applies`), or approved by the person for this process."""
    if _applies(key, approved, value, lenient=lenient):
        return True
    return key in _env_approved and judge(key, _env_approved[key], value) is \
        ValueState.APPROVED


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write ``settings`` to the file atomically (temp file + rename); returns the path.

    Only values that differ from the defaults are written, so a later default change reaches
    people who never touched that key. Values that came from the environment or the command line
    are transient: for those keys the file keeps what it had.
    """
    path = paths.settings_path() if path is None else path
    transient = settings.origin.transient
    previous = _read_file(path) if transient else {}
    defaults = _field_values(Settings())
    current = _field_values(settings)
    out: dict[str, Any] = {}
    for name in Settings.model_fields:
        if name in transient:
            if name in previous:
                out[name] = previous[name]
        elif current[name] is not None and current[name] != defaults[name]:
            out[name] = current[name]
    paths.write_atomic(path, _HEADER + tomli_w.dumps(out))
    return path


def set_value(
    key: str,
    value: str,
    *,
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    store: SecretStore | None = None,
    read_secret: Callable[[], str] | None = None,
) -> Settings:
    """``holodesk config set KEY VALUE``: validate, save, and return the settings in effect.

    ``key`` accepts dashes for underscores (``max-steps``). ``api_key`` goes to the keyring for
    the endpoint in effect, never to the file: ``-`` reads it with ``read_secret`` (default: a
    hidden prompt on a terminal, else one line of stdin), an empty value forgets it.
    """
    path = paths.settings_path() if path is None else path
    name = key.strip().lower().replace("-", "_")
    if name in API_KEY_NAMES:
        return _set_api_key(value, path, environ, store, read_secret)
    if name not in Settings.model_fields:
        raise SettingsError(f"unknown setting {key!r}; valid keys: {', '.join(setting_names())}")
    file_values, notes = _read_file_noting(path)
    if name != "stop_hotkey":
        # Saving drops the refused line from the file: the last time it can be told.
        for note in notes:
            _log.warning("%s", note)
    merged = {**file_values, name: value}
    validated = _validate(merged, lambda n: "config set" if n == name else str(path),
                          _from_file(merged, path))
    _remember(validated, path, {name}, store)
    save_settings(validated, path)
    effective = load_settings(path, environ, store=store)
    if effective.sources.get(name, "").startswith("$"):
        _log.warning("%s was saved, but %s in the environment overrides it", name, env_var(name))
    return effective


def validate_values(
    values: Mapping[str, object], *, path: Path | None = None, source: str = "settings dialog"
) -> Settings:
    """The file's settings with ``values`` applied, validated; nothing is written.

    Errors (:class:`SettingsError`) name ``source`` and the key for a bad value in ``values``.
    """
    path = paths.settings_path() if path is None else path
    bad = sorted(API_KEY_NAMES & set(values))
    if bad:
        raise SettingsError(f"{source}: {bad[0]} is not a setting; the API key goes to the keyring")
    file_values = _read_file(path)
    merged = {**file_values, **values}
    validated = _validate(merged, lambda n: source if n in values else str(path),
                          _from_file(merged, path))
    return validated


def set_values(
    values: Mapping[str, object],
    *,
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    source: str = "settings dialog",
    store: SecretStore | None = None,
) -> Settings:
    """Validate ``values`` together and save them (all or none); returns the settings in effect.

    Like :func:`set_value` for several keys at once (the settings dialog's Save): the safety
    values among them are approved as given, the others are left as they were approved.
    """
    path = paths.settings_path() if path is None else path
    validated = validate_values(values, path=path, source=source)
    _remember(validated, path, set(values), store)
    save_settings(validated, path)
    return load_settings(path, environ, store=store)


def unset_value(key: str, *, path: Path | None = None,
                store: SecretStore | None = None) -> Settings:
    """Return ``key`` to its default by removing it from the file; returns the file's settings."""
    path = paths.settings_path() if path is None else path
    name = setting_name(key)
    file_values, notes = _read_file_noting(path)
    if name != "stop_hotkey":
        # Saving drops the refused line from the file: the last time it can be told.
        for note in notes:
            _log.warning("%s", note)
    file_values.pop(name, None)
    validated = _validate(file_values, lambda _n: str(path), _from_file(file_values, path))
    _remember(validated, path, {name}, store)
    save_settings(validated, path)
    return validated


def approve_changes(changes: Iterable[PendingChange], *, path: Path | None = None,
                    store: SecretStore | None = None) -> list[PendingChange]:
    """Approve the settings' ``changes`` the person was shown (an automation's are not these),
    each only while the file still holds the value shown; the ones approved. A value from the
    environment is approved for this process only (:func:`approve_for_this_process`).

    :class:`app.approval.ApprovalUnavailable` when there is no keyring to remember them.
    """
    path = paths.settings_path() if path is None else path
    changes = [c for c in changes if c.automation is None]
    from_env = [c for c in changes if c.source]
    for change in from_env:
        approve_for_this_process(change)
    in_file = [c for c in changes if not c.source]
    if from_env and not in_file:
        return from_env
    file_values, _notes = _read_file_noting(path)
    validated = _validate(file_values, lambda _n: str(path))
    current = _field_values(validated)
    approved = [c for c in in_file if c.key in current and current[c.key] == c.in_file]
    _remember(validated, path, {c.key for c in approved}, store, rewrite=True, strict=True)
    return approved + from_env


def keep_approved(changes: Iterable[PendingChange], *, path: Path | None = None,
                  store: SecretStore | None = None) -> list[PendingChange]:
    """Write the approved value back into the file for each of the settings' ``changes`` the
    person refused (while the file still holds the value shown), so the question is not asked
    again; the refused values go to the log only. The ones written back."""
    path = paths.settings_path() if path is None else path
    file_values, _notes = _read_file_noting(path)
    current = _field_values(_validate(file_values, lambda _n: str(path)))
    defaults = _field_values(Settings())
    for change in changes:
        if change.automation is None and change.source:
            _log.info("refused by you, not applied: %s = %s from %s (the approved %s stays; "
                      "it is asked again while the environment sets it: remove it where it is "
                      "set, ~/.config/environment.d or a shell's start-up file)", change.key,
                      show_value(change.in_file), change.source, show_value(change.approved))
    kept = [c for c in changes if c.automation is None and not c.source and c.key in current
            and current[c.key] == c.in_file]
    for change in kept:
        _log.info("refused by you, not applied: %s = %s in %s (the approved %s stays)",
                  change.key, show_value(change.in_file), path, show_value(change.approved))
        if change.approved == defaults[change.key]:
            file_values.pop(change.key, None)
        else:
            file_values[change.key] = change.approved
    validated = _validate(file_values, lambda _n: str(path), _from_file(file_values, path))
    _remember(validated, path, {c.key for c in kept}, store)
    save_settings(validated, path)
    return kept


def setting_name(key: str) -> str:
    """``key`` as a settings name (dashes for underscores accepted); SettingsError when there
    is no such setting."""
    name = key.strip().lower().replace("-", "_")
    if name not in Settings.model_fields:
        raise SettingsError(f"unknown setting {key!r}; valid keys: {', '.join(setting_names())}")
    return name


def value_text(settings: Settings, key: str) -> str:
    """``holodesk config get KEY``: the value in effect as `config set` takes it (a list
    comma-separated, true/false, empty when unset); SettingsError for an unknown key."""
    value = _field_values(settings)[setting_name(key)]
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def describe_settings(
    settings: Settings,
    *,
    store: SecretStore | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The text of ``holodesk config show``: each key, its value and where it came from.

    Also says where the API key comes from (never the key), and where the files are.
    """
    path = paths.settings_path()
    lines = [f"settings file: {path}" + ("" if path.exists() else " (not created yet)"), ""]
    width = max(len(name) for name in Settings.model_fields)
    values = _field_values(settings)
    pending = {c.key: c for c in settings.pending}
    for name in Settings.model_fields:
        shown = _display(name, values[name])
        source = settings.sources.get(name, "default")
        lines.append(f"  {name:<{width}} = {shown:<28} ({source})")
        if name in pending:
            change = pending[name]
            lines.append(f"  {'':<{width}}   not applied: {change.source or path.name} says "
                         f"{show_value(change.in_file)} (holodesk config approve)")
    if settings.approval_note:
        lines += ["", f"note: {settings.approval_note}"]
    key = lookup_api_key(settings.endpoint, store, environ)
    lines += [
        "",
        f"API key for {settings.endpoint}: {key.describe()}",
        f"action log: {paths.db_path()}",
        f"log file: {paths.log_path()}",
    ]
    return "\n".join(lines)


# --- internals ---------------------------------------------------------------------------


def _safety_keys() -> list[str]:
    return [key for key in SAFETY_KEYS if key in Settings.model_fields]


def _approved_value(key: str, approvals: Approvals, defaults: Mapping[str, Any]) -> Any:
    """The approved value of ``key``: the record's (or the anchor's) when it is still valid (a
    rule may have become stricter since), else the default. A record that cannot be checked
    counts only where it asks at least as much as the default (``floor_only``)."""
    if key not in approvals.record.settings:
        return defaults[key]
    try:
        value = _field_values(Settings.model_validate({key: approvals.setting(key, None)}))[key]
    except ValidationError:
        return defaults[key]
    if approvals.floor_only and judge(key, defaults[key], value) is ValueState.NEEDS_APPROVAL:
        return defaults[key]
    return value


def _applies(key: str, approved: Any, value: Any, *, lenient: bool) -> bool:
    """Whether ``value`` of safety key ``key`` applies next to the ``approved`` one: equal or
    stricter; with ``lenient`` (no keyring) an endpoint on this machine or the network too."""
    if judge(key, approved, value) is not ValueState.NEEDS_APPROVAL:
        return True
    return lenient and key == "endpoint" and isinstance(value, str) and local_endpoint(value)


def _pending_changes(from_file: Settings, approved: Mapping[str, Any], *,
                     lenient: bool = False) -> tuple[PendingChange, ...]:
    current = _field_values(from_file)
    return tuple(PendingChange(key, approved[key], current[key]) for key in _safety_keys()
                 if not _applies(key, approved[key], current[key], lenient=lenient))


def _remember(validated: Settings, path: Path, approve: set[str], store: SecretStore | None,
              *, rewrite: bool = False, strict: bool = False) -> None:
    """Update the record of approved safety values for a write of ``validated`` (the file's
    values after a change the person made with holodesk), before the file is written.

    The safety keys in ``approve`` are approved as ``validated`` has them; every other keeps its
    approved value, or the stricter one in effect. Without a keyring only a change that loosens
    nothing may be written (SettingsError otherwise, nothing written), and the record is kept
    unsigned (a floor, app/approval.py); ``strict``: not even that (an approval that cannot be
    remembered is no approval). ``rewrite``: sign the record again even when nothing in it
    changes (a record not trusted becomes what is in effect).
    """
    keys = _safety_keys()
    approve = approve & set(keys)
    approvals = read_record(record_path(path.parent), store)
    defaults = _field_values(Settings())
    current = _field_values(validated)
    values: dict[str, Any] = {}
    looser: list[str] = []
    for key in keys:
        approved = _approved_value(key, approvals, defaults)
        state = judge(key, approved, current[key])
        if key in approve:
            values[key] = current[key]
            if state is ValueState.NEEDS_APPROVAL:
                looser.append(key)
        else:
            values[key] = approved if state is ValueState.NEEDS_APPROVAL else current[key]
    valid = approvals.state is RecordState.VALID
    if valid and dict(approvals.record.settings) == values and not rewrite:
        return
    if not valid and not approve and not rewrite:
        return  # nothing approved here: a record is made by the first approval
    kept = approvals.record if valid else Record()
    try:
        write_record(record_path(path.parent), Record(values, kept.automations, kept.steps),
                     store)
    except ApprovalUnavailable as e:
        # Without a keyring an endpoint on this machine or the network applies as set.
        looser = [k for k in looser if k != "endpoint" or not local_endpoint(current[k])]
        if looser or strict:
            raise SettingsError(
                f"{', '.join(looser or sorted(approve)) or 'the change'} was not changed: "
                f"{e.message}", no_keyring_fix(looser[0] if looser else None)) from None
        floor = Record(values, approvals.record.automations)
        if write_unsigned(record_path(path.parent), floor):
            _log.info("the safety settings were saved without a keyring: the values that ask "
                      "more than the defaults are kept unsigned (%s)", e.message)
        else:
            _log.info("the safety settings were saved without a record of approval: %s",
                      e.message)


_told: set[str] = set()


def _warn_once(text: str) -> None:
    # Settings are read many times per command: a notice about the record is logged once.
    if text not in _told:
        _told.add(text)
        _log.warning("%s", text)



def _field_values(settings: Settings) -> dict[str, Any]:
    return settings.model_dump(mode="json")


def _display(name: str, value: Any) -> str:
    if name == "model" and value is None:
        return "(from the server)"
    if name == "serve_port" and value is None:
        return "(from the endpoint)"
    if name == "serve_max_num_seqs" and value is None:
        return "(as many as fit the GPU)"
    if name == "tls_fingerprint" and value is None:
        return "(none: the system's CAs)"
    if name in ("serve_ssl_keyfile", "serve_ssl_certfile") and value is None:
        return "(made by holodesk)"
    if name == "plain_http_ok" and isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _read_file(path: Path) -> dict[str, Any]:
    return _read_file_noting(path)[0]


def _read_file_noting(path: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The file's values, and notices about values left out (the caller tells them)."""
    data = _read_toml(path)
    note = _refused_stop_hotkey(data, path)
    return data, (note,) if note else ()


def _refused_stop_hotkey(data: dict[str, Any], path: Path) -> str | None:
    """Drop a stored stop hotkey the rule refuses (from ``data``); what to tell, or None.

    The rule may be stricter than the one the value was saved under: the stop hotkey falls back
    to the default instead of making every command that reads the settings fail.
    """
    value = data.get("stop_hotkey")
    if not isinstance(value, str):
        return None
    try:
        validate_stop_hotkey(value)
    except HotkeyError as exc:
        del data["stop_hotkey"]
        return (f"{path}: stop_hotkey {exc}; the default {DEFAULT_STOP_HOTKEY} is used "
                "instead until another is set (holodesk config set stop_hotkey KEYS)")
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = paths.read_limited(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    data = toml_data(raw, str(path), SettingsError)
    if found := sorted(API_KEY_NAMES & data.keys()):
        # Never echo the value: it is probably a real key.
        raise SettingsError(
            f"{path}: {found[0]} must not be in the settings file; remove that line and "
            "store the key with `holodesk config set api_key -` (it goes to the keyring)"
        )
    return data


def _validate(values: Mapping[str, Any], origin: Callable[[str], str],
              came_from: SettingsOrigin | None = None) -> Settings:
    """Validate ``values`` into Settings, turning pydantic errors into one readable message.

    ``origin(key)`` names where a key's value came from (a file path, ``$VAR``, ...), for the
    message; ``came_from`` is what the settings keep of it (:attr:`Settings.origin`).
    """
    try:
        settings = Settings.model_validate(dict(values))
    except ValidationError as exc:
        messages = [_explain(err, values, origin) for err in exc.errors()]
        raise SettingsError("\n".join(messages)) from None
    return settings.with_origin(came_from) if came_from is not None else settings


def _from_file(values: Mapping[str, Any], path: Path) -> SettingsOrigin:
    """The origin of ``values`` all read from (or about to be written to) the file ``path``."""
    return SettingsOrigin(sources={name: path.name for name in values})


def _explain(err: ErrorDetails, values: Mapping[str, Any], origin: Callable[[str], str]) -> str:
    loc = err["loc"]
    name = str(loc[0]) if loc else ""
    kind = err["type"]
    if not name:  # a model-level check such as settle_min <= settle_max
        involved = sorted({origin(n) for n in ("settle_min", "settle_max") if n in values})
        where = ", ".join(involved) or "settings"
        return f"{where}: {_value_error_text(err)}"
    where = origin(name)
    if kind == "extra_forbidden":
        return f"{where}: {name!r} is not a setting; valid keys: {', '.join(setting_names())}"
    shown = _show_value(name, err.get("input"))
    return f"{where}: {name} = {shown} {_problem(name, err)}"


def _problem(name: str, err: ErrorDetails) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "is not a valid integer"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return "is not a valid number"
    if kind in ("bool_parsing", "bool_type"):
        return "is not a valid boolean (use true or false)"
    if kind in ("string_type",):
        return "is not a string"
    if kind in ("literal_error", "enum"):
        return f"must be one of: {ctx.get('expected', '')}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return f"is out of range: {_bounds(name)}"
    if kind == "value_error":
        return _value_error_text(err)
    return str(err["msg"]).lower()


def _value_error_text(err: ErrorDetails) -> str:
    ctx = err.get("ctx") or {}
    error = ctx.get("error")
    return str(error) if error is not None else str(err["msg"])


def _bounds(name: str) -> str:
    low = high = ""
    for meta in Settings.model_fields[name].metadata:
        if isinstance(meta, annotated_types.Ge):
            low = f"at least {meta.ge}"
        elif isinstance(meta, annotated_types.Gt):
            low = f"more than {meta.gt}"
        elif isinstance(meta, annotated_types.Le):
            high = f"at most {meta.le}"
        elif isinstance(meta, annotated_types.Lt):
            high = f"less than {meta.lt}"
    return " and ".join(part for part in (low, high) if part) or "invalid"


def _show_value(name: str, value: Any) -> str:
    text = repr(value)
    if name == "endpoint" and isinstance(value, str) and "@" in value:
        # user:password@host: never repeat credentials in an error message.
        parts = urlsplit(value.strip())
        host = parts.netloc.rpartition("@")[2]
        text = repr(urlunsplit((parts.scheme, "***@" + host, parts.path, "", "")))
    if len(text) > 80:
        text = text[:77] + "..."
    return text


def _set_api_key(
    value: str,
    path: Path,
    environ: Mapping[str, str] | None,
    store: SecretStore | None,
    read_secret: Callable[[], str] | None,
) -> Settings:
    settings = load_settings(path, environ)
    endpoint = settings.endpoint
    if value == "-":
        value = (read_secret or _read_secret_interactively)()
    if not value.strip():
        try:
            existed = delete_api_key(endpoint, store)
        except SecretsError as exc:
            raise SettingsError(f"api_key: {exc}") from None
        _log.info("API key for %s %s", endpoint, "forgotten" if existed else "was not stored")
        return settings
    try:
        backend = store_api_key(endpoint, value, store)
    except SecretsError as exc:  # invalid or no keyring: the message never contains the key
        raise SettingsError(f"api_key: {exc}") from None
    _log.info("API key for %s stored in %s", endpoint, backend)
    return settings


def _read_secret_interactively() -> str:
    if sys.stdin.isatty():
        return getpass.getpass("API key (input hidden): ")
    return sys.stdin.readline()
