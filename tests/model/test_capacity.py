"""The capacity plan's arithmetic (model/serving/capacity.py) against figures worked out by hand.

Each test writes its hand computation as a comment; the numbers come from the published
configurations named in the module (Holotron-12B's base language model, Qwen3-VL-8B's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model.profiles import (
    GENERIC_PROFILE,
    HOLO4_27B,
    HOLO4_35B,
    HOLO31_08B,
    HOLO31_4B,
    HOLO31_9B,
    HOLO31_35B,
    HOLOTRON4_30B,
    HOLOTRON_12B,
    LEGACY_PROFILE,
    NEMOTRON_TILES,
    ImageRule,
    dynamic_image_tokens,
)
from model.serving.capacity import (
    ATTENTION_REFERENCE,
    DEFAULT_GPU,
    GIB,
    HOLOTRON,
    KIB,
    MIB,
    ConfigError,
    Gpu,
    GpuSource,
    Workload,
    architecture_from_config,
    hub_cache,
    image_tokens,
    load_architecture,
    make_plan,
    max_num_seqs,
    read_cached_config,
)

# The language model section of nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16's config.json: the
# keys the planner reads, with their published values, nested as an InternVL-style config.
NEMOTRON_VL_CONFIG: dict[str, Any] = {
    "architectures": ["NemotronH_Nano_VL_V2"],
    "llm_config": {
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 62,
        "hybrid_override_pattern": "M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M-",
        "mamba_num_heads": 128,
        "mamba_head_dim": 80,
        "ssm_state_size": 128,
        "n_groups": 8,
        "conv_kernel": 4,
        "vocab_size": 131072,
    },
}
# Qwen3-VL-8B's text_config (Holo2-8B's base).
QWEN3_VL_CONFIG: dict[str, Any] = {
    "architectures": ["Qwen3VLForConditionalGeneration"],
    "text_config": {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 36,
    },
}


# --------------------------------------------------------------------------- per session


def test_holotron_kv_cache_per_token() -> None:
    # 6 attention layers x 2 (K and V) x 8 KV heads x 128 x 2 bytes (bf16)
    # = 6 x 4,096 = 24,576 bytes = 24 KiB.
    assert HOLOTRON.attention.kv_bytes_per_token(2) == 24_576 == 24 * KIB


def test_holotron_mamba_state_per_session() -> None:
    mamba = HOLOTRON.mamba
    assert mamba is not None
    # SSM state: 28 layers x 128 heads x 80 head_dim x 128 state x 4 bytes (float32)
    # = 28 x 5,242,880 = 146,800,640 bytes = 140 MiB exactly.
    assert mamba.ssm_state_bytes(4) == 146_800_640 == 140 * MIB
    # Conv state: conv_dim = 128 x 80 + 2 x 8 groups x 128 state = 10,240 + 2,048 = 12,288;
    # 28 layers x (4 - 1) x 12,288 x 2 bytes (bf16) = 28 x 73,728 = 2,064,384 bytes
    # = 1.96875 MiB.
    assert mamba.conv_dim == 12_288
    assert mamba.conv_state_bytes(2) == 2_064_384
    # Together 148,865,024 bytes, about 142 MiB: the figure docs/holotron.md gives.
    assert mamba.ssm_state_bytes(4) + mamba.conv_state_bytes(2) == 148_865_024


def test_attention_reference_kv_cache_per_token() -> None:
    # 36 layers x 2 x 8 KV heads x 128 x 2 bytes = 36 x 4,096 = 147,456 bytes = 144 KiB.
    assert ATTENTION_REFERENCE.attention.kv_bytes_per_token(2) == 147_456 == 144 * KIB
    assert ATTENTION_REFERENCE.mamba is None


def test_a_session_at_the_default_context() -> None:
    plan = make_plan()
    # A long step: 3 screenshots of 2048x1152 (4x2 tiles + thumbnail = 9 x 256 = 2,304
    # tokens each) + 4,000 tokens of text = 6,912 + 4,000 = 10,912 tokens.
    assert plan.context == 10_912
    h, a = plan.hybrid, plan.attention
    # Holotron: 10,912 x 24,576 = 268,173,312 bytes of KV (255.75 MiB) + 148,865,024 of state
    # = 417,038,336 bytes = 397.71875 MiB.
    assert h.kv_bytes == 268_173_312
    assert h.session_bytes == 417_038_336
    # Attention-only: 10,912 x 147,456 = 1,609,039,872 bytes = 1,534.5 MiB, nothing fixed.
    assert a.session_bytes == a.kv_bytes == 1_609_039_872
    assert a.fixed_bytes == 0


# --------------------------------------------------------------------------- on the GPU


def test_sessions_that_fit_an_h100() -> None:
    plan = make_plan(gpu=DEFAULT_GPU, utilization=0.9)
    # vLLM's share: 81,559 MiB = 85,520,809,984 bytes; x 0.9 = 76,968,728,985.6, rounded
    # down.
    assert plan.vllm_bytes == 76_968_728_985
    h, a = plan.hybrid, plan.attention
    # Holotron: 76,968,728,985 - 26,000,000,000 weights - 4 GiB (4,294,967,296) reserve
    # = 46,673,761,689 bytes for sessions; / 417,038,336 = 111.9: 111 sessions.
    assert h.pool_bytes == 46_673_761_689
    assert h.sessions_fit == 111
    # Attention-only: 76,968,728,985 - 17,540,000,000 - 4,294,967,296 = 55,133,761,689;
    # / 1,609,039,872 = 34.27: 34 sessions. About 3.3 times fewer.
    assert a.pool_bytes == 55_133_761_689
    assert a.sessions_fit == 34
    assert max_num_seqs(plan) == 111


def test_crossover_where_a_session_costs_the_same() -> None:
    plan = make_plan()
    # Fixed state / difference in KV per token: 148,865,024 / (147,456 - 24,576)
    # = 148,865,024 / 122,880 = 1,211.47 tokens; below one screenshot (2,304).
    assert plan.crossover == pytest.approx(1_211.4667, abs=1e-3)
    at = make_plan(context=1_211)
    assert at.hybrid.session_bytes > at.attention.session_bytes
    after = make_plan(context=1_212)
    assert after.hybrid.session_bytes < after.attention.session_bytes


def test_asking_about_a_number_of_sessions() -> None:
    plan = make_plan(sessions=100)
    h, a = plan.hybrid, plan.attention
    # 100 x 417,038,336 = 41,703,833,600 bytes: within Holotron's 46,673,761,689.
    assert h.sessions_bytes == 41_703_833_600 and h.sessions_bytes <= h.pool_bytes
    # The longest context for 100: 46,673,761,689 // 100 = 466,737,616 per session, less
    # 148,865,024 of state = 317,872,592; // 24,576 = 12,934.3: 12,934 tokens.
    assert h.sessions_max_context == 12_934
    # Attention-only: 55,133,761,689 // 100 = 551,337,616; // 147,456 = 3,738.998: 3,738
    # tokens, not even two screenshots.
    assert a.sessions_max_context == 3_738
    # 2,000 sessions: Holotron's state alone (148.9 MB each) is more than its share.
    assert make_plan(sessions=2_000).hybrid.sessions_max_context == 0


def test_a_gpu_too_small_for_the_weights_fits_nothing() -> None:
    small = Gpu("a 24 GiB GPU", 24 * GIB, GpuSource.OPTION)
    plan = make_plan(gpu=small)
    # 24 GiB x 0.9 = 23,192,823,398 bytes < 26 GB of weights alone.
    assert plan.hybrid.pool_bytes < 0
    assert plan.hybrid.sessions_fit == 0
    assert max_num_seqs(plan) == 1  # vLLM needs at least one


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"utilization": 0.0}, "between 0 and 1"),
        ({"sessions": 0}, "at least 1"),
        ({"context": 0}, "at least 1 token"),
    ],
)
def test_bad_inputs_are_refused(kwargs: dict[str, float], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        make_plan(**kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- screenshots


@pytest.mark.parametrize(
    ("size", "tokens"),
    [
        # 16:9 above 1,048,576 px: 4x2 grid (ratio 2.0, as close as 2x1, and the area is
        # there for it) + thumbnail = 9 x 256 = 2,304.
        ((2048, 1152), 2_304),
        ((1366, 768), 2_304),
        # 1280x720 = 921,600 px, not above half of 4x2's 8 tiles x 512 x 512: 2x1 + thumbnail
        # = 3 x 256 = 768.
        ((1280, 720), 768),
        # 16:10 (1.6): 3x2 (1.5) is closest: 7 x 256 = 1,792.
        ((1920, 1200), 1_792),
        # 21:9 (2.37): 5x2 (2.5): 11 x 256 = 2,816.
        ((2560, 1080), 2_816),
        # A square: one tile, no thumbnail.
        ((400, 400), 256),
    ],
)
def test_image_tokens_follow_the_tiling(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(*size) == tokens


@pytest.mark.parametrize(
    ("size", "tokens"),
    [
        # Each side rounded to a multiple of 32 (patch 16 x merge 2), a token per 32x32 block.
        # 2048x1152: 64 x 36 = 2,304 (the same as the tiling, by chance).
        ((2048, 1152), 2_304),
        # 1920x1080: 1080 / 32 = 33.75 -> 34, so 60 x 34 = 2,040.
        ((1920, 1080), 2_040),
        # 1280x720: 720 / 32 = 22.5 -> 22 (Python rounds half to even, as smart_resize does):
        # 40 x 22 = 880.
        ((1280, 720), 880),
        # 1920x1200: 60 x 37.5 -> 38 = 2,280.
        ((1920, 1200), 2_280),
        # Below 65,536 pixels: scaled up by sqrt(65,536 / 10,000) = 2.56 to 256x256: 8 x 8.
        ((100, 100), 64),
        # Above 16,777,216 pixels: scaled down by sqrt(36,000,000 / 16,777,216) = 1.4648,
        # sides floored: 8000 -> 170 x 32, 4500 -> 96 x 32; 170 x 96 = 16,320.
        ((8000, 4500), 16_320),
    ],
)
def test_qwen_dynamic_resolution_is_a_token_per_32_pixels_square(size: tuple[int, int],
                                                                 tokens: int) -> None:
    assert dynamic_image_tokens(*size) == tokens
    assert HOLO31_9B.image_rule.count(*size) == tokens


def test_each_profile_counts_screenshots_with_its_own_rule() -> None:
    for profile in (HOLO31_08B, HOLO31_4B, HOLO31_9B, HOLO31_35B, HOLO4_27B, HOLO4_35B):
        assert profile.image_rule.rule is ImageRule.DYNAMIC, profile.key
        assert "preprocessor_config.json" in profile.image_rule.source
    for profile in (HOLOTRON_12B, LEGACY_PROFILE, GENERIC_PROFILE):
        assert profile.image_rule is NEMOTRON_TILES, profile.key
    # Holotron4: the Nemotron tiling, an assumption the source says is one.
    assert HOLOTRON4_30B.image_rule.rule is ImageRule.TILES
    assert HOLOTRON4_30B.image_rule.source.startswith("assumed")
    assert HOLOTRON4_30B.image_rule.count(1920, 1080) == image_tokens(1920, 1080) == 2_304


def test_the_workload_counts_with_the_served_models_rule() -> None:
    qwen = Workload(image_width=1920, image_height=1080, text_tokens=1_000,
                    image_rule=HOLO31_9B.image_rule)
    assert (qwen.tokens_per_image, qwen.context) == (2_040, 3 * 2_040 + 1_000)
    assert qwen.to_dict()["image_rule"] == "dynamic"
    nemotron = Workload(image_width=1920, image_height=1080, text_tokens=1_000)
    assert (nemotron.tokens_per_image, nemotron.context) == (2_304, 3 * 2_304 + 1_000)


def test_workload_context() -> None:
    # 3 x 1,792 (16:10 frames) + 1,000 = 6,376.
    assert Workload(image_width=1920, image_height=1200, text_tokens=1_000).context == 6_376


# --------------------------------------------------------------------------- config.json


def test_the_published_configs_give_the_built_in_figures() -> None:
    hybrid = architecture_from_config(
        NEMOTRON_VL_CONFIG, name="x", repo="r", source="s", weight_bytes=1, weights_source="w"
    )
    assert hybrid.attention == HOLOTRON.attention
    assert hybrid.mamba == HOLOTRON.mamba
    assert hybrid.layers == 62
    assert hybrid.describe() == "62 layers: 28 Mamba-2, 6 attention, 28 MLP"
    dense = architecture_from_config(
        QWEN3_VL_CONFIG, name="x", repo="r", source="s", weight_bytes=1, weights_source="w"
    )
    assert dense.attention == ATTENTION_REFERENCE.attention
    assert dense.mamba is None


def test_a_config_missing_a_figure_is_an_error() -> None:
    llm = dict(NEMOTRON_VL_CONFIG["llm_config"])
    del llm["mamba_num_heads"]
    broken = {"llm_config": llm}
    with pytest.raises(ConfigError, match="mamba_num_heads"):
        architecture_from_config(
            broken, name="x", repo="r", source="s", weight_bytes=1, weights_source="w"
        )


def _cache_model(hub: Path, repo: str, config: object, *, index_total: int | None = None) -> Path:
    """Lay out ``repo`` as huggingface_hub does: refs/main naming a snapshot folder."""
    folder = hub / ("models--" + repo.replace("/", "--"))
    snapshot = folder / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("0123abcd")
    (snapshot / "config.json").write_text(json.dumps(config))
    if index_total is not None:
        index = {"metadata": {"total_size": index_total}, "weight_map": {}}
        (snapshot / "model.safetensors.index.json").write_text(json.dumps(index))
    return snapshot


def test_the_hub_cache_follows_huggingface_hubs_variables(tmp_path: Path) -> None:
    assert hub_cache({"HF_HUB_CACHE": str(tmp_path / "a")}) == tmp_path / "a"
    assert hub_cache({"HF_HOME": str(tmp_path / "b")}) == tmp_path / "b" / "hub"
    assert hub_cache({"XDG_CACHE_HOME": str(tmp_path / "c")}) == (
        tmp_path / "c" / "huggingface" / "hub"
    )


def test_a_cached_config_is_read_and_named(tmp_path: Path) -> None:
    env = {"HF_HOME": str(tmp_path)}
    changed = json.loads(json.dumps(NEMOTRON_VL_CONFIG))
    changed["llm_config"]["hybrid_override_pattern"] = "M*M*"  # 2 Mamba, 2 attention
    snapshot = _cache_model(tmp_path / "hub", "Hcompany/Holotron-12B", changed,
                            index_total=25_000_000_000)
    arch, note = load_architecture("Hcompany/Holotron-12B", HOLOTRON, env)
    assert note is None
    assert arch.source == f"local cache, {snapshot / 'config.json'}"
    assert arch.attention.layers == 2 and arch.mamba is not None and arch.mamba.layers == 2
    # The checkpoint's own size replaces the published parameter count.
    assert arch.weight_bytes == 25_000_000_000
    assert str(snapshot) in arch.weights_source


def test_an_uncached_model_uses_the_built_in_figures(tmp_path: Path) -> None:
    env = {"HF_HOME": str(tmp_path)}
    assert read_cached_config("Hcompany/Holotron-12B", env) is None
    assert load_architecture("Hcompany/Holotron-12B", HOLOTRON, env) == (HOLOTRON, None)


def test_a_local_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(QWEN3_VL_CONFIG))
    arch, _ = load_architecture(str(tmp_path), ATTENTION_REFERENCE, {})
    assert arch.source == f"local cache, {tmp_path / 'config.json'}"
    assert arch.attention.layers == 36


def test_an_unusable_cached_config_falls_back_and_says_why(tmp_path: Path) -> None:
    env = {"HF_HOME": str(tmp_path)}
    _cache_model(tmp_path / "hub", "Hcompany/Holotron-12B", {"llm_config": {"hidden_size": 1}})
    arch, note = load_architecture("Hcompany/Holotron-12B", HOLOTRON, env)
    assert arch is HOLOTRON
    assert note is not None and "num_attention_heads" in note and "built-in" in note
