"""Start, watch and stop a local vLLM server for an H model (``holodesk serve``, the tray).

Qt-free and standard-library only, so the CLI and the GUI share it::

    cfg = ServeConfig(port=8000)
    problems = preflight(cfg, find_vllm())          # vLLM missing, no GPU, port taken
    server = VLLMServer(cfg, executable=find_vllm(), api_key=key)
    server.start(log_dir / "vllm-8000.log")
    server.wait_ready(on_progress=lambda p: print(p.text))   # raises ServerExited on a crash
    ...
    server.stop()                                    # SIGINT, SIGTERM, SIGKILL

vLLM runs under :mod:`model.serving.guard`, a small supervisor that stops it when holodesk is
gone however holodesk ended (SIGKILL, a crash): vLLM never sits orphaned on ~25 GB of GPU
memory. Serving is Linux-only (vLLM with CUDA): :func:`check_platform`.

The command comes from the model's profile (:mod:`model.profiles`; default Holotron-12B). Why
each flag: ``docs/holotron.md``, "Serving", and ``docs/models.md`` for every profile.
The API key never goes on the command line (``ps`` and shell history show it): vLLM's API
server takes ``VLLM_API_KEY`` from the environment when ``--api-key`` is absent
(``vllm/entrypoints/openai/api_server.py``, ``build_app``: "Ensure --api-key option from CLI
takes precedence over VLLM_API_KEY"), and, like ``--api-key``, it guards only the ``/v1``
routes: ``/health`` stays open, which is what :meth:`VLLMServer.wait_ready` polls.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal
from urllib.parse import urlsplit

from model.problem import Fix, HolodeskError
from model.problem import Problem as BaseProblem
from model.profiles import DEFAULT_PROFILE, ModelProfile, VersionFit, parse_vllm_version
from model.serving import guard as serve_guard

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_MODEL",
    "DEFAULT_PORT",
    "INSTALL_FIX",
    "SERVED_MODEL_NAME",
    "GpuInfo",
    "Problem",
    "Progress",
    "ReadyTimeout",
    "RunningServer",
    "ServeConfig",
    "ServeError",
    "ServerExited",
    "VLLMServer",
    "build_command",
    "check_gpu",
    "check_platform",
    "check_port",
    "check_vllm_version",
    "explain_failure",
    "find_running",
    "find_vllm",
    "format_command",
    "guard_prefix",
    "is_local_url",
    "local_port",
    "parse_progress",
    "port_holder",
    "preflight",
    "server_env",
]

_log = logging.getLogger(__name__)

DEFAULT_MODEL = "Hcompany/Holotron-12B"
SERVED_MODEL_NAME = "holotron"
DEFAULT_PORT = 8000
API_KEY_ENV = "VLLM_API_KEY"
INSTALL_FIX = (
    "`holodesk serve --install` (a dedicated environment for vLLM in holodesk's data folder), "
    "or pip install 'holodesk[server]' where holodesk was installed with pip (it brings vllm, "
    "torch and transformers)"
)
# BF16 weights are about 25 GB; with the vision encoder, activations and a 32K context the
# reference setup (docs/holotron.md) needs a 40 GB-or-larger card.
MIN_GPU_MIB = 40_000
# The log's first line is the command that was run; the guard's own notes carry it too.
LOG_HEADER = serve_guard.LOG_PREFIX
GPU_NEED = "a CUDA GPU with 40 GB or more (an NVIDIA H100 is the reference)"

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "::1"})


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class ServeConfig:
    """What to serve and how: the ``vllm serve`` flags holodesk controls."""

    model: str = DEFAULT_MODEL
    """A Hugging Face model name or a local folder with the weights."""
    profile: ModelProfile = DEFAULT_PROFILE
    """The model's profile: its own flags (parsers, SSM cache dtype, content format...)."""
    served_model_name: str = SERVED_MODEL_NAME
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    gpu_memory: float = 0.9
    """The share of GPU memory vLLM may take (``--gpu-memory-utilization``)."""
    max_model_len: int = 32768
    image_limit: int = 3
    max_num_seqs: int | None = None
    """Most sequences vLLM runs at once (``--max-num-seqs``); None: vLLM's default."""
    dtype: str = "bfloat16"
    extra_args: tuple[str, ...] = ()
    ssl_keyfile: str | None = None
    """With ``ssl_certfile``: vLLM speaks https (``--ssl-keyfile`` / ``--ssl-certfile``)."""
    ssl_certfile: str | None = None

    @property
    def tls(self) -> bool:
        """Whether the server speaks https."""
        return self.ssl_keyfile is not None and self.ssl_certfile is not None

    @property
    def probe_host(self) -> str:
        """Where to reach the server from this machine (a wildcard bind answers on loopback)."""
        return "127.0.0.1" if self.host in ("", "0.0.0.0", "::") else self.host

    @property
    def root_url(self) -> str:
        """The server root, where ``/health`` lives."""
        host = self.probe_host
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL a client uses."""
        return f"{self.root_url}/v1"


def build_command(cfg: ServeConfig, executable: str = "vllm") -> list[str]:
    """The ``vllm serve`` argv for ``cfg`` and its profile (docs/models.md), without any API
    key. Holotron-12B's is the command of docs/holotron.md."""
    serving = cfg.profile.serving
    reasoning = cfg.profile.reasoning
    limits = json.dumps({"image": cfg.image_limit, **dict.fromkeys(serving.extra_modalities, 0)})
    return [
        executable, "serve", cfg.model,
        *(["--trust-remote-code"] if serving.trust_remote_code else []),
        "--dtype", cfg.dtype,
        "--max-model-len", str(cfg.max_model_len),
        *(["--mamba-ssm-cache-dtype", serving.mamba_ssm_cache_dtype]
          if serving.mamba_ssm_cache_dtype else []),
        "--limit-mm-per-prompt", limits,
        "--enable-prefix-caching",
        *(["--chat-template-content-format", serving.chat_template_content_format]
          if serving.chat_template_content_format else []),
        *(["--reasoning-parser", reasoning.parser] if reasoning.parser else []),
        *(["--enable-auto-tool-choice", "--tool-call-parser", reasoning.tool_parser]
          if reasoning.tool_parser else []),
        *serving.flags,
        "--gpu-memory-utilization", f"{cfg.gpu_memory:g}",
        *(["--max-num-seqs", str(cfg.max_num_seqs)] if cfg.max_num_seqs is not None else []),
        "--served-model-name", cfg.served_model_name,
        "--host", cfg.host,
        "--port", str(cfg.port),
        *(["--ssl-keyfile", cfg.ssl_keyfile, "--ssl-certfile", cfg.ssl_certfile]
          if cfg.ssl_keyfile is not None and cfg.ssl_certfile is not None else []),
        *cfg.extra_args,
    ]  # fmt: skip


def format_command(argv: Sequence[str], *, width: int = 100) -> str:
    """``argv`` shell-quoted: one line when short, else one flag per backslash-continued line."""
    one_line = shlex.join(argv)
    if len(one_line) <= width:
        return one_line
    head = [shlex.quote(a) for a in argv[:3]]  # vllm serve MODEL
    groups: list[list[str]] = []
    for arg in argv[3:]:
        if arg.startswith("-") or not groups:
            groups.append([arg])
        else:
            groups[-1].append(arg)
    lines = [" ".join(head)] + ["  " + " ".join(shlex.quote(a) for a in g) for g in groups]
    return " \\\n".join(lines)


def server_env(api_key: str | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for vLLM: ``VLLM_API_KEY`` is our key, or absent when there is none.

    An inherited ``VLLM_API_KEY`` is dropped when holodesk has no key: the server would
    otherwise demand a key the client does not know, and every request would be a 401.
    """
    env = dict(os.environ if base is None else base)
    env.pop(API_KEY_ENV, None)
    if api_key:
        env[API_KEY_ENV] = api_key
    # vLLM's own output carries the progress holodesk reports; unbuffered so it arrives live.
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def guard_prefix(*, frozen: bool | None = None) -> list[str]:
    """How to run :mod:`model.serving.guard`: this Python with the file, or in the frozen app
    (no Python beside it, no source file) its own binary with the guard's hidden subcommand."""
    if getattr(sys, "frozen", False) if frozen is None else frozen:
        return [sys.executable, serve_guard.FROZEN_SUBCOMMAND]
    # -P: the current folder (a person's own `model/` package) must not shadow stdlib
    # modules; the guard is run by path, so nothing of holodesk needs to be importable.
    return [sys.executable, "-P", str(Path(serve_guard.__file__).resolve())]


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine's loopback (a server holodesk can start)."""
    try:
        host = (urlsplit(url if "://" in url else f"http://{url}").hostname or "").lower()
    except ValueError:
        return False
    return host in _LOOPBACK_NAMES or host.startswith("127.") or host == "0.0.0.0"


def local_port(url: str, default: int = DEFAULT_PORT) -> int:
    """The port of ``url`` (the scheme's default when it names none)."""
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port
    except ValueError:
        return default
    if port is not None:
        return port
    return 443 if parts.scheme == "https" else 80 if parts.scheme == "http" else default


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Problem(BaseProblem):
    """Something in the way of starting the server: what is wrong and what to do about it.

    ``fatal`` False is a warning: the server may still start.
    """

    fatal: bool = True


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as ``nvidia-smi`` lists it."""

    name: str
    memory_mib: int


def find_vllm(explicit: str | None = None, *, managed: Path | None = None) -> str | None:
    """The ``vllm`` executable: ``explicit``, else next to this Python, else ``managed`` (the
    environment ``holodesk serve --install`` made), else on PATH."""
    if explicit:
        path = Path(explicit).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    # The venv holodesk runs from first: `pip install 'holodesk[server]'` puts vllm there,
    # and that venv's bin folder is often not on PATH (the GUI started from a menu). A frozen
    # holodesk has no such venv: its binary's folder holds no vllm.
    beside = Path(sys.executable).parent / ("vllm.exe" if os.name == "nt" else "vllm")
    for candidate in (beside, managed):
        if candidate is not None and candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("vllm")


def vllm_missing(explicit: str | None = None) -> Problem:
    """The problem to show when :func:`find_vllm` found nothing."""
    if explicit:
        return Problem(f"{explicit} is not an executable file", Fix("pass the path of `vllm`"))
    return Problem(
        "vLLM is not installed (no `vllm` next to this Python or on PATH)",
        Fix(
            f"{INSTALL_FIX}, in the environment holodesk runs from; "
            "or run the model on another machine and set holodesk's endpoint to it",
            setting="endpoint",
        ),
    )


def check_platform(platform: str | None = None) -> Problem | None:
    """None on Linux; else the problem: vLLM serves Holotron-12B on Linux with CUDA only.

    ``platform`` defaults to :data:`sys.platform` (read at call time, so tests can patch it).
    """
    platform = sys.platform if platform is None else platform
    if platform.startswith("linux"):
        return None
    name = {"win32": "Windows", "cygwin": "Windows (Cygwin)", "darwin": "macOS"}.get(
        platform, platform
    )
    return Problem(
        f"holodesk serve runs vLLM, which serves this model on Linux only (this is {name})",
        Fix(
            "run `holodesk serve` on a Linux machine with a CUDA GPU (on Windows: inside WSL2), "
            "and set holodesk's endpoint here to it",
            setting="endpoint",
        ),
    )


def check_gpu(
    nvidia_smi: str | None = None, timeout: float = 15.0
) -> tuple[list[GpuInfo], list[Problem]]:
    """The CUDA GPUs ``nvidia-smi`` lists, and what stands in the way of serving on them."""
    exe = nvidia_smi or shutil.which("nvidia-smi")
    # The endpoint setting carries the how: each front end names it (a command, a field).
    elsewhere = "or run the model on a GPU machine and set holodesk's endpoint to it"
    if exe is None:
        return [], [Problem(
            "no NVIDIA GPU found: `nvidia-smi` is not installed, so there is no NVIDIA driver",
            Fix(f"vLLM needs {GPU_NEED}: install the NVIDIA driver and check with "
                "`nvidia-smi`; " + elsewhere, setting="endpoint"),
        )]  # fmt: skip
    query = [exe, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"]
    try:
        out = subprocess.run(query, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [], [
            Problem(
                f"`nvidia-smi` did not run ({exc})",
                Fix(f"check the NVIDIA driver; {elsewhere}", setting="endpoint"),
            )
        ]
    if out.returncode != 0:
        said = (out.stderr or out.stdout).strip().splitlines()
        detail = f": {said[0]}" if said else ""
        return [], [Problem(
            f"`nvidia-smi` failed (exit {out.returncode}){detail}",
            Fix("the NVIDIA driver is not loaded or does not match the kernel: reinstall it or "
                f"reboot, then check with `nvidia-smi`; vLLM needs {GPU_NEED}"),
        )]  # fmt: skip
    gpus: list[GpuInfo] = []
    for line in out.stdout.splitlines():
        name, _, memory = line.rpartition(",")
        with contextlib.suppress(ValueError):
            gpus.append(GpuInfo(name.strip(), int(float(memory.strip()))))
    if not gpus:
        return [], [Problem(
            "`nvidia-smi` lists no GPU",
            Fix(f"vLLM needs {GPU_NEED}; {elsewhere}", setting="endpoint"),
        )]  # fmt: skip
    largest = max(gpus, key=lambda g: g.memory_mib)
    if largest.memory_mib < MIN_GPU_MIB:
        return gpus, [Problem(
            f"the largest GPU ({largest.name}) has {largest.memory_mib / 1024:.0f} GiB; "
            "Holotron-12B's weights alone are about 25 GB",
            Fix(f"use {GPU_NEED}; on a smaller card try a shorter context (e.g. 16384 tokens)",
                setting="serve_max_model_len"),
            fatal=False,
        )]  # fmt: skip
    return gpus, []


def check_vllm_version(profile: ModelProfile, version_text: str) -> Problem | None:
    """None when the vLLM of ``version_text`` (``vllm --version`` output, or
    ``importlib.metadata.version("vllm")``) serves ``profile``; else what is wrong.

    An unreadable version is a warning (``fatal`` False): the server may still start.
    """
    wanted = profile.vllm
    version = parse_vllm_version(version_text)
    fit = wanted.fit(version)
    if fit is VersionFit.FITS:
        return None
    fix = Fix(f"install {wanted.pip_spec()} (`holodesk serve --install` makes an environment "
              "with it)")
    if fit is VersionFit.UNKNOWN:
        said = version_text.strip().splitlines()[-1:] or [""]
        return Problem(f"cannot tell which vLLM this is ({said[0]!r}); "
                       f"{profile.display_name} needs {wanted.describe()}", fix, fatal=False)
    assert version is not None
    shown = ".".join(map(str, version))
    how = "too old" if fit is VersionFit.TOO_OLD else "too new"
    return Problem(f"vLLM {shown} is {how} for {profile.display_name}, which needs "
                   f"{wanted.describe()}", fix)


def check_port(host: str, port: int) -> Problem | None:
    """None when ``host:port`` can be bound, else who holds it (when this user may see it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # As uvicorn does: a socket of a just-stopped server in TIME_WAIT must not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            holder = port_holder(port)
            who = f" by {holder}" if holder else " by another program"
            return Problem(
                f"port {port} is already in use{who}",
                Fix(
                    f"stop that program, or serve on another port (e.g. {port + 1}) and point "
                    f"holodesk's endpoint at it (http://127.0.0.1:{port + 1}/v1)",
                    setting="serve_port",
                ),
            )
        if exc.errno == errno.EADDRNOTAVAIL:
            return Problem(f"{host} is not an address of this machine", Fix("use --host 127.0.0.1"))
        if exc.errno == errno.EACCES:
            return Problem(f"port {port} needs administrator rights", Fix("use a port above 1023"))
        return Problem(
            f"cannot listen on {host}:{port} ({exc.strerror})",
            Fix("use another port", setting="serve_port"),
        )
    finally:
        sock.close()
    return None


def port_holder(port: int) -> str | None:
    """``"pid 123 (python3 -m vllm ...)"`` for the process listening on ``port``, if visible.

    Linux only (``/proc``); processes of other users are not visible and give None.
    """
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                # local_address is HEXIP:HEXPORT; state 0A is LISTEN.
                if (
                    len(fields) > 9
                    and fields[3] == "0A"
                    and int(fields[1].rsplit(":", 1)[1], 16) == port
                ):
                    inodes.add(fields[9])
    if not inodes:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in wanted:
                    return f"pid {proc.name} ({_cmdline(proc)})"
    return None


def _cmdline(proc: Path) -> str:
    try:
        words = (proc / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return "?"
    text = " ".join(w.decode(errors="replace") for w in words)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class RunningServer:
    """What answers on a port already: ``models`` is empty when ``/v1/models`` was refused."""

    base_url: str
    models: tuple[str, ...]
    needs_key: bool = False


def find_running(
    cfg: ServeConfig, api_key: str | None = None, timeout: float = 2.0
) -> RunningServer | None:
    """The server already answering ``/health`` 200 at ``cfg``'s address, or None."""
    if _get(f"{cfg.root_url}/health", None, timeout, cfg.ssl_certfile)[0] != 200:
        return None
    status, body = _get(f"{cfg.base_url}/models", api_key, timeout, cfg.ssl_certfile)
    if status in (401, 403):
        return RunningServer(cfg.base_url, (), needs_key=True)
    models: list[str] = []
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        data = json.loads(body)
        models = [str(m["id"]) for m in data.get("data", []) if isinstance(m, dict) and "id" in m]
    return RunningServer(cfg.base_url, tuple(models))


def _get(
    url: str, api_key: str | None, timeout: float, certfile: str | None = None
) -> tuple[int | None, bytes]:
    """GET ``url``; with ``certfile``, over https accepting only that certificate (ours: the
    one vLLM was given, so the key goes to no other server squatting the port)."""
    # Imported here: app.settings imports this module, so every `holodesk` command would pay
    # for urllib.request (http.client, ssl) at start-up.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url)
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    # No proxy for our own loopback server: a system proxy would answer instead of vLLM.
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
    if certfile is not None:
        from model.tls import fingerprint_of_file, pinned_context

        try:
            context = pinned_context(fingerprint_of_file(Path(certfile)))
        except (OSError, ValueError):
            return None, b""
        handlers.append(urllib.request.HTTPSHandler(context=context))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status), response.read(1_000_000)
    except urllib.error.HTTPError as exc:
        return exc.code, b""
    except (OSError, ValueError):
        return None, b""


def preflight(
    cfg: ServeConfig,
    executable: str | None,
    *,
    explicit_executable: str | None = None,
    nvidia_smi: str | None = None,
) -> list[Problem]:
    """Everything in the way of ``vllm serve`` with ``cfg``, fatal ones first.

    On a platform vLLM cannot serve on, that is the only problem reported.
    """
    platform = check_platform()
    if platform is not None:
        return [platform]
    problems: list[Problem] = []
    if executable is None:
        problems.append(vllm_missing(explicit_executable))
    problems.extend(check_gpu(nvidia_smi)[1])
    port = check_port(cfg.host, cfg.port)
    if port is not None:
        problems.append(port)
    return sorted(problems, key=lambda p: not p.fatal)


# --------------------------------------------------------------------------- progress


@dataclass(frozen=True)
class Progress:
    """One step of the server's start, parsed from its log; ``percent`` when it has one."""

    phase: Literal["download", "load", "compile", "graphs", "api", "ready", "info"]
    text: str
    percent: int | None = None


# vLLM's own lines (tqdm bars and logger lines), as seen in vLLM 0.6-0.14 logs.
_PROGRESS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Progress]]] = [
    (re.compile(r"Fetching (\d+) files:\s+(\d+)%"),
     lambda m: Progress("download", f"downloading the model ({m[1]} files): {m[2]}%", int(m[2]))),
    (re.compile(r"([\w.-]+\.safetensors):\s+(\d+)%"),
     lambda m: Progress("download", f"downloading {m[1]}: {m[2]}%", int(m[2]))),
    (re.compile(r"Starting to load model (\S+?)(?:\.\.\.)?\s*$"),
     lambda m: Progress("load", f"loading the model {m[1]}")),
    (re.compile(r"Loading safetensors checkpoint shards:\s+(\d+)% Completed \| (\d+)/(\d+)"),
     lambda m: Progress("load", f"loading weights: {m[1]}% ({m[2]}/{m[3]} shards)", int(m[1]))),
    (re.compile(r"Loading weights took ([\d.]+) seconds"),
     lambda m: Progress("load", f"weights loaded in {float(m[1]):.0f} s", 100)),
    (re.compile(r"Model loading took ([\d.]+) ?Gi?B"),
     lambda m: Progress("load", f"model loaded ({m[1]} GiB of GPU memory)", 100)),
    (re.compile(r"Dynamo bytecode transform time|torch\.compile takes"),
     lambda m: Progress("compile", "compiling the model (cached after the first start)")),
    (re.compile(r"Available KV cache memory: ([\d.]+) GiB"),
     lambda m: Progress("compile", f"KV cache: {m[1]} GiB")),
    (re.compile(r"Capturing CUDA graph[^:]*:\s+(\d+)%"),
     lambda m: Progress("graphs", f"capturing CUDA graphs: {m[1]}%", int(m[1]))),
    (re.compile(r"Graph capturing finished in (\d+) secs"),
     lambda m: Progress("graphs", f"CUDA graphs captured in {m[1]} s", 100)),
    (re.compile(r"Starting vLLM API server"),
     lambda m: Progress("api", "starting the API server")),
    (re.compile(r"Application startup complete"),
     lambda m: Progress("ready", "API server started")),
]  # fmt: skip


def parse_progress(line: str) -> Progress | None:
    """The progress ``line`` (one line or tqdm segment of vLLM's output) reports, if any."""
    for pattern, make in _PROGRESS:
        match = pattern.search(line)
        if match is not None:
            return make(match)
    return None


# --------------------------------------------------------------------------- failures


# (patterns, message, fix, the setting the fix changes): the first whose pattern is in the log's
# tail explains the exit. The words hold in the terminal and in the app alike; each front end
# names the setting its own way (a `holodesk serve` option, or where the app keeps it).
_FAILURES: list[tuple[tuple[str, ...], str, str, str | None]] = [
    (("larger than the available KV cache memory",
      "larger than the maximum number of tokens that can be stored in KV cache",
      "No available memory for the cache blocks"),
     "the GPU has too little memory left for a context of {max_model_len} tokens",
     "raise the GPU memory share (e.g. 0.95) or lower the context length "
     "(serve_max_model_len, e.g. 16384)", "serve_gpu_memory"),
    (("less than desired GPU memory utilization",),
     "other programs are using the GPU's memory",
     "close them (`nvidia-smi` lists them) or lower the GPU memory share (now {gpu_memory:g}, "
     "e.g. 0.8)", "serve_gpu_memory"),
    (("CUDA out of memory", "OutOfMemoryError", "CUDA error: out of memory"),
     "vLLM ran out of GPU memory",
     "lower the GPU memory share (now {gpu_memory:g}, e.g. 0.85) or the context length "
     "(serve_max_model_len, e.g. 16384), and close other programs using the GPU (`nvidia-smi`); "
     "the weights alone take about 25 GB", "serve_gpu_memory"),
    (("are not supported for now", "does not recognize this architecture",
      "has no vLLM implementation"),
     "this vLLM does not know the model's architecture",
     "upgrade vLLM (pip install -U 'holodesk[server]'; Holotron-12B was published with vLLM "
     "0.14.1) and keep --trust-remote-code on the command line", None),
    (("pass the argument `trust_remote_code=True`", "requires you to execute the configuration"),
     "the model needs its own code to load",
     "keep --trust-remote-code on the command line (holodesk serve always passes it)", None),
    (("error: unrecognized arguments", "error: argument"),
     "this vLLM does not accept a flag holodesk passes (see the log below)",
     "upgrade vLLM (pip install -U 'holodesk[server]'), or check the extra flags after `--`",
     None),
    (("GatedRepoError", "401 Client Error", "403 Client Error", "RepositoryNotFoundError",
      "Repository Not Found", "is restricted"),
     "Hugging Face refused to download {model}",
     "check the model name, accept its licence on huggingface.co if it asks, and log in with "
     "`hf auth login` (older: `huggingface-cli login`)", "serve_model"),
    (("No space left on device",),
     "the disk is full",
     "free about 30 GB where Hugging Face caches models (~/.cache/huggingface, or $HF_HOME)",
     None),
    (("LocalEntryNotFoundError", "MaxRetryError", "We couldn't connect to",
      "Temporary failure in name resolution"),
     "vLLM could not download {model} (no connection to huggingface.co)",
     "check the network (or a proxy: HTTPS_PROXY), or download the weights once and serve "
     "them from their folder (e.g. /path/to/Holotron-12B)", "serve_model"),
    (("Address already in use",),
     "port {port} is already in use",
     "stop the program holding it or serve on another port", "serve_port"),
    (("No CUDA GPUs are available", "Found no NVIDIA driver", "CUDA driver version is insufficient",
      "Failed to infer device type", "no CUDA-capable device"),
     "vLLM found no usable CUDA GPU",
     f"vLLM needs {GPU_NEED} and a working NVIDIA driver: check with `nvidia-smi`", None),
    (("No module named",),
     "vLLM's installation is incomplete",
     f"reinstall it: {INSTALL_FIX}", None),
]  # fmt: skip


def explain_failure(
    lines: Sequence[str], cfg: ServeConfig, returncode: int | None
) -> tuple[str, Fix]:
    """``(message, fix)`` in plain words for a vLLM that exited with ``lines`` in its log."""
    # Our own header line repeats the command (--trust-remote-code...): not vLLM's words.
    text = "\n".join(line for line in lines if not line.startswith(LOG_HEADER))
    values = {"model": cfg.model, "port": cfg.port, "gpu_memory": cfg.gpu_memory,
              "max_model_len": cfg.max_model_len}  # fmt: skip
    for patterns, message, fix, setting in _FAILURES:
        if any(p in text for p in patterns):
            return message.format(**values), Fix(fix.format(**values), setting=setting)
    code = f" with code {returncode}" if returncode is not None else ""
    return (
        f"vLLM exited{code} before the model was ready",
        Fix("read the last lines of its log below; `vllm serve --help` lists the flags"),
    )


class ServeError(HolodeskError):
    """The server could not be started or did not become ready; ``message`` and ``fix``."""

    def __init__(
        self, message: str, fix: Fix | str | None, *, log_tail: Sequence[str] = ()
    ) -> None:
        super().__init__(message, fix)
        self.log_tail = list(log_tail)


class ServerExited(ServeError):
    """vLLM exited (crashed) before or after it was ready."""

    def __init__(
        self,
        message: str,
        fix: Fix | str | None,
        *,
        returncode: int | None,
        log_tail: Sequence[str] = (),
    ) -> None:
        super().__init__(message, fix, log_tail=log_tail)
        self.returncode = returncode


class ReadyTimeout(ServeError):
    """``/health`` did not answer 200 in time (the server is left running)."""


# --------------------------------------------------------------------------- the process


@dataclass
class _LogReader:
    """Follows a growing log file, yielding complete lines and tqdm ``\\r`` segments."""

    path: Path
    offset: int = 0
    partial: str = field(default="")

    def new_segments(self) -> Iterator[str]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read(4_000_000)
        except OSError:
            return
        self.offset += len(data)
        text = self.partial + data.decode("utf-8", errors="replace")
        parts = re.split(r"[\r\n]", text)
        self.partial = parts.pop()
        yield from (p for p in parts if p.strip())


class VLLMServer:
    """One ``vllm serve`` under holodesk's guard (:mod:`model.serving.guard`), log in a file.

    Processes: the guard leads a new session and process group; vLLM is its child in that
    group, with the engine workers vLLM forks. :attr:`pid` is the guard's (SIGINT or SIGTERM
    to it stop vLLM cleanly; it is also the group id), :attr:`vllm_pid` vLLM's own. The guard
    exits with vLLM's exit code, and stops vLLM by itself when this process is gone.

    Thread use: one thread may sit in :meth:`wait_ready` while another calls :meth:`stop`;
    ``wait_ready`` then returns False (pass ``should_stop``) or raises :class:`ServerExited`.
    """

    def __init__(
        self,
        cfg: ServeConfig,
        *,
        executable: str = "vllm",
        api_key: str | None = None,
        environ: Mapping[str, str] | None = None,
        stop_timeouts: serve_guard.StopTimeouts | None = None,
        guard_poll: float = 0.5,
    ) -> None:
        """``stop_timeouts``: the waits after SIGINT, SIGTERM and SIGKILL of :meth:`stop`'s
        defaults and of the guard when it stops vLLM itself; ``guard_poll``: how often the
        guard checks that this process is alive (seconds)."""
        self.cfg = cfg
        self.executable = executable
        self._api_key = api_key
        self._environ = environ
        self._timeouts = stop_timeouts or serve_guard.StopTimeouts()
        self._guard_poll = guard_poll
        self._proc: subprocess.Popen[bytes] | None = None
        self._vllm_pid: int | None = None
        self._log_file: IO[bytes] | None = None
        self._log_path: Path | None = None
        self._lock = threading.Lock()
        self._stopping = False

    @property
    def command(self) -> list[str]:
        """The vLLM argv it runs (no key in it; the guard in front of it is not shown)."""
        return build_command(self.cfg, self.executable)

    @property
    def log_path(self) -> Path | None:
        """The log file, once started."""
        return self._log_path

    @property
    def pid(self) -> int | None:
        """The guard's process id, once started: vLLM's parent and its process group id.

        SIGINT or SIGTERM to it stop vLLM as :meth:`stop` does; it exits when vLLM has.
        """
        return self._proc.pid if self._proc is not None else None

    @property
    def vllm_pid(self) -> int | None:
        """vLLM's own process id, once started (the one ``nvidia-smi`` lists, or its parent)."""
        return self._vllm_pid

    @property
    def returncode(self) -> int | None:
        """vLLM's exit code (the guard repeats it) once it has exited, else None."""
        return self._proc.poll() if self._proc is not None else None

    @property
    def running(self) -> bool:
        """Started and not exited."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def stopping(self) -> bool:
        """:meth:`stop` was called: an exit from now on is not a crash."""
        return self._stopping

    def _guard_command(self, status_fd: int) -> list[str]:
        t = self._timeouts
        return [
            *guard_prefix(),
            "--parent", str(os.getpid()),
            *(["--parent-start", str(start)]
              if (start := serve_guard.process_start_time(os.getpid())) is not None else []),
            "--status-fd", str(status_fd),
            "--poll", f"{self._guard_poll:g}",
            "--int-timeout", f"{t.after_int:g}",
            "--term-timeout", f"{t.after_term:g}",
            "--kill-timeout", f"{t.after_kill:g}",
            "--", *self.command,
        ]  # fmt: skip

    def start(self, log_path: Path, timeout: float = 60.0) -> None:
        """Start vLLM (under its guard) with its output going to ``log_path`` (replaced).

        Returns once vLLM's process exists (at most ``timeout`` seconds for the guard's
        Python to start). Raises :class:`ServeError` when it cannot be run.
        """
        if self._proc is not None:
            raise RuntimeError("this server was started already")
        platform = check_platform()
        if platform is not None:
            raise ServeError(platform.message, platform.fix)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_path = log_path
        self._log_file = log_path.open("wb")
        header = f"{LOG_HEADER}{shlex.join(self.command)}\n"
        self._log_file.write(header.encode())
        self._log_file.flush()
        read_fd, write_fd = os.pipe()
        try:
            # A new session and process group: a Ctrl+C in our terminal does not reach vLLM
            # before we decide, and stop() can signal it with every worker it forked.
            self._proc = subprocess.Popen(
                self._guard_command(write_fd),
                stdin=subprocess.DEVNULL,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                env=server_env(self._api_key, self._environ),
                start_new_session=True,
                pass_fds=(write_fd,),
            )
        except OSError as exc:
            os.close(read_fd)
            self._close_log()
            raise ServeError(
                f"cannot start Python ({sys.executable}) to run vLLM: {exc.strerror or exc}",
                "reinstall holodesk in a working Python environment",
            ) from exc
        finally:
            os.close(write_fd)
        try:
            status = _read_status(read_fd, self._proc, timeout)
        finally:
            os.close(read_fd)
        kind, _, rest = status.partition(" ")
        if kind == "started" and rest.isdigit():
            self._vllm_pid = int(rest)
            _log.info(
                "started vLLM (pid %d, guard %d) on port %d, log %s",
                self._vllm_pid, self._proc.pid, self.cfg.port, log_path,
            )  # fmt: skip
            return
        self._abandon()
        if kind == "error":
            code, _, why = rest.partition(" ")
            if code == str(errno.ENOENT) and Path(self.executable).is_file():
                # The file is there: what is missing is the interpreter its first line names.
                why += " (its #! interpreter is missing: a moved or deleted environment)"
            raise ServeError(f"cannot run {self.executable}: {why}", vllm_missing().fix)
        raise ServeError(
            "holodesk's server guard did not start vLLM"
            + (f" (it exited with code {self._proc.returncode})"
               if self._proc.returncode is not None else f" within {timeout:g} s"),
            f"read the log ({log_path}); check that {sys.executable} runs",
            log_tail=self.tail(15),
        )  # fmt: skip

    def _abandon(self) -> None:
        """Make sure a guard that did not start vLLM is gone, and close the log."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            _killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        self._close_log()

    def tail(self, count: int = 20) -> list[str]:
        """The last ``count`` lines of the log (a tqdm bar counts with its last state)."""
        if self._log_path is None:
            return []
        try:
            with self._log_path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - 65_536))
                data = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return []
        lines = [line.rsplit("\r", 1)[-1].rstrip() for line in data.split("\n")]
        return [line for line in lines if line.strip()][-count:]

    def failure(self) -> ServerExited:
        """The :class:`ServerExited` describing why the process ended, from its log."""
        code = self.returncode
        tail = [line for line in self.tail(200) if not line.startswith(LOG_HEADER)]
        message, fix = explain_failure(tail, self.cfg, code)
        return ServerExited(message, fix, returncode=code, log_tail=tail[-15:])

    def wait_ready(
        self,
        timeout: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        poll_interval: float = 0.5,
    ) -> bool:
        """Block until ``GET /health`` answers 200: True. False when ``should_stop()`` or
        :meth:`stop` ends the wait. Reports each new :class:`Progress` from the log.

        Raises :class:`ServerExited` when vLLM exits first (with the explanation and the
        log's last lines), :class:`ReadyTimeout` after ``timeout`` seconds (None: no limit;
        the first start downloads about 25 GB).
        """
        if self._proc is None or self._log_path is None:
            raise RuntimeError("start() the server first")
        reader = _LogReader(self._log_path)
        deadline = None if timeout is None else time.monotonic() + timeout
        last: Progress | None = None
        while True:
            if self._stopping or (should_stop is not None and should_stop()):
                return False
            for segment in reader.new_segments():
                found = parse_progress(segment)
                if found is not None and found != last:
                    last = found
                    if on_progress is not None:
                        on_progress(found)
            if self._proc.poll() is not None:
                if self._stopping:
                    return False
                raise self.failure()
            if _get(f"{self.cfg.root_url}/health", None, 2.0, self.cfg.ssl_certfile)[0] == 200:
                if on_progress is not None and (last is None or last.phase != "ready"):
                    on_progress(Progress("ready", "API server started"))
                return True
            if deadline is not None and time.monotonic() > deadline:
                raise ReadyTimeout(
                    f"vLLM did not answer {self.cfg.root_url}/health within {timeout:g} s",
                    f"it is still running; read its log ({self._log_path}) or wait longer",
                    log_tail=self.tail(15),
                )
            time.sleep(poll_interval)

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the process to exit; its code, or None on timeout."""
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(
        self,
        int_timeout: float | None = None,
        term_timeout: float | None = None,
        kill_timeout: float | None = None,
    ) -> int | None:
        """Stop vLLM, its guard and every process of their group: SIGINT (vLLM's clean
        shutdown), then SIGTERM, then SIGKILL, each after its timeout (None: the
        ``stop_timeouts`` given to the constructor, by default 30, 10 and 5 s). Returns vLLM's
        exit code (None if never started). Safe to call twice and from another thread than
        :meth:`wait_ready`'s.
        """
        t = self._timeouts
        int_wait = t.after_int if int_timeout is None else int_timeout
        term_wait = t.after_term if term_timeout is None else term_timeout
        kill_wait = t.after_kill if kill_timeout is None else kill_timeout
        with self._lock:
            self._stopping = True
            proc = self._proc
            if proc is None:
                return None
            pgid = proc.pid  # start_new_session: the group id is the guard's pid
            # SIGINT and SIGTERM go to the guard alone: it passes them on to vLLM and its
            # workers. Signalling the group too would hand vLLM two SIGINTs, and uvicorn takes
            # a second one as "exit now, skip the clean shutdown".
            for sig, wait in ((signal.SIGINT, int_wait), (signal.SIGTERM, term_wait)):
                if proc.poll() is not None:
                    break
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(sig)
                try:
                    proc.wait(wait)
                except subprocess.TimeoutExpired:
                    _log.warning(
                        "vLLM (group %d) still running %g s after %s", pgid, wait, sig.name
                    )
            if proc.poll() is None:
                _killpg(pgid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(kill_wait)
            # The guard is gone; workers vLLM forked (its engine core) may not be.
            _reap_group(pgid, term_wait)
            self._close_log()
            return proc.returncode

    def _close_log(self) -> None:
        if self._log_file is not None:
            with contextlib.suppress(OSError):
                self._log_file.close()
            self._log_file = None


def _read_status(fd: int, proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The guard's status line from ``fd``: ``""`` when it exited (or timed out) without one."""
    import select

    data = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not ready:
            if proc.poll() is not None:
                break
            continue
        chunk = os.read(fd, 4096)
        if not chunk:  # the guard closed it: exited, or wrote its line already
            break
        data += chunk
    return data.decode("utf-8", errors="replace").split("\n", 1)[0].strip()


def _killpg(pgid: int, sig: signal.Signals) -> bool:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        _log.warning("not allowed to signal process group %d", pgid)
        return False
    return True


def _group_alive(pgid: int) -> bool:
    """Whether any live (not zombie) process is left in the group."""
    proc = Path("/proc")
    if proc.is_dir():
        # killpg(pgid, 0) also succeeds for zombies, which a container's init may never reap.
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                # stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    return True
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reap_group(pgid: int, timeout: float) -> None:
    """SIGTERM, then SIGKILL, whatever is left in the group."""
    if not _group_alive(pgid):
        return
    _log.info("stopping processes left in vLLM's group %d", pgid)
    _killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _group_alive(pgid):
        _killpg(pgid, signal.SIGKILL)
