"""A stand-in for the ``vllm`` executable: ``vllm serve MODEL --port N ...`` that really serves.

It parses the flags ``holodesk serve`` passes (and accepts the rest), prints vLLM-like
loading lines (tqdm bars with ``\\r``, logger lines copied from real vLLM logs) over a few
seconds, then serves :class:`tests.support.fake_vllm.FakeVLLM` on the port until SIGINT or
SIGTERM, and exits 0. Like vLLM, it does not listen until "loaded"; like vLLM, it takes the
API key from ``--api-key`` or ``$VLLM_API_KEY``.

Run it through :func:`install_shims`, which writes ``vllm`` (and ``nvidia-smi``) scripts into a
folder for the test's PATH. Behaviour, from the environment:

=========================  ===========================================================
``FAKE_VLLM_LOAD_SECONDS``  how long "loading" takes (default 1)
``FAKE_VLLM_FAIL``          ``oom`` / ``arch`` / ``kv``: print that vLLM failure and exit 1
``FAKE_VLLM_RECORD``        a file to write ``{"argv", "has_key", "pid", "child"}`` to (JSON)
``FAKE_VLLM_CHILD``         ``1``: fork a worker that ignores SIGINT (like vLLM's engine core)
``FAKE_VLLM_STUBBORN``      ``1``: ignore SIGINT, so a stop needs SIGTERM
``FAKE_NVIDIA_SMI_DELAY``   seconds the ``nvidia-smi`` shim takes to answer (default 0)
=========================  ===========================================================
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.fake_vllm import ScriptedPolicy

REPO_ROOT = Path(__file__).resolve().parents[2]


def _out(text: str, end: str = "\n") -> None:
    sys.stdout.write(text + end)
    sys.stdout.flush()


def _info(source: str, where: str, text: str) -> None:
    stamp = time.strftime("%m-%d %H:%M:%S")
    _out(f"({source} pid={os.getpid()}) INFO {stamp} [{where}] {text}")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vllm")
    p.add_argument("--version", action="store_true")
    sub = p.add_subparsers(dest="command")
    s = sub.add_parser("serve")
    s.add_argument("model")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--host", default="0.0.0.0")
    s.add_argument("--served-model-name", default=None)
    s.add_argument("--max-model-len", type=int, default=32768)
    s.add_argument("--limit-mm-per-prompt", default='{"image": 1}')
    s.add_argument("--api-key", default=None)
    s.add_argument("--trust-remote-code", action="store_true")
    s.add_argument("--enable-prefix-caching", action="store_true")
    s.add_argument("--dtype", default="auto")
    s.add_argument("--mamba-ssm-cache-dtype", default="auto")
    s.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    s.add_argument("--max-num-seqs", type=int, default=None)
    s.add_argument("--ssl-keyfile", default=None)
    s.add_argument("--ssl-certfile", default=None)
    return p


def _bar(label: str, steps: int, pause: float, unit: str = "it/s") -> None:
    for i in range(steps + 1):
        pct = i * 100 // steps
        _out(f"{label}: {pct:3d}% Completed | {i}/{steps} [00:0{i}<00:00, 2.00{unit}]", end="\r")
        time.sleep(pause)
    _out("")


def _fail(kind: str) -> int:
    core = "EngineCore_DP0"
    _out(f"({core} pid={os.getpid()}) ERROR [core.py:708] EngineCore failed to start.")
    _out("Traceback (most recent call last):")
    _out('  File "/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 699')
    if kind == "oom":
        _out(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has "
            "a total capacity of 39.38 GiB of which 1.12 GiB is free."
        )
    elif kind == "arch":
        _out(
            "ValueError: Model architectures ['NemotronH_Nano_VL_V2'] are not supported for "
            "now. Supported architectures: dict_keys(['LlamaForCausalLM'])"
        )
    elif kind == "kv":
        _out(
            "ValueError: To serve at least one request with the models's max seq len (32768), "
            "(4.5 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(1.2 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`"
        )
    else:
        _out(f"RuntimeError: injected failure {kind!r}")
    _out("RuntimeError: Engine core initialization failed. See root cause above.")
    return 1


def serve(args: argparse.Namespace) -> int:
    from tests.support.fake_vllm import FakeVLLM

    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    if os.environ.get("FAKE_VLLM_STUBBORN") == "1":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    key = args.api_key or os.environ.get("VLLM_API_KEY") or None
    child: subprocess.Popen[bytes] | None = None
    if os.environ.get("FAKE_VLLM_CHILD") == "1":
        # A worker in our process group that outlives us on SIGINT, as a stuck engine might.
        code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(600)"
        child = subprocess.Popen([sys.executable, "-c", code])
    record = os.environ.get("FAKE_VLLM_RECORD")
    if record:
        Path(record).write_text(
            json.dumps(
                {
                    "argv": sys.argv[1:],
                    "has_key": key is not None,
                    "pid": os.getpid(),
                    "child": child.pid if child else None,
                }
            )
        )

    load = float(os.environ.get("FAKE_VLLM_LOAD_SECONDS", "1"))
    pause = load / 12
    api = "APIServer"
    _info(api, "api_server.py:1896", "vLLM API server version 0.14.1 (fake)")
    _info(api, "utils.py:328", f"non-default args: {{'model': '{args.model}'}}")
    _info("EngineCore_DP0", "gpu_model_runner.py:2602", f"Starting to load model {args.model}...")
    time.sleep(pause)
    fail = os.environ.get("FAKE_VLLM_FAIL", "")
    if fail == "arch":
        return _fail(fail)
    _bar("Loading safetensors checkpoint shards", 5, pause)
    _info("EngineCore_DP0", "default_loader.py:267", f"Loading weights took {load / 2:.2f} seconds")
    if fail:
        return _fail(fail)
    _info("EngineCore_DP0", "gpu_model_runner.py:2653", "Model loading took 23.10 GiB and 5.0 s")
    _info("EngineCore_DP0", "gpu_worker.py:298", "Available KV cache memory: 40.12 GiB")
    _bar("Capturing CUDA graphs (decode, FULL)", 3, pause)
    _info("EngineCore_DP0", "gpu_model_runner.py:3480", "Graph capturing finished in 3 secs")
    _info(api, "api_server.py:1971", f"Starting vLLM API server 0 on http://{args.host}:{args.port}")

    context = None
    if args.ssl_keyfile and args.ssl_certfile:  # uvicorn's https, as vLLM passes it on
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.ssl_certfile, args.ssl_keyfile)
    limits = json.loads(args.limit_mm_per_prompt)
    answer = {"thought": "fake vllm", "action": {"action": "answer", "text": "ok"}}
    fake = FakeVLLM(
        ScriptedPolicy([answer], repeat_last=True),
        served_model_name=args.served_model_name or args.model,
        image_limit=int(limits.get("image", 1)),
        max_model_len=args.max_model_len,
        api_key=key,
        port=args.port,
        ssl_context=context,
    )
    fake.start()
    _out(f"(APIServer pid={os.getpid()}) INFO:     Started server process [{os.getpid()}]")
    _out("INFO:     Waiting for application startup.")
    _out("INFO:     Application startup complete.")
    while not stop.wait(0.1):
        pass
    _out("INFO:     Shutting down")
    fake.stop()
    _out("INFO:     Finished server process")
    return 0


def main(argv: list[str] | None = None) -> int:
    # Like vLLM, which has hundreds of flags: the ones not modelled here are accepted.
    args, _unknown = _parser().parse_known_args(argv)
    if args.version:
        _out("0.14.1")
        return 0
    if args.command != "serve":
        _out("usage: vllm serve MODEL [options]")
        return 2
    return serve(args)


NVIDIA_SMI_H100 = "NVIDIA H100 80GB HBM3, 81559"


def install_shims(folder: Path, *, gpus: str | None = NVIDIA_SMI_H100, vllm: bool = True) -> Path:
    """Write ``vllm`` and ``nvidia-smi`` scripts into ``folder``; returns it (for PATH).

    ``gpus`` is what ``nvidia-smi --query-gpu=name,memory.total`` prints (``""``: no GPU
    listed; None: no ``nvidia-smi`` at all). ``vllm`` False leaves vLLM out.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if vllm:
        script = folder / "vllm"
        script.write_text(
            "#!/bin/sh\n"
            f'PYTHONPATH="{REPO_ROOT}${{PYTHONPATH:+:$PYTHONPATH}}" '
            f'exec "{sys.executable}" -m tests.support.fake_vllm_cli "$@"\n'
        )
        script.chmod(0o755)
    if gpus is not None:
        smi = folder / "nvidia-smi"
        # The delay keeps the GPU check busy for a while: a stop can come during the checks.
        # An absolute sleep: the test's PATH holds only the shims.
        sleep = shutil.which("sleep") or "/bin/sleep"
        wait = f'if [ -n "$FAKE_NVIDIA_SMI_DELAY" ]; then {sleep} "$FAKE_NVIDIA_SMI_DELAY"; fi\n'
        answer = f"printf '%s\\n' '{gpus}'\n" if gpus else "exit 0\n"
        smi.write_text("#!/bin/sh\n" + wait + answer)
        smi.chmod(0o755)
    return folder


def shim_path(folder: Path) -> str:
    """A PATH with only ``folder``: no real vllm or nvidia-smi can be found (the shims need
    nothing else: their interpreters are absolute paths)."""
    return str(folder)


if __name__ == "__main__":
    sys.exit(main())
