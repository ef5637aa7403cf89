"""`holodesk serve --plan` and the --max-num-seqs it gives `holodesk serve`, through the real CLI.

The figures are worked out by hand in tests/model/test_capacity.py; here: what reaches the
person (the table, the JSON, the sources), where the GPU's size comes from, and the flag in
the vllm command.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from model.serving.launcher import ServeConfig, build_command, format_command
from tests.model.test_capacity import NEMOTRON_VL_CONFIG
from tests.support.e2e import Result, holodesk_argv, holodesk_env
from tests.support.fake_vllm_cli import install_shims, shim_path
from tests.support.home import REPO_ROOT, Home


@pytest.fixture
def shims(tmp_path: Path) -> Path:
    return install_shims(tmp_path / "bin")


def serve(home: Home, bin_dir: Path, *args: str, **extra: str) -> Result:
    env = holodesk_env(home)
    env["PATH"] = shim_path(bin_dir)
    # A cache of our own: the developer's real Hugging Face cache must not change the figures.
    env["HF_HOME"] = str(home.root / "hf")
    env["FAKE_VLLM_RECORD"] = str(home.root / "vllm-ran.json")
    env.update(extra)
    proc = subprocess.run(holodesk_argv("serve", *args), env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def test_plan_prints_both_models_side_by_side(home: Home, shims: Path) -> None:
    result = serve(home, shims, "--plan")
    assert result.returncode == 0, result
    out = result.stdout
    assert out.startswith("GPU: NVIDIA H100 80GB HBM3, 79.6 GiB (from nvidia-smi); vLLM takes "
                          "0.9 of it (--gpu-memory-utilization): 71.7 GiB\n")
    assert ("Context per session: 10,912 tokens (3 screenshots of 2048x1152 x 2,304 tokens + "
            "4,000 tokens of text)") in out
    lines = out.splitlines()

    def row(label: str) -> list[str]:
        (line,) = [ln for ln in lines if ln.startswith(label)]
        return line[len(label):].split()

    assert row("attention KV cache per token") == ["24", "KiB", "144", "KiB"]
    assert row("Mamba SSM state (float32)") == ["140.0", "MiB", "-"]
    assert row("Mamba conv state (bfloat16)") == ["2.0", "MiB", "-"]
    assert row("memory per session") == ["397.7", "MiB", "1,534.5", "MiB"]
    assert row("sessions that fit") == ["111", "34"]
    assert "Per-session memory is equal at 1,211 tokens" in out
    assert "`holodesk serve` passes --max-num-seqs 111" in out
    # Every figure names where it came from.
    assert "built-in, from https://huggingface.co/nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16" in out
    assert "built-in, from https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct" in out
    assert "vllm/model_executor/layers/mamba/mamba_utils.py" in out
    assert "4.0 GiB for activations, CUDA graphs and the CUDA context (--reserve-gb)" in out
    # It plans; it starts nothing.
    assert not (home.root / "vllm-ran.json").exists()


def test_plan_as_json(home: Home, shims: Path) -> None:
    result = serve(home, shims, "--plan", "--json", "--sessions", "100")
    assert result.returncode == 0, result
    data = json.loads(result.stdout)
    assert data["gpu"] == {"name": "NVIDIA H100 80GB HBM3", "memory_bytes": 81_559 * 1024**2,
                           "source": "nvidia-smi"}
    assert data["context_tokens"] == 10_912
    holotron, dense = data["holotron"], data["attention_only"]
    assert (holotron["sessions_fit"], dense["sessions_fit"]) == (111, 34)
    assert holotron["session_bytes"] == 417_038_336
    assert holotron["ssm_state_bytes"] == 146_800_640
    assert holotron["conv_state_bytes"] == 2_064_384
    assert (holotron["sessions_fits"], dense["sessions_fits"]) == (True, False)
    assert (holotron["sessions_max_context"], dense["sessions_max_context"]) == (12_934, 3_738)
    assert data["crossover_tokens"] == pytest.approx(1_211.4667, abs=1e-3)
    assert holotron["architecture"]["source"].startswith("built-in, from https://")


def test_plan_for_a_given_gpu_context_and_sessions(home: Home, shims: Path) -> None:
    result = serve(home, shims, "--plan", "--gpu-memory-gb", "40", "--context", "30000",
                   "--sessions", "100")
    assert result.returncode == 0, result
    out = result.stdout
    assert "GPU: a 40 GiB GPU, 40.0 GiB (--gpu-memory-gb)" in out
    assert "Context per session: 30,000 tokens (--context)" in out
    # 40 GiB x 0.9 = 38,654,705,664; less 26e9 and 4 GiB: 8,359,738,368 for Holotron's
    # sessions of 30,000 x 24,576 + 148,865,024 = 886,145,024 bytes: 9. Attention-only:
    # 16,819,738,368 / (30,000 x 147,456 = 4,423,680,000): 3.
    (fit,) = [ln for ln in out.splitlines() if ln.startswith("sessions that fit")]
    assert fit.split()[-2:] == ["9", "3"]
    assert "82.5 GiB: does not fit" in out
    # Not the default context: this plan is not what `holodesk serve` passes.
    assert "passes --max-num-seqs" not in out


def test_without_nvidia_smi_the_reference_card_is_assumed_and_said(
    home: Home, tmp_path: Path
) -> None:
    bare = install_shims(tmp_path / "nogpu", gpus=None)
    result = serve(home, bare, "--plan")
    assert result.returncode == 0, result
    assert ("GPU: NVIDIA H100 80GB HBM3, 79.6 GiB (assumed: no GPU found; --gpu-memory-gb "
            "sets it)") in result.stdout


def test_a_cached_config_json_is_used_and_named(home: Home, shims: Path) -> None:
    snapshot = (home.root / "hf" / "hub" / "models--Hcompany--Holotron-12B" / "snapshots"
                / "abc123")
    snapshot.mkdir(parents=True)
    config = json.loads(json.dumps(NEMOTRON_VL_CONFIG))
    # A made-up variant with twice the attention layers: 12 x 4 KiB = 48 KiB per token.
    config["llm_config"]["hybrid_override_pattern"] = "M*" * 12 + "M" * 16
    (snapshot / "config.json").write_text(json.dumps(config))
    result = serve(home, shims, "--plan")
    assert result.returncode == 0, result
    assert f"Holotron-12B: local cache, {snapshot / 'config.json'}" in result.stdout
    (kv,) = [ln for ln in result.stdout.splitlines() if ln.startswith("attention KV cache per")]
    assert kv.split()[-4:] == ["48", "KiB", "144", "KiB"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--context", "0"), "--context 0 is too small"),
        (("--gpu-memory-gb", "0.5"), "--gpu-memory-gb 0.5 is too small"),
        (("--sessions", "0"), "--sessions 0 is too small"),
    ],
)
def test_plan_refuses_bad_numbers(
    home: Home, shims: Path, args: tuple[str, ...], said: str
) -> None:
    result = serve(home, shims, "--plan", *args)
    assert result.returncode == 2, result
    assert said in result.stderr and "Fix: use" in result.stderr


# --------------------------------------------------------------------------- --max-num-seqs


def _argv(home: Home, shims: Path, *args: str, **extra: str) -> list[str]:
    result = serve(home, shims, "--print-command", *args, **extra)
    assert result.returncode == 0, result
    return result.stdout.replace("\\\n", " ").split()


def _seqs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--max-num-seqs"]


def test_the_option_overrides_the_plan(home: Home, shims: Path) -> None:
    result = serve(home, shims, "--print-command", "--max-num-seqs", "64")
    assert result.returncode == 0, result
    assert result.stdout == format_command(build_command(ServeConfig(max_num_seqs=64))) + "\n"
    assert "note: --max-num-seqs" not in result.stderr


def test_the_setting_overrides_the_plan(home: Home, shims: Path) -> None:
    assert _seqs(_argv(home, shims, HOLODESK_SERVE_MAX_NUM_SEQS="50")) == ["50"]


def test_a_flag_after_the_dashes_wins(home: Home, shims: Path) -> None:
    assert _seqs(_argv(home, shims, "--", "--max-num-seqs", "7")) == ["7"]


def test_the_option_is_checked_like_the_others(home: Home, shims: Path) -> None:
    result = serve(home, shims, "--print-command", "--max-num-seqs", "0")
    assert result.returncode == 2, result
    assert "--max-num-seqs 0 is out of range" in result.stderr
    assert "use --max-num-seqs from 1 to 1024" in result.stderr


def test_the_plan_follows_the_gpu_share(home: Home, shims: Path) -> None:
    # 0.5 x 81,559 MiB = 42,760,404,992 bytes; less 26e9 and 4 GiB = 12,465,437,696;
    # / 417,038,336 = 29.9: 29 sessions.
    assert _seqs(_argv(home, shims, "--gpu-memory", "0.5")) == ["29"]


def test_the_plan_counts_screenshots_with_the_served_models_rule(tmp_path: Path) -> None:
    # Holo3.1 (Qwen3.5's dynamic resolution): a 1920x1080 frame is 60 x 34 = 2,040 tokens,
    # where Holotron-12B's tiling makes it 4x2 tiles + a thumbnail = 2,304
    # (tests/model/test_capacity.py works both out).
    from app.serving import capacity_plan
    from app.settings import Settings
    from model.serving.capacity import DEFAULT_GPU

    environ = {"HF_HOME": str(tmp_path / "hf")}  # no cached config.json: the built-in figures
    for model, tokens in (("Hcompany/Holo-3.1-9B", 2_040), ("Hcompany/Holotron-12B", 2_304)):
        settings = Settings().with_overrides({"serve_model": model, "max_side": 1920})
        plan = capacity_plan(settings, gpu=DEFAULT_GPU, environ=environ)
        assert (plan.workload.image_width, plan.workload.image_height) == (1920, 1080)
        assert plan.workload.tokens_per_image == tokens, model
        assert plan.context == 3 * tokens + 4_000
