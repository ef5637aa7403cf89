"""The `holodesk serve` command: start vLLM serving Holotron-12B here, and stop it cleanly.

Also the settings-to-launcher mapping the GUI's server control shares (:func:`serve_config`,
:func:`serve_api_key`, :func:`server_available`, :func:`server_log_path`).

The port: ``serve_port`` when set, else the endpoint's port when the endpoint is this machine,
else 8000. Deriving it from the endpoint keeps `holodesk serve` and `holodesk run` talking
about the same server without a second setting to keep in step; ``serve_port`` remains for
the rare case of serving for another client.

Exit codes: 0 after a clean stop (Ctrl+C, SIGTERM) and for ``--print-command``; 1 when a check
fails (not Linux, vLLM not installed, no GPU, port taken) or vLLM dies; 2 for bad options or
settings; 3 when our model is already served on that port.

``--print-command`` never reads the keyring (a locked one could prompt or stall a command that
runs nothing): its note about the API key is printed only when ``$HOLODESK_API_KEY`` is set.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from app import paths
from app.cli.exitcodes import EXIT_BUSY, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE
from app.secrets import ENV_API_KEY
from model.serving.launcher import (
    API_KEY_ENV,
    DEFAULT_PORT,
    SERVED_MODEL_NAME,
    ServeConfig,
    build_command,
    format_command,
    is_local_url,
    local_port,
)

if TYPE_CHECKING:
    from app.settings import Settings
    from model.serving.launcher import Progress, ServeError, VLLMServer

__all__ = [
    "register",
    "serve_api_key",
    "serve_config",
    "serve_port",
    "server_available",
    "server_log_path",
]

# Settings the options override: option dest -> settings key.
_OPTIONS = {
    "model": "serve_model",
    "port": "serve_port",
    "gpu_memory": "serve_gpu_memory",
    "max_model_len": "serve_max_model_len",
    "image_limit": "serve_image_limit",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "serve",
        help="start vLLM serving Holotron-12B on this machine (needs a 40 GB+ CUDA GPU)",
        description="Start vLLM with the flags Holotron-12B needs, wait until it answers, and "
        "stop it cleanly on Ctrl+C. Options default to the serve_* settings "
        "(`holodesk config show`). Extra vLLM flags go after `--`.",
    )
    p.add_argument("--model", help="Hugging Face model name or local folder "
                   "(default: Hcompany/Holotron-12B)")
    p.add_argument("--port", type=int, help="port (default: the endpoint's, else 8000)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--gpu-memory", type=float, metavar="SHARE",
                   help="share of GPU memory vLLM may take, 0.1-0.98 (default 0.9)")
    p.add_argument("--max-model-len", type=int, metavar="TOKENS",
                   help="context length in tokens (default 32768)")
    p.add_argument("--image-limit", type=int, metavar="N",
                   help="images per request (default 3, the screenshots a step sends)")
    p.add_argument("--vllm", metavar="PATH",
                   help="the vllm executable (default: next to this Python, then PATH)")
    p.add_argument("--print-command", action="store_true",
                   help="print the vllm command and exit; runs nothing (an API key is never "
                   f"printed: vLLM takes it from ${API_KEY_ENV})")
    p.add_argument("extra", nargs="*", metavar="-- VLLM_FLAG",
                   help="more flags for `vllm serve`, after `--` (e.g. -- --enforce-eager)")
    p.set_defaults(func=_cmd_serve)


# --------------------------------------------------------------------------- shared mapping


def server_available(settings: Settings) -> bool:
    """Whether the endpoint is this machine: only then can holodesk start its server."""
    return is_local_url(settings.endpoint)


def serve_port(settings: Settings) -> int:
    """``serve_port``, else the endpoint's port when it is local, else 8000."""
    if settings.serve_port is not None:
        return settings.serve_port
    if server_available(settings):
        return local_port(settings.endpoint, DEFAULT_PORT)
    return DEFAULT_PORT


def serve_config(
    settings: Settings, *, host: str = "127.0.0.1", extra_args: Sequence[str] = ()
) -> ServeConfig:
    """The launcher's config from the settings in effect."""
    return ServeConfig(
        model=settings.serve_model,
        served_model_name=SERVED_MODEL_NAME,
        host=host,
        port=serve_port(settings),
        gpu_memory=settings.serve_gpu_memory,
        max_model_len=settings.serve_max_model_len,
        image_limit=settings.serve_image_limit,
        extra_args=tuple(extra_args),
    )


def serve_api_key(settings: Settings, cfg: ServeConfig) -> str | None:
    """The key the server should demand: the one holodesk sends to it (keyring or env).

    When the endpoint is this server, its key; otherwise the key stored for the server's own
    URL. None: no key (fine on loopback).
    """
    from app.secrets import api_key

    same = server_available(settings) and local_port(settings.endpoint) == cfg.port
    return api_key(settings.endpoint if same else cfg.base_url)


def server_log_path(cfg: ServeConfig) -> Path:
    """Where the server's output goes: one file per port in holodesk's log folder."""
    return paths.log_dir() / f"vllm-{cfg.port}.log"


# --------------------------------------------------------------------------- the command


def _settings(args: argparse.Namespace) -> Settings:
    from app.settings import load_with_overrides

    return load_with_overrides({key: getattr(args, dest, None) for dest, key in _OPTIONS.items()})


def _option_problem(args: argparse.Namespace) -> tuple[str, str] | None:
    """``(message, fix)`` for the first option given with a value its setting refuses.

    Named as typed (``--gpu-memory 2``), not as the setting it overrides: the person never
    wrote ``serve_gpu_memory``. The settings file and the environment are checked later, by
    :func:`_settings`, whose messages name those.
    """
    from pydantic import ValidationError

    from app.settings import Settings

    for dest, key in _OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        flag = "--" + dest.replace("_", "-")
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        try:
            Settings.model_validate({key: value})
        except ValidationError as exc:
            err = exc.errors()[0]
            low, high = _bounds(key)
            if err["type"] in _RANGE_ERRORS and low is not None and high is not None:
                return (
                    f"{flag} {shown} is out of range",
                    f"use {flag} from {low:g} to {high:g} ({_MEANING[dest]})",
                )
            ctx = err.get("ctx") or {}
            reason = str(ctx.get("error") or err["msg"])
            return f"{flag} {shown!r}: {reason}", f"see `holodesk serve --help` for {flag}"
    return None


_RANGE_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})
_MEANING = {
    "model": "a model name or folder",
    "port": "a TCP port",
    "gpu_memory": "the share of GPU memory vLLM may take",
    "max_model_len": "the context length in tokens",
    "image_limit": "images per request; a step sends 3",
}


def _bounds(key: str) -> tuple[float | None, float | None]:
    """The inclusive bounds the settings field ``key`` declares (ge / le), None when open."""
    import annotated_types

    from app.settings import Settings

    low: float | None = None
    high: float | None = None
    for meta in Settings.model_fields[key].metadata:
        if isinstance(meta, annotated_types.Ge):
            low = float(meta.ge)  # type: ignore[arg-type]
        elif isinstance(meta, annotated_types.Le):
            high = float(meta.le)  # type: ignore[arg-type]
    return low, high


def _shown_executable(found: str | None) -> str:
    # The plain name when PATH finds this one: the command then pastes anywhere.
    if found is None or shutil.which("vllm") == found:
        return "vllm"
    return found


# Extra flags holodesk must not let through: it polls --host/--port for /health, finds its
# server by the served name, and keeps the key out of argv (`ps` shows it).
_MANAGED_FLAGS = {
    "--port": "use `holodesk serve --port N`",
    "--host": "use `holodesk serve --host ADDRESS`",
    "--served-model-name": f"holodesk always serves the model as {SERVED_MODEL_NAME!r}",
    "--api-key": "store the key with `holodesk config set api_key -`; holodesk hands it to "
    f"vLLM in ${API_KEY_ENV}, never on the command line",
}


def _managed_flag(extra: Sequence[str]) -> tuple[str, str] | None:
    for arg in extra:
        flag = arg.split("=", 1)[0]
        if flag in _MANAGED_FLAGS:
            return flag, _MANAGED_FLAGS[flag]
    return None


def _cmd_serve(args: argparse.Namespace) -> int:
    import os

    from model.serving.launcher import find_vllm

    managed = _managed_flag(args.extra)
    if managed is not None:
        print(f"holodesk: {managed[0]} cannot be passed after `--`\nFix: {managed[1]}",
              file=sys.stderr)
        return EXIT_USAGE
    bad = _option_problem(args)
    if bad is not None:
        print(f"holodesk: {bad[0]}\nFix: {bad[1]}", file=sys.stderr)
        return EXIT_USAGE
    settings = _settings(args)
    cfg = serve_config(settings, host=args.host, extra_args=args.extra)
    executable = find_vllm(args.vllm)
    if args.print_command:
        print(format_command(build_command(cfg, _shown_executable(executable))))
        # Only the environment, never the keyring: see the module docstring.
        if os.environ.get(ENV_API_KEY, "").strip():
            print(
                f"# The API key is passed in ${API_KEY_ENV}, never on the command line (`ps` "
                f"would show it).\n# To run this by hand: export {API_KEY_ENV}=<your key> first."
            )
        return EXIT_OK
    key = serve_api_key(settings, cfg)
    try:
        return _serve(settings, cfg, key, executable, args.vllm)
    except KeyboardInterrupt:  # Ctrl+C during the checks, before vLLM is started
        print("\nholodesk: stopped; vLLM was not started", file=sys.stderr)
        return EXIT_RUN_FAILED


def _serve(
    settings: Settings,
    cfg: ServeConfig,
    key: str | None,
    executable: str | None,
    explicit: str | None,
) -> int:
    from model.serving.launcher import VLLMServer, find_running, preflight

    running = find_running(cfg, key)
    if running is not None and SERVED_MODEL_NAME in running.models:
        print(
            f"holodesk: vLLM is already running at {cfg.base_url} (model {SERVED_MODEL_NAME}); "
            "nothing to start.",
            file=sys.stderr,
        )
        return EXIT_BUSY
    if running is not None:
        what = (
            "refuses our API key" if running.needs_key
            else f"serves {', '.join(running.models) or 'no model'}"
        )
        print(
            f"holodesk: another server already answers at {cfg.base_url} and {what}.\n"
            f"Fix: stop it, or serve on another port (--port {cfg.port + 1}).",
            file=sys.stderr,
        )
        return EXIT_RUN_FAILED

    problems = preflight(cfg, executable, explicit_executable=explicit)
    for problem in problems:
        label = "holodesk" if problem.fatal else "holodesk: warning"
        print(f"{label}: {problem.message}\nFix: {problem.fix}", file=sys.stderr)
    if executable is None or any(p.fatal for p in problems):
        return EXIT_RUN_FAILED
    if not key and not _loopback_only(cfg.host):
        print(
            f"holodesk: warning: vLLM will listen on {cfg.host} without an API key: anyone who "
            "can reach this machine can use the model.\nFix: store a key first with "
            "`holodesk config set api_key -` (holodesk hands it to vLLM in "
            f"${API_KEY_ENV}), or serve on --host 127.0.0.1",
            file=sys.stderr,
        )
    _note_endpoint(settings, cfg)

    server = VLLMServer(cfg, executable=executable, api_key=key)
    log_path = server_log_path(cfg)
    paths.ensure_private_dir(log_path.parent)
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    # SIGHUP: the terminal was closed. (preflight refused non-Linux platforms already; the
    # getattr keeps a platform without SIGHUP an error message, never an AttributeError.)
    handled = tuple(
        sig for name in ("SIGINT", "SIGTERM", "SIGHUP") if (sig := getattr(signal, name, None))
    )
    previous = {sig: signal.signal(sig, on_signal) for sig in handled}
    try:
        return _run(server, cfg, key, log_path, stop)
    finally:
        server.stop()  # never leave vLLM behind, whatever happened above
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run(
    server: VLLMServer, cfg: ServeConfig, key: str | None, log_path: Path, stop: threading.Event
) -> int:
    from model.serving.launcher import ServeError

    print(format_command(server.command), flush=True)
    if key:
        print(f"(with the API key in ${API_KEY_ENV})")
    print(f"log: {log_path}", flush=True)
    try:
        server.start(log_path)
    except ServeError as exc:  # the executable cannot be run (a broken venv, a bad shebang)
        return _report_failure(exc, log_path)
    print(
        f"starting vLLM (pid {server.vllm_pid}); loading the model takes minutes, the first time "
        "also a download of about 25 GB. Ctrl+C stops it.",
        flush=True,
    )
    try:
        ready = server.wait_ready(on_progress=_Reporter(), should_stop=stop.is_set)
    except ServeError as exc:
        return _report_failure(exc, log_path)
    if ready:
        print(f"ready at {cfg.base_url} (model {cfg.served_model_name})", flush=True)
        while not stop.wait(0.5):
            if server.returncode is not None:
                return _report_failure(server.failure(), log_path, after_ready=True)
    print("stopping vLLM...", flush=True)
    server.stop()
    print("stopped.", flush=True)
    return EXIT_OK


def _report_failure(exc: ServeError, log_path: Path, *, after_ready: bool = False) -> int:
    when = "vLLM stopped" if after_ready else "vLLM did not start"
    print(f"holodesk: {when}: {exc.message}\nFix: {exc.fix}", file=sys.stderr)
    if exc.log_tail:
        print(f"last lines of its log ({log_path}):", file=sys.stderr)
        for line in exc.log_tail:
            print(f"  {line}", file=sys.stderr)
    return EXIT_RUN_FAILED


class _Reporter:
    """Prints progress: every new phase, and within a phase at most every 2 s (and 100%)."""

    def __init__(self, interval: float = 2.0) -> None:
        self._interval = interval
        self._phase = ""
        self._last = 0.0

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        new_phase = progress.phase != self._phase
        if new_phase or progress.percent in (None, 100) or now - self._last >= self._interval:
            self._phase, self._last = progress.phase, now
            print(f"  {progress.text}", flush=True)


def _loopback_only(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    return host in ("localhost", "::1") or host.startswith("127.")


def _note_endpoint(settings: Settings, cfg: ServeConfig) -> None:
    """Say so when `holodesk run` will not talk to the server being started."""
    if server_available(settings) and local_port(settings.endpoint) == cfg.port:
        return
    print(
        f"note: the endpoint setting is {settings.endpoint}, so `holodesk run` will not use "
        f"this server. To use it: holodesk config set endpoint {cfg.base_url}",
        file=sys.stderr,
    )
