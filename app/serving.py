"""Start, watch and stop a local vLLM server serving Holotron-12B: the one sequence of both
`holodesk serve` (app/cli/serve.py) and the tray's server control (ui/server_control.py).

The sequence: :func:`plan_server` (the launcher's config from the settings, with
``--max-num-seqs`` from the capacity plan, :func:`capacity_plan`; the API key from the
keyring; the ``vllm`` to run), :func:`check` (is something already answering there? can
vLLM run here? a warning when it would listen beyond this machine without a key), then
:func:`create_server` and :func:`start_server` (progress through callbacks). Each front end
words the outcome its own way; the problems themselves are said once, here and in the launcher.

The port: ``serve_port`` when set, else the endpoint's port when the endpoint is this machine,
else 8000. Deriving it from the endpoint keeps `holodesk serve` and `holodesk run` talking
about the same server without a second setting to keep in step; ``serve_port`` remains for
the rare case of serving for another client.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from app import paths
from model.problem import Fix, HolodeskError, Remedy
from model.serving.launcher import (
    API_KEY_ENV,
    DEFAULT_PORT,
    SERVED_MODEL_NAME,
    Problem,
    ServeConfig,
    is_local_url,
    local_port,
)

if TYPE_CHECKING:
    from app.settings import Settings
    from model.profiles import ModelProfile
    from model.serving.capacity import CapacityPlan, Gpu
    from model.serving.launcher import Progress, RunningServer, ServerExited, VLLMServer
    from model.tls import ServerCertificate

_log = logging.getLogger(__name__)

#: Where a server listens unless told otherwise: this machine only.
DEFAULT_HOST = "127.0.0.1"


def server_available(settings: Settings) -> bool:
    """Whether the endpoint is this machine: only then can holodesk start its server."""
    return is_local_url(settings.endpoint)


def serving_problem(nvidia_smi: str | None = None) -> Problem | None:
    """Why this machine cannot serve the model at all (vLLM needs Linux and a usable NVIDIA
    GPU), or None: the desktop app asks once, to say why instead of offering Start model
    server. The same checks as `holodesk serve`'s. Blocks on ``nvidia-smi``: not on a GUI
    thread."""
    from model.serving.launcher import check_gpu, check_platform

    platform = check_platform()
    if platform is not None:
        return platform
    return next((p for p in check_gpu(nvidia_smi)[1] if p.fatal), None)


def serve_port(settings: Settings) -> int:
    """``serve_port``, else the endpoint's port when it is local, else 8000."""
    if settings.serve_port is not None:
        return settings.serve_port
    if server_available(settings):
        return local_port(settings.endpoint, DEFAULT_PORT)
    return DEFAULT_PORT


def tls_dir() -> Path:
    """Where holodesk keeps the self-signed pair it makes for ``holodesk serve --tls``."""
    return paths.data_dir() / "tls"


def default_tls_files() -> tuple[Path, Path]:
    """The key and certificate holodesk makes when ``serve_tls`` names no files."""
    return tls_dir() / "server-key.pem", tls_dir() / "server-cert.pem"


def tls_files(settings: Settings) -> tuple[str, str] | None:
    """The key and certificate vLLM gets, or None when ``serve_tls`` is off.

    Both ``serve_ssl_*`` files, else holodesk's own pair (:func:`default_tls_files`). One of
    the two alone is refused by :func:`tls_problem`, not here: a printed command still shows.
    """
    if not settings.serve_tls:
        return None
    key, cert = settings.serve_ssl_keyfile, settings.serve_ssl_certfile
    if key is not None and cert is not None:
        return key, cert
    default_key, default_cert = default_tls_files()
    return str(default_key), str(default_cert)


def tls_problem(settings: Settings) -> Problem | None:
    """What is wrong with the TLS files the settings name, if anything (before a start)."""
    if not settings.serve_tls:
        return None
    key, cert = settings.serve_ssl_keyfile, settings.serve_ssl_certfile
    if (key is None) != (cert is None):
        return Problem(
            "serve_ssl_keyfile and serve_ssl_certfile go together: only one is set",
            Fix("set both (your own key and certificate), or neither: holodesk then makes "
                "a self-signed pair and prints its fingerprint", setting="serve_ssl_certfile"),
        )
    for path in (key, cert):
        if path is not None and not Path(path).is_file():
            return Problem(
                f"the TLS file {path} does not exist",
                Fix("give an existing PEM file, or leave serve_ssl_keyfile and "
                    "serve_ssl_certfile empty for a self-signed pair",
                    setting="serve_ssl_keyfile"),
            )
    return None


def ensure_certificate(cfg: ServeConfig) -> ServerCertificate | None:
    """The certificate ``cfg`` serves with (None without TLS); holodesk's own pair is made
    when it is missing. Raises :class:`~model.tls.CertificateUnavailable` when it cannot be."""
    from model.tls import ServerCertificate, fingerprint_of_file

    if cfg.ssl_keyfile is None or cfg.ssl_certfile is None:
        return None
    key, cert = Path(cfg.ssl_keyfile), Path(cfg.ssl_certfile)
    if (key, cert) == default_tls_files() and not (key.is_file() and cert.is_file()):
        return make_certificate(cfg.host)
    return ServerCertificate(key, cert, fingerprint_of_file(cert))


def make_certificate(host: str = DEFAULT_HOST) -> ServerCertificate:
    """Make (or replace) holodesk's self-signed pair, naming ``host`` among its addresses."""
    from model.tls import make_self_signed

    paths.ensure_private_dir(tls_dir())
    return make_self_signed(tls_dir(), [host])


def serve_config(
    settings: Settings,
    *,
    host: str = DEFAULT_HOST,
    extra_args: Sequence[str] = (),
    max_num_seqs: int | None = None,
) -> ServeConfig:
    """The launcher's config from the settings in effect.

    ``--max-num-seqs``: ``serve_max_num_seqs`` when set, else ``max_num_seqs`` (what the
    capacity plan found, :func:`planned_max_num_seqs`), else vLLM's default; never when the
    extra flags name one themselves.
    """
    files = tls_files(settings)
    seqs = settings.serve_max_num_seqs if settings.serve_max_num_seqs is not None else max_num_seqs
    if any(arg.split("=", 1)[0] == "--max-num-seqs" for arg in extra_args):
        seqs = None
    return ServeConfig(
        profile=serve_profile(settings),
        ssl_keyfile=files[0] if files else None,
        ssl_certfile=files[1] if files else None,
        model=settings.serve_model,
        served_model_name=SERVED_MODEL_NAME,
        host=host,
        port=serve_port(settings),
        gpu_memory=settings.serve_gpu_memory,
        max_model_len=settings.serve_max_model_len,
        image_limit=settings.serve_image_limit,
        max_num_seqs=seqs,
        extra_args=tuple(extra_args),
    )


class PlanUnknown(HolodeskError):
    """The capacity plan needs figures of the model that nothing on this machine gives."""


def serve_profile(settings: Settings) -> ModelProfile:
    """The profile ``holodesk serve`` starts its model with: the ``model_profile`` setting,
    else the one ``serve_model`` names (docs/models.md). A name no profile knows (a local
    folder, a fine-tune) is served as Holotron-12B, holodesk's own model, as before profiles:
    ``--profile`` says otherwise."""
    from model.profiles import DEFAULT_PROFILE, find_profile, profile_by_key

    if settings.model_profile:
        return profile_by_key(settings.model_profile)
    match = find_profile(settings.serve_model)
    return DEFAULT_PROFILE if match.guessed else match.profile


def planned_max_num_seqs(settings: Settings, gpu: Gpu | None = None) -> int | None:
    """``--max-num-seqs`` from the capacity plan: the sessions that fit the GPU's memory.

    None when ``serve_max_num_seqs`` is set (the person's number wins, and no ``nvidia-smi``
    is run for nothing). Blocks on ``nvidia-smi``: not on a GUI thread.
    """
    from model.serving.capacity import max_num_seqs

    if settings.serve_max_num_seqs is not None:
        return None
    try:
        return max_num_seqs(capacity_plan(settings, gpu=gpu))
    except PlanUnknown as e:
        _log.info("no capacity plan, vLLM's own --max-num-seqs: %s", e.message)
        return None


# --------------------------------------------------------------------------- capacity


def plan_gpu(gpu_gib: float | None = None, nvidia_smi: str | None = None) -> Gpu:
    """The GPU to plan for: ``gpu_gib`` when given, else the largest ``nvidia-smi`` lists,
    else the reference card (an H100 80GB). Blocks on ``nvidia-smi``: not on a GUI thread."""
    from model.serving.capacity import DEFAULT_GPU, GIB, MIB, Gpu, GpuSource
    from model.serving.launcher import check_gpu

    if gpu_gib is not None:
        return Gpu(f"a {gpu_gib:g} GiB GPU", int(gpu_gib * GIB), GpuSource.OPTION)
    gpus, _problems = check_gpu(nvidia_smi)
    if not gpus:
        return DEFAULT_GPU
    # vLLM serves on one GPU unless told to split the model (--tensor-parallel-size).
    largest = max(gpus, key=lambda g: g.memory_mib)
    return Gpu(largest.name, largest.memory_mib * MIB, GpuSource.NVIDIA_SMI)


def capacity_plan(
    settings: Settings,
    *,
    gpu: Gpu | None = None,
    context: int | None = None,
    sessions: int | None = None,
    reserve_gib: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> CapacityPlan:
    """How many sessions of a holodesk run fit on ``gpu`` (default: :func:`plan_gpu`) with the
    serve settings, for the served model and an attention-only model of Holo2-8B's shape.

    The architectures come from config.json in the local Hugging Face cache (or the
    ``serve_model`` folder) when there, else from the built-in published figures. A session
    is, unless ``context`` says otherwise, a long step of a run: three screenshots of the
    frames these settings send (16:9 at ``max_side``) and the text around them.
    """
    from model.profiles import DEFAULT_PROFILE
    from model.serving.capacity import (
        ATTENTION_REFERENCE,
        DEFAULT_RESERVE_GIB,
        GIB,
        HOLOTRON,
        Workload,
        dtypes_for_profile,
        load_architecture,
        make_plan,
        profile_architecture,
    )

    profile = serve_profile(settings)
    if profile is DEFAULT_PROFILE:
        hybrid, hybrid_note = load_architecture(settings.serve_model, HOLOTRON, environ)
    else:
        found, hybrid_note = profile_architecture(profile, settings.serve_model,
                                                  environ=environ)
        if found is None:
            raise PlanUnknown(
                f"The memory plan for {profile.display_name} cannot be made here: "
                f"{hybrid_note}.",
                Fix(f"Download the model ({settings.serve_model}) so its config.json is in the "
                    "Hugging Face cache, or serve it with vLLM's own default (no "
                    "--max-num-seqs)."))
        hybrid, hybrid_note = found, hybrid_note
    attention, attention_note = load_architecture(ATTENTION_REFERENCE.repo, ATTENTION_REFERENCE,
                                                  environ)
    notes = tuple(n for n in (hybrid_note, attention_note) if n)
    if not hybrid.hybrid:
        notes += (f"{settings.serve_model} has no Mamba or linear-attention layers in its "
                  "config.json: it is planned as an attention-only model",)
    side = settings.max_side
    workload = Workload(image_width=side, image_height=round(side * 9 / 16),
                        image_rule=profile.image_rule)
    reserve = DEFAULT_RESERVE_GIB if reserve_gib is None else reserve_gib
    return make_plan(
        gpu=gpu if gpu is not None else plan_gpu(), utilization=settings.serve_gpu_memory,
        reserve_bytes=int(reserve * GIB), workload=workload, context=context,
        sessions=sessions, hybrid=hybrid, attention=attention, notes=notes,
        dtypes=dtypes_for_profile(profile),
    )  # fmt: skip


def uses_server(settings: Settings, cfg: ServeConfig) -> bool:
    """Whether the endpoint is the server ``cfg`` starts (so runs will talk to it)."""
    return server_available(settings) and local_port(settings.endpoint) == cfg.port


def serve_api_key(settings: Settings, cfg: ServeConfig) -> str | None:
    """The key the server should demand: the one holodesk sends to it (keyring or env).

    When the endpoint is this server, its key; otherwise the key stored for the server's own
    URL. None: no key (fine on loopback).
    """
    from app.secrets import api_key

    return api_key(settings.endpoint if uses_server(settings, cfg) else cfg.base_url)


def server_log_path(cfg: ServeConfig) -> Path:
    """Where the server's output goes: one file per port in holodesk's log folder."""
    return paths.log_dir() / f"vllm-{cfg.port}.log"


def loopback_only(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    return host in ("localhost", "::1") or host.startswith("127.")


def exposure_warning(cfg: ServeConfig, key: str | None) -> Problem | None:
    """The warning for a server anyone on the network could use: no key, not on loopback."""
    if key or loopback_only(cfg.host):
        return None
    return Problem(
        f"vLLM will listen on {cfg.host} without an API key: anyone who can reach this "
        "machine can use the model.",
        Fix(f"Store an API key first (holodesk hands it to vLLM in ${API_KEY_ENV}), or serve on "
            "this machine only (host 127.0.0.1).", remedy=Remedy.SET_API_KEY),
        fatal=False,
    )


# --------------------------------------------------------------------------- the sequence


@dataclass(frozen=True)
class ServePlan:
    """What to start: the config, the key it demands, and the ``vllm`` found (None: none)."""

    settings: Settings
    config: ServeConfig
    api_key: str | None
    executable: str | None
    #: The ``vllm`` the person named (an option, or a test); None: looked for.
    explicit_executable: str | None = None
    #: The certificate served with (TLS on), its fingerprint for the clients to pin.
    certificate: ServerCertificate | None = None

    @property
    def log_path(self) -> Path:
        return server_log_path(self.config)


def plan_server(
    settings: Settings,
    *,
    host: str = DEFAULT_HOST,
    extra_args: Sequence[str] = (),
    executable: str | None = None,
) -> ServePlan:
    """The plan for ``settings``; reads the keyring (which may block: not on a GUI thread).

    With ``serve_tls``, makes holodesk's self-signed pair when it is missing; raises a
    :class:`~model.problem.HolodeskError` when the TLS files are wrong or cannot be made.
    """
    from app.vllm_env import managed_vllm
    from model.problem import HolodeskError
    from model.serving.launcher import find_vllm

    problem = tls_problem(settings)
    if problem is not None:
        raise HolodeskError(problem.message, problem.fix)
    cfg = serve_config(settings, host=host, extra_args=extra_args,
                       max_num_seqs=planned_max_num_seqs(settings))
    found = find_vllm(executable, managed=managed_vllm(cfg.profile))
    return ServePlan(settings, cfg, serve_api_key(settings, cfg), found,
                     executable, ensure_certificate(cfg))


class Verdict(Enum):
    """What :func:`check` found."""

    GO = "go"  #: nothing in the way (warnings aside)
    SERVED_ALREADY = "served already"  #: our model already answers at the address
    OTHER_SERVER = "other server"  #: something else answers there
    BLOCKED = "blocked"  #: a fatal problem: vLLM cannot start here


@dataclass(frozen=True)
class Checks:
    """The verdict, the problems in the order to say them, what already answers (if any)."""

    verdict: Verdict
    problems: tuple[Problem, ...] = ()
    running: RunningServer | None = None

    @property
    def fatal(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.fatal)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if not p.fatal)


def _nothing() -> None:
    pass


def check(plan: ServePlan, *, on_checking: Callable[[], None] = _nothing) -> Checks:
    """Whether the server can start; blocks (HTTP, ``nvidia-smi``): not on a GUI thread.

    ``on_checking`` is called once nothing answers at the address, before the slower checks
    of vLLM and the GPU. The API-key warning comes last, and only when nothing is fatal.
    """
    from model.serving.launcher import find_running, preflight

    cfg = plan.config
    running = find_running(cfg, plan.api_key)
    if running is not None:
        ours = SERVED_MODEL_NAME in running.models
        return Checks(Verdict.SERVED_ALREADY if ours else Verdict.OTHER_SERVER, running=running)
    on_checking()
    problems = tuple(preflight(cfg, plan.executable, explicit_executable=plan.explicit_executable))
    if plan.executable is None or any(p.fatal for p in problems):
        return Checks(Verdict.BLOCKED, problems)
    exposed = exposure_warning(cfg, plan.api_key)
    return Checks(Verdict.GO, problems if exposed is None else (*problems, exposed))


def create_server(plan: ServePlan) -> VLLMServer:
    """The server of a plan that passed :func:`check`, not started yet (its log folder made).

    Made apart from :func:`start_server` so the caller holds it, to stop it, from the start.
    """
    from model.serving.launcher import VLLMServer

    if plan.executable is None:
        raise ValueError("create_server needs a plan whose vllm was found")
    paths.ensure_private_dir(plan.log_path.parent)
    return VLLMServer(plan.config, executable=plan.executable, api_key=plan.api_key)


def start_server(
    server: VLLMServer,
    *,
    on_started: Callable[[VLLMServer], None] = lambda _server: None,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> bool:
    """Start ``server`` (output to its plan's log) and wait until it answers.

    ``on_started`` once vLLM's process exists; ``on_progress`` for each step of the start
    read from its log. True when ready, False when ``should_stop`` asked to stop first.
    Raises :class:`~model.serving.launcher.ServeError` when vLLM cannot run or dies starting.
    """
    server.start(server_log_path(server.cfg))
    on_started(server)
    return server.wait_ready(on_progress=on_progress, should_stop=should_stop)


def serve_until(server: VLLMServer, stop: threading.Event,
                interval: float = 0.5) -> ServerExited | None:
    """Keep the ready ``server`` until ``stop`` is set (None) or it dies (why it did)."""
    while not stop.wait(interval):
        if server.returncode is not None:
            return server.failure()
    return None
