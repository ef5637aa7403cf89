"""The `holodesk serve` command: start vLLM serving Holotron-12B here, and stop it cleanly.

The sequence (settings to launcher config, the API key, the checks, the start) is
:mod:`app.serving`'s, shared with the desktop app; this module parses the options and prints.

Exit codes: 0 after a clean stop (Ctrl+C, SIGTERM) and for ``--print-command``; 1 when a check
fails (not Linux, vLLM not installed, no GPU, port taken) or vLLM dies; 2 for bad options or
settings; 3 when our model is already served on that port.

``--print-command`` never reads the keyring (a locked one could prompt or stall a command that
runs nothing): its note about the API key is printed only when ``$HOLODESK_API_KEY`` is set.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.helptext import examples
from app.cli.output import (
    EXIT_BUSY,
    EXIT_OK,
    EXIT_RUN_FAILED,
    EXIT_USAGE,
    error,
    fail,
    stop_signals,
)
from app.cli.render import render
from app.secrets import ENV_API_KEY
from app.serving import DEFAULT_HOST, serve_config, serve_profile, uses_server
from model.problem import Fix, HolodeskError, Problem
from model.serving.capacity import DEFAULT_RESERVE_GIB, GIB, KIB, MIB, GpuSource
from model.serving.launcher import (
    API_KEY_ENV,
    SERVED_MODEL_NAME,
    ServeConfig,
    build_command,
    format_command,
)

if TYPE_CHECKING:
    import signal

    from app.serving import ServePlan
    from app.settings import Settings
    from model.profiles import ModelProfile
    from model.serving.capacity import CapacityPlan, ModelPlan
    from model.serving.launcher import Progress, ServeError, VLLMServer

# Settings the options override: option dest -> settings key.
_OPTIONS = {
    "model": "serve_model",
    "profile": "model_profile",
    "port": "serve_port",
    "gpu_memory": "serve_gpu_memory",
    "max_model_len": "serve_max_model_len",
    "image_limit": "serve_image_limit",
    "max_num_seqs": "serve_max_num_seqs",
    "tls": "serve_tls",
    "ssl_keyfile": "serve_ssl_keyfile",
    "ssl_certfile": "serve_ssl_certfile",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to the `holodesk` subcommands."""
    p = sub.add_parser(
        "serve",
        help="start vLLM serving Holotron-12B on this machine (needs a 40 GB+ CUDA GPU)",
        description="Start vLLM with the flags Holotron-12B needs, wait until it answers, and "
        "stop it cleanly on Ctrl+C. Options default to the serve_* settings "
        "(`holodesk config show`). Extra vLLM flags go after `--`.",
        epilog=examples(
            ("holodesk serve", "Holotron-12B on this machine's GPU, at the endpoint's port"),
            ("holodesk serve --install", "first install vLLM in an environment of its own"),
            ("holodesk serve --plan", "how many sessions one GPU holds; runs nothing"),
            ("holodesk serve --print-command", "the vllm command, to run it yourself"),
            ("holodesk serve --tls", "https, with a self-signed certificate to pin"),
            ("holodesk serve -- --enforce-eager", "an extra vLLM flag")),
    )
    p.add_argument("--model", help="Hugging Face model name or local folder "
                   "(default: Hcompany/Holotron-12B)")
    p.add_argument("--profile", metavar="KEY",
                   help="the model's profile, which decides vLLM's flags (docs/models.md; "
                   "default: found from --model)")
    p.add_argument("--port", type=int, help="port (default: the endpoint's, else 8000)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--gpu-memory", type=float, metavar="SHARE",
                   help="share of GPU memory vLLM may take, 0.1-0.98 (default 0.9)")
    p.add_argument("--max-model-len", type=int, metavar="TOKENS",
                   help="context length in tokens (default 32768)")
    p.add_argument("--image-limit", type=int, metavar="N",
                   help="images per request (default 3, the screenshots a step sends)")
    p.add_argument("--max-num-seqs", type=int, metavar="N",
                   help="most sessions vLLM runs at once (default: as many as fit the GPU's "
                   "memory, see --plan)")
    p.add_argument("--tls", action="store_true", default=None,
                   help="speak https: with a self-signed certificate made (once) in holodesk's "
                   "data folder unless --ssl-keyfile/--ssl-certfile are given; prints the "
                   "certificate's SHA-256 fingerprint for the clients to pin")
    p.add_argument("--ssl-keyfile", metavar="PEM", help="your own TLS private key (with --tls)")
    p.add_argument("--ssl-certfile", metavar="PEM", help="your own TLS certificate (with --tls)")
    p.add_argument("--make-cert", action="store_true",
                   help="make a new self-signed pair for --tls (replacing holodesk's old one), "
                   "print its fingerprint and exit")
    p.add_argument("--vllm", metavar="PATH",
                   help="the vllm executable (default: next to this Python, then PATH)")
    p.add_argument("--install", action="store_true",
                   help="make a dedicated environment for vLLM in holodesk's data folder from the "
                   "system python3 and install the vLLM holodesk is made for (resumable: run it "
                   "again after an interruption); `holodesk serve` uses it from then on")
    p.add_argument("--python", metavar="PATH",
                   help="the Python to make that environment from (with --install; default: "
                   "the newest python3.x on PATH that vLLM supports)")
    plan = p.add_argument_group(
        "capacity plan",
        "--plan prints how many sessions fit one GPU, for Holotron-12B and for an "
        "attention-only model of Holo2-8B's shape, and runs nothing")
    plan.add_argument("--plan", action="store_true",
                      help="print the memory plan: weights, memory per session (KV cache and "
                      "Mamba state), sessions that fit; then exit")
    plan.add_argument("--gpu-memory-gb", type=float, metavar="GIB",
                      help="the GPU's memory in GiB (default: the largest GPU nvidia-smi "
                      "lists, else an 80 GB H100)")
    plan.add_argument("--context", type=int, metavar="TOKENS",
                      help="tokens per session (default: a long step of a run: three "
                      "screenshots at max_side plus 4,000 tokens of text)")
    plan.add_argument("--sessions", type=int, metavar="N",
                      help="also say whether N sessions fit, and the longest context each "
                      "can have")
    plan.add_argument("--reserve-gb", type=float, metavar="GIB",
                      help="GPU memory vLLM needs besides weights and caches (activations, "
                      f"CUDA graphs; default {DEFAULT_RESERVE_GIB:g})")
    plan.add_argument("--json", action="store_true", help="with --plan: print it as JSON")
    p.add_argument("--print-command", action="store_true",
                   help="print the vllm command and exit; runs nothing (an API key is never "
                   f"printed: vLLM takes it from ${API_KEY_ENV})")
    p.add_argument("extra", nargs="*", metavar="-- VLLM_FLAG",
                   help="more flags for `vllm serve`, after `--` (e.g. -- --enforce-eager)")
    p.set_defaults(func=_cmd_serve)


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
    "max_num_seqs": "the most sessions vLLM runs at once",
    "tls": "https on or off",
    "ssl_keyfile": "a PEM key file",
    "ssl_certfile": "a PEM certificate file",
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
    "--ssl-keyfile": "use `holodesk serve --tls --ssl-keyfile PEM --ssl-certfile PEM` (before "
    "`--`), so holodesk checks the server over https too",
    "--ssl-certfile": "use `holodesk serve --tls --ssl-keyfile PEM --ssl-certfile PEM` (before "
    "`--`), so holodesk checks the server over https too",
}


def _managed_flag(extra: Sequence[str]) -> tuple[str, str] | None:
    for arg in extra:
        flag = arg.split("=", 1)[0]
        if flag in _MANAGED_FLAGS:
            return flag, _MANAGED_FLAGS[flag]
    return None


def _cmd_serve(args: argparse.Namespace) -> int:
    import os

    from app.serving import plan_server
    from model.serving.launcher import find_vllm

    managed = _managed_flag(args.extra)
    if managed is not None:
        return fail(Problem(f"{managed[0]} cannot be passed after `--`", Fix(managed[1])),
                    EXIT_USAGE)
    bad = _option_problem(args)
    if bad is not None:
        return fail(Problem(bad[0], Fix(bad[1])), EXIT_USAGE)
    if args.plan:
        return _plan(args)
    if args.make_cert:
        return _make_cert(args.host)
    if args.install:
        return _install(args.python, serve_profile(_settings(args)))
    from app.cli.approve import settle_before_run

    settle_before_run()  # serve_model written by hand is code vLLM would run: asked, or not used
    settings = _settings(args)
    if args.print_command:
        from app.serving import planned_max_num_seqs
        from app.vllm_env import managed_vllm

        planned = planned_max_num_seqs(settings)
        cfg = serve_config(settings, host=args.host, extra_args=args.extra,
                           max_num_seqs=planned)
        executable = find_vllm(args.vllm, managed=managed_vllm(cfg.profile))
        print(format_command(build_command(cfg, _shown_executable(executable))))
        if planned is not None and cfg.max_num_seqs == planned:
            # On stderr: stdout stays the command alone, to paste or pipe.
            print(f"note: --max-num-seqs {planned}: the sessions that fit the GPU's memory "
                  "(`holodesk serve --plan` shows how; --max-num-seqs N sets it)",
                  file=sys.stderr)
        if cfg.ssl_certfile is not None:
            if Path(cfg.ssl_certfile).is_file():
                from model.tls import fingerprint_of_file

                print(f"# TLS certificate SHA-256 fingerprint: "
                      f"{fingerprint_of_file(Path(cfg.ssl_certfile))}")
            else:
                print("# The TLS key and certificate do not exist yet: `holodesk serve "
                      "--make-cert` makes them (and `holodesk serve --tls` would).")
        # Only the environment, never the keyring: see the module docstring.
        if os.environ.get(ENV_API_KEY, "").strip():
            print(
                f"# The API key is passed in ${API_KEY_ENV}, never on the command line (`ps` "
                f"would show it).\n# To run this by hand: export {API_KEY_ENV}=<your key> first."
            )
        return EXIT_OK
    try:
        try:
            plan = plan_server(settings, host=args.host, extra_args=args.extra,
                               executable=args.vllm)
        except HolodeskError as e:  # TLS files missing or not makeable
            return fail(e, EXIT_RUN_FAILED)
        return _serve(plan)
    except KeyboardInterrupt:  # Ctrl+C during the checks, before vLLM is started
        print("\nholodesk: stopped; vLLM was not started", file=sys.stderr)
        return EXIT_RUN_FAILED


def _serve(plan: ServePlan) -> int:
    from app.serving import Verdict, check, create_server

    cfg = plan.config
    checks = check(plan)
    running = checks.running
    if checks.verdict is Verdict.SERVED_ALREADY:
        return fail(f"vLLM is already running at {cfg.base_url} (model {SERVED_MODEL_NAME}); "
                    "nothing to start.", EXIT_BUSY)
    if checks.verdict is Verdict.OTHER_SERVER and running is not None:
        what = (
            "refuses our API key" if running.needs_key
            else f"serves {', '.join(running.models) or 'no model'}"
        )
        return fail(f"another server already answers at {cfg.base_url} and {what}.\n"
                    f"Fix: stop it, or serve on another port (--port {cfg.port + 1}).")
    for problem in checks.problems:
        error(("" if problem.fatal else "warning: ") + render(problem))
    if checks.verdict is not Verdict.GO:
        return EXIT_RUN_FAILED
    _note_endpoint(plan.settings, cfg)

    server = create_server(plan)
    stop = threading.Event()

    def on_signal(_sig: signal.Signals) -> None:
        stop.set()

    # SIGHUP: the terminal was closed. A second Ctrl+C only asks again: the stop below is
    # bounded, and vLLM must not be left behind.
    with stop_signals(on_signal, signals=("SIGINT", "SIGTERM", "SIGHUP"),
                      second_interrupt_kills=False):
        try:
            return _run(server, plan, stop)
        finally:
            server.stop()  # never leave vLLM behind, whatever happened above


def _run(server: VLLMServer, plan: ServePlan, stop: threading.Event) -> int:
    from app.serving import serve_until, start_server
    from model.serving.launcher import ServeError

    cfg, log_path = plan.config, plan.log_path
    print(format_command(server.command), flush=True)
    if plan.api_key:
        print(f"(with the API key in ${API_KEY_ENV})")
    print(f"log: {log_path}", flush=True)

    def started(server: VLLMServer) -> None:
        print(f"starting vLLM (pid {server.vllm_pid}); loading the model takes minutes, the "
              "first time also a download of about 25 GB. Ctrl+C stops it.", flush=True)

    try:
        ready = start_server(server, on_started=started, on_progress=_Reporter(),
                             should_stop=stop.is_set)
    except ServeError as exc:  # vLLM cannot be run (a broken venv, a bad shebang), or died
        return _report_failure(exc, log_path)
    if ready:
        print(f"ready at {cfg.base_url} (model {cfg.served_model_name})", flush=True)
        if plan.certificate is not None:
            _print_pin(plan.certificate.fingerprint, cfg)
        died = serve_until(server, stop)
        if died is not None:
            return _report_failure(died, log_path, after_ready=True)
    print("stopping vLLM...", flush=True)
    server.stop()
    print("stopped.", flush=True)
    return EXIT_OK


def _client_url(cfg: ServeConfig) -> str:
    host = cfg.host if cfg.host not in ("", "0.0.0.0", "::") else "THIS-HOST"
    host = f"[{host}]" if ":" in host else host
    return f"https://{host}:{cfg.port}/v1"


def _print_pin(fingerprint: str, cfg: ServeConfig | None) -> None:
    """The certificate's fingerprint, and what each client runs to trust exactly it."""
    print(f"TLS certificate SHA-256 fingerprint: {fingerprint}", flush=True)
    url = _client_url(cfg) if cfg is not None else "https://THIS-HOST:PORT/v1"
    print("On each client (compare the fingerprint over a channel you trust, not this "
          "network):\n"
          f"  holodesk config set endpoint {url}\n"
          f"  holodesk config set tls_fingerprint {fingerprint}", flush=True)


# --------------------------------------------------------------------------- --plan


def _plan_problem(args: argparse.Namespace) -> Problem | None:
    """The first of --plan's own options given a value it cannot plan with."""
    checks = (
        ("--gpu-memory-gb", args.gpu_memory_gb, 1.0, "the GPU's memory in GiB, e.g. 80"),
        ("--context", args.context, 1, "tokens per session, e.g. 12000"),
        ("--sessions", args.sessions, 1, "a number of sessions, e.g. 100"),
        ("--reserve-gb", args.reserve_gb, 0.0, "GiB for activations and CUDA graphs, e.g. 4"),
    )
    for flag, value, low, meaning in checks:
        if value is not None and (value < low or value != value):  # NaN compares unequal
            return Problem(f"{flag} {value:g} is too small",
                           Fix(f"use {flag} of at least {low:g} ({meaning})"))
    return None


def _plan(args: argparse.Namespace) -> int:
    import json

    from app.serving import PlanUnknown, capacity_plan, plan_gpu

    bad = _plan_problem(args)
    if bad is not None:
        return fail(bad, EXIT_USAGE)
    try:
        plan = capacity_plan(_settings(args), gpu=plan_gpu(args.gpu_memory_gb),
                             context=args.context, sessions=args.sessions,
                             reserve_gib=args.reserve_gb)
    except ValueError as e:
        return fail(Problem(str(e), Fix("see `holodesk serve --help` for --plan's options")),
                    EXIT_USAGE)
    except PlanUnknown as e:
        return fail(e, EXIT_RUN_FAILED)
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2))
    else:
        print(format_plan(plan))
    return EXIT_OK


def _gib(n: int) -> str:
    return f"{n / GIB:,.1f} GiB"


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f} MiB"


def format_plan(plan: CapacityPlan) -> str:
    """The plan as the terminal shows it: one column per model, then sources and assumptions."""
    h, a = plan.hybrid, plan.attention
    gpu = plan.gpu
    where = {GpuSource.NVIDIA_SMI: "from nvidia-smi", GpuSource.OPTION: "--gpu-memory-gb",
             GpuSource.DEFAULT: "assumed: no GPU found; --gpu-memory-gb sets it"}[gpu.source]
    lines = [
        f"GPU: {gpu.name}, {_gib(gpu.memory_bytes)} ({where}); vLLM takes "
        f"{plan.utilization:g} of it (--gpu-memory-utilization): {_gib(plan.vllm_bytes)}",
        f"Context per session: {plan.context:,} tokens"
        + (f" ({plan.workload.describe()})" if plan.context == plan.workload.context
           else " (--context)"),
        "",
    ]
    ssm, conv = plan.dtypes.ssm_name, plan.dtypes.model_name

    def dash(value: int, text: str) -> str:
        return text if value else "-"

    rows: list[tuple[str, str, str]] = [
        ("", h.arch.name, f"attention-only ({a.arch.name})"),
        ("layers", h.arch.describe(), a.arch.describe()),
        (f"weights ({plan.dtypes.model_name})", _gib(h.arch.weight_bytes),
         _gib(a.arch.weight_bytes)),
        ("reserve (activations, CUDA graphs)", _gib(plan.reserve_bytes), _gib(plan.reserve_bytes)),
        ("left for sessions", _gib(max(0, h.pool_bytes)), _gib(max(0, a.pool_bytes))),
        ("attention KV cache per token", f"{h.kv_bytes_per_token / KIB:,.0f} KiB",
         f"{a.kv_bytes_per_token / KIB:,.0f} KiB"),
        (f"attention KV cache x {plan.context:,} tokens", _mib(h.kv_bytes), _mib(a.kv_bytes)),
        (f"Mamba SSM state ({ssm})", dash(h.ssm_state_bytes, _mib(h.ssm_state_bytes)),
         dash(a.ssm_state_bytes, _mib(a.ssm_state_bytes))),
        (f"Mamba conv state ({conv})", dash(h.conv_state_bytes, _mib(h.conv_state_bytes)),
         dash(a.conv_state_bytes, _mib(a.conv_state_bytes))),
        ("memory per session", _mib(h.session_bytes), _mib(a.session_bytes)),
        ("sessions that fit", f"{h.sessions_fit:,}", f"{a.sessions_fit:,}"),
    ]
    if h.sessions is not None:
        n = h.sessions

        def fits(p: ModelPlan) -> str:
            need = p.sessions_bytes or 0
            return f"{_gib(need)}: " + ("fits" if n <= p.sessions_fit else "does not fit")

        def longest(p: ModelPlan) -> str:
            most = p.sessions_max_context or 0
            return f"{most:,} tokens" if most else "none (the state alone does not fit)"

        rows += [
            (f"{n:,} sessions need", fits(h), fits(a)),
            (f"longest context for {n:,} sessions", longest(h), longest(a)),
        ]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines += ["  ".join((r[0].ljust(widths[0]), r[1].rjust(widths[1]), r[2].rjust(widths[2])))
              .rstrip() for r in rows]
    lines.append("")
    cross = plan.crossover
    if cross is not None and h.fixed_bytes:
        lines.append(
            f"Per-session memory is equal at {cross:,.0f} tokens: below that {h.arch.name}'s "
            f"fixed Mamba state costs more, above it its KV cache ({h.kv_bytes_per_token // KIB}"
            f" KiB per token against {a.kv_bytes_per_token // KIB}) makes each session "
            "cheaper. One screenshot alone is "
            f"{plan.workload.tokens_per_image:,} tokens.")
    if h.pool_bytes <= 0:
        lines.append(f"{h.arch.name}'s weights and the reserve do not fit in vLLM's share of "
                     "this GPU: raise --gpu-memory or use a larger GPU.")
    if h.sessions_fit and plan.context == plan.workload.context:
        lines.append(f"`holodesk serve` passes --max-num-seqs {max(1, h.sessions_fit)} "
                     "(--max-num-seqs N sets it): more sessions than fit would be preempted "
                     "and computed again.")
    lines += [
        "",
        "Sources:",
        f"  {h.arch.name}: {h.arch.source}",
        f"    weights: {h.arch.weights_source}",
        f"  {a.arch.name}: {a.arch.source}",
        f"    weights: {a.arch.weights_source}",
        f"  screenshot tokens: {plan.workload.image_rule.source}",
        "  state shapes and dtypes: vLLM, vllm/model_executor/layers/mamba/mamba_utils.py "
        "(MambaStateShapeCalculator.mamba2_state_shape, MambaStateDtypeCalculator)",
        "Assumptions:",
        f"  KV cache at the model dtype ({plan.dtypes.model_name}); SSM state at {ssm} "
        f"(--mamba-ssm-cache-dtype {ssm}), conv state at {conv}.",
        f"  {_gib(plan.reserve_bytes)} for activations, CUDA graphs and the CUDA context "
        "(--reserve-gb): vLLM's log says what it really left for caches "
        "('Available KV cache memory').",
        "  One GPU (no tensor parallelism); vLLM's block rounding and prefix-cache sharing "
        "between sessions are not counted.",
    ]
    lines += [f"Note: {note}" for note in plan.notes]
    return "\n".join(lines)


def _install(python: str | None, profile: ModelProfile) -> int:
    from app.vllm_env import InstallError, install, managed_env, requirement_for

    env = managed_env(profile)
    requirement = requirement_for(profile)
    print(f"installing {requirement} for {profile.display_name} into its own environment: "
          f"{env.root}", flush=True)
    try:
        packages = install(env, requirement=requirement, python=python,
                           on_progress=lambda line: print(f"  {line}", flush=True))
    except InstallError as e:
        return fail(e, EXIT_RUN_FAILED)
    except KeyboardInterrupt:
        print("\nholodesk: interrupted; run `holodesk serve --install` again to go on",
              file=sys.stderr)
        return EXIT_RUN_FAILED
    print(f"installed ({len(packages)} packages, written down in {env.lock_path}):")
    for name, version in packages:
        print(f"  {name} {version}")
    print(f"`holodesk serve` uses this environment for {profile.display_name} from now on.")
    return EXIT_OK


def _make_cert(host: str) -> int:
    from app.serving import default_tls_files, make_certificate

    try:
        made = make_certificate(host)
    except HolodeskError as e:
        return fail(e, EXIT_RUN_FAILED)
    key, cert = default_tls_files()
    print(f"made a self-signed pair: {cert} (key: {key}, readable by you only)")
    _print_pin(made.fingerprint, None)
    print("Serve with it: holodesk serve --tls (or holodesk config set serve_tls true)")
    return EXIT_OK


def _report_failure(exc: ServeError, log_path: Path, *, after_ready: bool = False) -> int:
    when = "vLLM stopped" if after_ready else "vLLM did not start"
    error(Problem(f"{when}: {exc.message}", exc.fix))
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


def _note_endpoint(settings: Settings, cfg: ServeConfig) -> None:
    """Say so when `holodesk run` will not talk to the server being started."""
    if uses_server(settings, cfg):
        return
    print(
        f"note: the endpoint setting is {settings.endpoint}, so `holodesk run` will not use "
        f"this server. To use it: holodesk config set endpoint {cfg.base_url}",
        file=sys.stderr,
    )
