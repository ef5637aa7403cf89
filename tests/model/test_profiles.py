"""Model profiles (model/profiles.py): lookup, the serve command of every profile, vLLM version
ranges and the capacity plan of a profile. The figures are worked out by hand in comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.profiles import (
    DEFAULT_PROFILE,
    GENERIC_PROFILE,
    HOLOTRON_12B,
    LEGACY_PROFILE,
    PROFILES,
    ContractKind,
    MatchSource,
    StateKind,
    UnknownProfile,
    VersionFit,
    VllmRange,
    Vocabulary,
    WeightFormat,
    canonical_name,
    find_profile,
    parse_vllm_version,
    profile_by_key,
    profile_keys,
)
from model.serving.capacity import (
    HOLOTRON,
    KIB,
    MIB,
    ConfigError,
    architecture_for_profile,
    dtypes_for_profile,
    make_plan,
    profile_architecture,
)
from model.serving.launcher import ServeConfig, build_command, check_vllm_version

# --------------------------------------------------------------------------- lookup


def test_the_default_is_holotron_12b_with_h_structured_holo_nano() -> None:
    assert DEFAULT_PROFILE is HOLOTRON_12B
    assert HOLOTRON_12B.contract is ContractKind.H_STRUCTURED
    assert HOLOTRON_12B.vocabulary is Vocabulary.HOLO_NANO
    assert LEGACY_PROFILE.contract is ContractKind.LEGACY
    assert LEGACY_PROFILE.vocabulary is Vocabulary.HOLODESK


def test_the_issue_s_models_all_have_a_profile() -> None:
    keys = set(profile_keys())
    assert {"holotron-12b", "legacy", "holo3.1-0.8b", "holo3.1-4b", "holo3.1-9b",
            "holo3.1-35b-a3b", "holo4-27b", "holo4-35b-a3b", "holotron4-30b-a3b"} <= keys
    assert len(keys) == len(PROFILES)


@pytest.mark.parametrize(
    ("served", "root", "key", "source"),
    [
        ("Hcompany/Holotron-12B", None, "holotron-12b", MatchSource.SERVED_ID),
        # Today's served name, with the weights as root.
        ("holotron", "Hcompany/Holotron-12B", "holotron-12b", MatchSource.ROOT),
        ("holotron", None, "holotron-12b", MatchSource.SERVED_ID),
        ("HCOMPANY/HOLO-3.1-9B", None, "holo3.1-9b", MatchSource.SERVED_ID),
        ("anything", "Hcompany/Holo-3.1-9B", "holo3.1-9b", MatchSource.ROOT),
        # The hub API's ids and H's served names.
        ("holo3-1-35b-a3b", None, "holo3.1-35b-a3b", MatchSource.SERVED_ID),
        ("holo4-35b-a3b", "Hcompany/Holo4-35B-A3B-FP8", "holo4-35b-a3b", MatchSource.ROOT),
        # Quantized checkpoints, any organisation.
        ("m", "Hcompany/Holo-3.1-35B-A3B-NVFP4", "holo3.1-35b-a3b", MatchSource.ROOT),
        ("m", "someone/Holo-3.1-35B-A3B-GGUF", "holo3.1-35b-a3b", MatchSource.ROOT),
        ("Holo-3.1-35B-A3B-Q4_K_M.gguf", None, "holo3.1-35b-a3b", MatchSource.SERVED_ID),
        ("holo4-27b", None, "holo4-27b", MatchSource.SERVED_ID),
        ("Hcompany/Holotron4-30B-A3B-FP8", None, "holotron4-30b-a3b", MatchSource.SERVED_ID),
        ("holo3.1-0.8b", None, "holo3.1-0.8b", MatchSource.SERVED_ID),
        # Local folders, with or without a trailing slash.
        ("local", "/models/Holo-3.1-4B/", "holo3.1-4b", MatchSource.ROOT),
        ("/srv/weights/holotron-12b", None, "holotron-12b", MatchSource.SERVED_ID),
    ],
)  # fmt: skip
def test_find_profile(served: str, root: str | None, key: str, source: MatchSource) -> None:
    match = find_profile(served, root)
    assert match.profile.key == key
    assert match.source is source
    assert not match.guessed
    assert match.notice is None


def test_the_root_wins_over_the_served_name() -> None:
    # A server started as "holotron" but loaded with other weights: the weights decide.
    match = find_profile("holotron", "Hcompany/Holo-3.1-9B")
    assert match.profile.key == "holo3.1-9b"


def test_the_weight_format_is_read_from_the_name() -> None:
    assert find_profile("m", "Hcompany/Holo-3.1-35B-A3B-FP8").weight_format is WeightFormat.FP8
    assert find_profile("m", "Hcompany/Holo-3.1-35B-A3B-NVFP4").weight_format is (
        WeightFormat.NVFP4)
    assert find_profile("Holo-3.1-35B-A3B-Q4_K_M.gguf").weight_format is WeightFormat.GGUF
    assert find_profile("Hcompany/Holo-3.1-9B").weight_format is None


def test_canonical_name() -> None:
    assert canonical_name("Hcompany/Holo-3.1-9B-FP8") == "holo319b"
    assert canonical_name("holo3-1-9b") == "holo319b"
    assert canonical_name("/models/holo3.1-9b/") == "holo319b"


def test_an_unknown_model_gets_the_generic_h_profile_with_a_notice() -> None:
    match = find_profile("my-finetune", "/data/my-finetune")
    assert match.profile is GENERIC_PROFILE
    assert match.guessed
    assert match.source is MatchSource.NONE
    assert match.profile.contract is ContractKind.H_STRUCTURED
    assert match.profile.vocabulary is Vocabulary.HUB
    assert match.notice is not None
    assert "my-finetune (/data/my-finetune)" in match.notice
    assert "holo3.1-9b" in match.notice


def test_a_near_miss_is_not_a_match() -> None:
    # Holo3 (not 3.1) and Holo2 have no profile: the generic one, not a wrong neighbour.
    assert find_profile("Hcompany/Holo3-35B-A3B").guessed
    assert find_profile("Hcompany/Holo2-8B").guessed


def test_profile_by_key() -> None:
    assert profile_by_key("holo3.1-9b").hf_id == "Hcompany/Holo-3.1-9B"
    assert profile_by_key(" Legacy ") is LEGACY_PROFILE
    with pytest.raises(UnknownProfile) as info:
        profile_by_key("holo5")
    assert "holo5" in info.value.message
    assert info.value.fix is not None
    assert info.value.fix.setting == "model_profile"
    for key in profile_keys():
        assert key in info.value.fix.text


# --------------------------------------------------------------------------- the values


def test_reasoning_switches() -> None:
    holo = profile_by_key("holo3.1-9b").reasoning
    assert holo.template_kwargs(True) == {"enable_thinking": True}
    assert holo.template_kwargs(False) == {"enable_thinking": False}
    assert holo.effort == "medium"
    assert holo.agent_thinking
    # Holotron-12B: no documented parser, so no thinking in agent mode; no kwargs.
    assert HOLOTRON_12B.reasoning.template_kwargs(True) is None
    assert HOLOTRON_12B.reasoning.parser is None
    assert not HOLOTRON_12B.reasoning.agent_thinking


def test_sampling() -> None:
    for profile in PROFILES:
        assert profile.sampling.localization_temperature == 0
        assert not profile.sampling.localization_thinking
        assert profile.image_limit == 3
    assert profile_by_key("holo4-27b").sampling.temperature == 0.8
    assert HOLOTRON_12B.sampling.top_p == 0.95
    assert HOLOTRON_12B.sampling.max_tokens == 4096
    # The legacy profile is today's: temperature 0, retry at 0.5, 1024 tokens.
    legacy = LEGACY_PROFILE.sampling
    assert (legacy.temperature, legacy.retry_temperature, legacy.max_tokens) == (0.0, 0.5, 1024)


def test_state_kinds() -> None:
    assert HOLOTRON_12B.state is StateKind.MAMBA2
    assert profile_by_key("holotron4-30b-a3b").state is StateKind.MAMBA2
    for key in ("holo3.1-0.8b", "holo3.1-4b", "holo3.1-9b", "holo3.1-35b-a3b", "holo4-27b"):
        assert profile_by_key(key).state is StateKind.GATED_DELTANET


def test_weights() -> None:
    big = profile_by_key("holo3.1-35b-a3b")
    assert [w.format for w in big.weights] == [
        WeightFormat.BF16, WeightFormat.FP8, WeightFormat.NVFP4, WeightFormat.GGUF]
    assert big.weights_for(WeightFormat.BF16).bytes == 70_000_000_000
    assert big.weights_for(WeightFormat.FP8).bytes < big.weights_for(WeightFormat.BF16).bytes
    assert big.format_of("/models/Holo-3.1-35B-A3B-NVFP4") is WeightFormat.NVFP4
    with pytest.raises(Exception, match="not published in fp8"):
        HOLOTRON_12B.weights_for(WeightFormat.FP8)


# --------------------------------------------------------------------------- vLLM versions


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.14.1", (0, 14, 1)),
        ("0.17.1.dev12+g1234abc", (0, 17, 1)),
        ("0.20.0rc1", (0, 20, 0)),
        ("0.28", (0, 28, 0)),
        ("INFO 06-01 12:00:01 [__init__.py:216] Automatically detected platform cuda.\n0.17.0\n",
         (0, 17, 0)),
        ("vllm 0.33.0+cu128", (0, 33, 0)),
        ("", None),
        ("command not found", None),
    ],
)  # fmt: skip
def test_parse_vllm_version(text: str, version: tuple[int, int, int] | None) -> None:
    assert parse_vllm_version(text) == version


def test_version_ranges() -> None:
    holo31 = profile_by_key("holo3.1-9b").vllm
    assert holo31.fit((0, 14, 1)) is VersionFit.TOO_OLD
    assert holo31.fit((0, 17, 0)) is VersionFit.FITS
    assert holo31.fit((1, 0, 0)) is VersionFit.FITS
    assert holo31.fit(None) is VersionFit.UNKNOWN
    assert profile_by_key("holo4-27b").vllm.fit((0, 27, 9)) is VersionFit.TOO_OLD
    assert HOLOTRON_12B.vllm.fit((0, 14, 1)) is VersionFit.FITS
    capped = VllmRange((0, 14, 1), (0, 15, 0))
    assert capped.fit((0, 15, 0)) is VersionFit.TOO_NEW
    assert capped.fit((0, 14, 9)) is VersionFit.FITS
    assert capped.pip_spec() == "vllm>=0.14.1,<0.15.0"
    assert holo31.pip_spec() == "vllm>=0.17.0"


def test_check_vllm_version() -> None:
    holo4 = profile_by_key("holo4-35b-a3b")
    assert check_vllm_version(holo4, "0.28.0\n") is None
    old = check_vllm_version(holo4, "0.14.1")
    assert old is not None and old.fatal
    assert "vLLM 0.14.1 is too old for Holo4-35B-A3B" in old.message
    assert old.fix is not None and "vllm>=0.28.0" in old.fix.text
    unknown = check_vllm_version(holo4, "Traceback ...")
    assert unknown is not None and not unknown.fatal


# --------------------------------------------------------------------------- serve commands

_TAIL = ["--gpu-memory-utilization", "0.9", "--served-model-name", "holotron",
         "--host", "127.0.0.1", "--port", "8000"]  # fmt: skip


def _argv(key: str, model: str, max_model_len: int = 65536) -> list[str]:
    cfg = ServeConfig(model=model, profile=profile_by_key(key), max_model_len=max_model_len)
    return build_command(cfg)


def test_holotron_and_legacy_serve_today_s_command() -> None:
    today = build_command(ServeConfig())
    assert build_command(ServeConfig(profile=HOLOTRON_12B)) == today
    assert build_command(ServeConfig(profile=LEGACY_PROFILE)) == today
    assert "--reasoning-parser" not in today
    assert "--tool-call-parser" not in today


@pytest.mark.parametrize(
    "key", ["holo3.1-0.8b", "holo3.1-4b", "holo3.1-9b", "holo3.1-35b-a3b", "holo4-27b",
            "holo4-35b-a3b"],
)  # fmt: skip
def test_qwen_based_holo_commands(key: str) -> None:
    profile = profile_by_key(key)
    assert _argv(key, profile.hf_id) == [
        "vllm", "serve", profile.hf_id,
        "--dtype", "bfloat16",
        "--max-model-len", "65536",
        "--limit-mm-per-prompt", '{"image": 3, "video": 0}',
        "--enable-prefix-caching",
        "--chat-template-content-format", "openai",
        "--reasoning-parser", "qwen3",
        "--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder",
        *_TAIL,
    ]  # fmt: skip


def test_holotron4_command() -> None:
    assert _argv("holotron4-30b-a3b", "Hcompany/Holotron4-30B-A3B") == [
        "vllm", "serve", "Hcompany/Holotron4-30B-A3B",
        "--trust-remote-code",
        "--dtype", "bfloat16",
        "--max-model-len", "65536",
        "--mamba-ssm-cache-dtype", "float32",
        "--limit-mm-per-prompt", '{"image": 3, "video": 0}',
        "--enable-prefix-caching",
        "--reasoning-parser", "nemotron_v3",
        *_TAIL,
    ]  # fmt: skip


def test_every_profile_has_a_command_and_its_own_default_length() -> None:
    for profile in PROFILES:
        argv = build_command(ServeConfig(model=profile.hf_id or "m", profile=profile,
                                         max_model_len=profile.serving.max_model_len))
        assert argv[:3] == ["vllm", "serve", profile.hf_id or "m"]
        assert argv[argv.index("--max-model-len") + 1] == str(profile.serving.max_model_len)
        assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1])["image"] == 3
    assert profile_by_key("holo4-27b").serving.max_model_len == 262_144
    assert HOLOTRON_12B.serving.max_model_len == 32768


# --------------------------------------------------------------------------- capacity


def test_holotron_12b_profile_plans_as_today() -> None:
    arch = architecture_for_profile(HOLOTRON_12B)
    assert arch.attention == HOLOTRON.attention
    assert arch.mamba == HOLOTRON.mamba
    assert arch.layers == HOLOTRON.layers
    assert arch.weight_bytes == HOLOTRON.weight_bytes
    today = make_plan()
    planned = make_plan(hybrid=arch, dtypes=dtypes_for_profile(HOLOTRON_12B))
    assert planned.hybrid.session_bytes == today.hybrid.session_bytes
    assert planned.hybrid.sessions_fit == today.hybrid.sessions_fit == 111


def test_holo31_9b_plan_by_hand() -> None:
    profile = profile_by_key("holo3.1-9b")
    arch = architecture_for_profile(profile)
    assert arch.describe() == "32 layers: 24 Gated DeltaNet, 8 attention"
    dtypes = dtypes_for_profile(profile)
    assert dtypes.ssm == 2  # no --mamba-ssm-cache-dtype: the model dtype
    # KV per token: 8 attention layers x 2 x 4 KV heads x 256 x 2 bytes = 32 KiB.
    assert arch.attention.kv_bytes_per_token(2) == 32 * KIB
    assert arch.deltanet is not None
    # Recurrent state: 24 layers x 32 value heads x 128 x 128 x 2 bytes = 24 MiB.
    assert arch.deltanet.ssm_state_bytes(2) == 24 * MIB
    # Convolution: 24 x 3 x (2 x 16 x 128 + 32 x 128 = 8,192) x 2 bytes = 1,179,648.
    assert arch.deltanet.conv_state_bytes(2) == 1_179_648
    plan = make_plan(hybrid=arch, dtypes=dtypes, context=10_000)
    session = 10_000 * 32 * KIB + 24 * MIB + 1_179_648
    assert plan.hybrid.session_bytes == session
    # H100 80GB at 0.9: 81,559 MiB x 0.9 = 76,975,686,041 bytes; less 18.8e9 bytes of
    # weights (9.4B x 2) and the 4 GiB reserve = 53,880,718,745; / 353,124,352 = 152.
    assert plan.hybrid.pool_bytes == int(81_559 * MIB * 0.9) - 18_800_000_000 - 4 * 1024**3
    assert plan.hybrid.sessions_fit == plan.hybrid.pool_bytes // session == 152


def test_holo31_35b_weight_formats_change_the_pool() -> None:
    profile = profile_by_key("holo3.1-35b-a3b")
    bf16 = architecture_for_profile(profile, WeightFormat.BF16)
    fp8 = architecture_for_profile(profile, WeightFormat.FP8)
    # KV per token: 10 x 2 x 2 x 256 x 2 = 20 KiB; the same state for every format.
    assert bf16.attention.kv_bytes_per_token(2) == 20 * KIB
    assert bf16.deltanet == fp8.deltanet
    assert bf16.weight_bytes == 70_000_000_000
    assert fp8.repo == "Hcompany/Holo-3.1-35B-A3B-FP8"
    assert make_plan(hybrid=fp8).hybrid.pool_bytes > make_plan(hybrid=bf16).hybrid.pool_bytes


def test_unknown_figures_are_said_not_invented(tmp_path: Path) -> None:
    profile = profile_by_key("holo4-27b")
    assert "kv_heads" in profile.cache.missing()
    with pytest.raises(ConfigError, match="unknown"):
        architecture_for_profile(profile)
    arch, note = profile_architecture(profile, environ={"HF_HUB_CACHE": str(tmp_path)})
    assert arch is None
    assert note is not None and "Holo4-27B" in note and "config.json" in note


def test_a_cached_qwen35_config_fills_the_unknowns(tmp_path: Path) -> None:
    folder = tmp_path / "Holo4-27B"
    folder.mkdir()
    text = {"hidden_size": 5120, "num_attention_heads": 24, "num_key_value_heads": 4,
            "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 48,
            "linear_key_head_dim": 128, "linear_value_head_dim": 128,
            "linear_conv_kernel_dim": 4,
            "layer_types": ["linear_attention"] * 3 * 16 + ["full_attention"] * 16}
    (folder / "config.json").write_text(json.dumps({"text_config": text}), encoding="utf-8")
    arch, note = profile_architecture(profile_by_key("holo4-27b"), str(folder), environ={})
    assert note is None
    assert arch is not None
    assert arch.describe() == "64 layers: 48 Gated DeltaNet, 16 attention"
    assert arch.attention.kv_bytes_per_token(2) == 16 * 2 * 4 * 256 * 2
    assert arch.deltanet is not None and arch.deltanet.value_heads == 48
    # No checkpoint on disk: the BF16 estimate, 27B x 2 bytes.
    assert arch.weight_bytes == 54_000_000_000


def test_each_profile_gives_its_codec_config() -> None:
    """The profile is the one place: the codec is asked as it says (model/contracts)."""
    from model.contracts import codec_for
    from model.profiles import HOLO31_9B

    nano = HOLOTRON_12B.codec_config()
    assert nano.contract is ContractKind.H_STRUCTURED and nano.vocabulary is Vocabulary.HOLO_NANO
    # No reasoning parser for Holotron-12B: thinking off, switched in the system prompt.
    assert nano.reasoning() == {} and nano.system_switch_text() == "/no_think"
    hub = HOLO31_9B.codec_config()
    assert hub.reasoning()["chat_template_kwargs"] == {"enable_thinking": True}
    for profile in PROFILES:
        assert codec_for(profile.codec_config()).kind is profile.contract


def test_holo3_1_speaks_native_tool_calls_under_its_tools_key() -> None:
    """docs/models.md, "Native tool calls": Holo3.1 documents both output formats; the
    ``-tools`` key chooses function calling, the rest of the profile unchanged."""
    from model.contracts import HNativeToolsCodec, codec_for
    from model.profiles import HOLO31_9B, HOLO31_TOOLS, native_tools

    assert [p.key for p in HOLO31_TOOLS] == ["holo3.1-0.8b-tools", "holo3.1-4b-tools",
                                             "holo3.1-9b-tools", "holo3.1-35b-a3b-tools"]
    tools = profile_by_key("Holo3.1-9B-tools")
    assert tools.contract is ContractKind.H_NATIVE_TOOLS
    assert (tools.hf_id, tools.vocabulary, tools.reasoning, tools.sampling, tools.serving) == (
        HOLO31_9B.hf_id, HOLO31_9B.vocabulary, HOLO31_9B.reasoning, HOLO31_9B.sampling,
        HOLO31_9B.serving)
    assert isinstance(codec_for(tools.codec_config()), HNativeToolsCodec)
    argv = build_command(ServeConfig(model=tools.hf_id, profile=tools,
                                     max_model_len=tools.serving.max_model_len))
    flags = argv[argv.index("--enable-auto-tool-choice"):][:3]
    assert flags == ["--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder"]
    # A served model's name never picks the native contract: it is chosen by key.
    assert find_profile("holo3.1-9b-tools", root="Hcompany/Holo-3.1-9B").profile is HOLO31_9B
    with pytest.raises(ValueError, match="documents no native tool calls"):
        native_tools(HOLOTRON_12B)
