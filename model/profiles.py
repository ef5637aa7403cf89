"""Model profiles: everything holodesk must know that differs from one H model to the next.

One :class:`ModelProfile` per model says which contract it speaks (H's structured-output agent
loop, H's native function calling, or holodesk's own legacy format), which tool vocabulary, how
to switch its reasoning on and which server parsers read it, how to sample, how many screenshots
a prompt may carry, how ``vllm serve`` runs it and with which vLLM versions, its weight formats
and the figures the capacity plan needs (``model/serving/capacity.py``).

Every value and where it comes from: ``docs/models.md``. What no source publishes is marked
there as holodesk's assumption, and here as ``None`` (unknown) where a number is missing.

Lookup::

    match = find_profile("holo3.1", root="Hcompany/Holo-3.1-9B-FP8")   # from /v1/models
    match.profile.key        # "holo3.1-9b"
    match.notice             # None; for an unknown model, why the generic profile was chosen
    profile_by_key("holotron-12b")                                   # the `model_profile` setting

Pure data and standard library: no Qt, no pyautogui, no network.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from model.contracts.base import CodecConfig, ContractKind, Vocabulary
from model.problem import Fix, HolodeskError

__all__ = [
    "DEFAULT_PROFILE",
    "GENERIC_PROFILE",
    "HOLO31_TOOLS",
    "HOLOTRON_12B",
    "LEGACY_PROFILE",
    "PROFILES",
    "CacheShape",
    "ContractKind",
    "ImageRule",
    "ImageTokens",
    "MatchSource",
    "ModelProfile",
    "ProfileMatch",
    "Reasoning",
    "Sampling",
    "Serving",
    "StateKind",
    "UnknownProfile",
    "VersionFit",
    "VllmRange",
    "Vocabulary",
    "WeightFormat",
    "Weights",
    "canonical_name",
    "dynamic_image_tokens",
    "find_profile",
    "parse_vllm_version",
    "profile_by_key",
    "profile_keys",
    "tiled_image_tokens",
]


# --------------------------------------------------------------------------- vocabulary


class StateKind(Enum):
    """What a layer without a KV cache keeps per sequence."""

    NONE = "none"
    MAMBA2 = "mamba2"
    """Nemotron-H's Mamba-2 layers (Holotron line)."""
    GATED_DELTANET = "gated_deltanet"
    """Qwen3.5's linear-attention (Gated DeltaNet) layers (Holo3.1, Holo4)."""


class WeightFormat(Enum):
    BF16 = "bf16"
    FP8 = "fp8"
    NVFP4 = "nvfp4"
    GGUF = "gguf"
    """A llama.cpp file: not served by vLLM (``holodesk serve``), listed for memory only."""


class MatchSource(Enum):
    """What :func:`find_profile` recognised."""

    ROOT = "root"
    """The ``root`` of ``/v1/models``: the weights the server loaded."""
    SERVED_ID = "served_id"
    """The served model name."""
    NONE = "none"
    """Nothing: the generic profile, a guess."""


class ImageRule(Enum):
    """How the model's processor turns a screenshot into prompt tokens."""

    TILES = "tiles"
    """Fixed square tiles on the grid whose aspect ratio is closest, plus a thumbnail
    (Nemotron Nano VL, the Holotron line)."""
    DYNAMIC = "dynamic"
    """Qwen's dynamic resolution: the image resized to a multiple of patch x merge pixels,
    within a pixel budget, one token per merged patch (Holo3.1, Holo4)."""


class VersionFit(Enum):
    FITS = "fits"
    TOO_OLD = "too_old"
    TOO_NEW = "too_new"
    UNKNOWN = "unknown"
    """The version text could not be read."""


# --------------------------------------------------------------------------- the parts


@dataclass(frozen=True)
class Reasoning:
    """How the model's reasoning is switched and where the server puts it.

    ``switch_kwarg`` goes in ``chat_template_kwargs`` (``{"enable_thinking": true}``);
    ``system_switch`` is a pair of texts for the system prompt instead (on, off) for models
    whose template reads it there. ``agent_thinking`` is whether a run thinks at each step;
    localization never does (:class:`Sampling`).
    """

    switch_kwarg: str | None
    effort: str | None
    """``reasoning_effort`` to send in agent mode, or None to send none."""
    parser: str | None
    """``--reasoning-parser`` for vLLM; None: none is documented (reasoning lands in content)."""
    tool_parser: str | None
    """``--tool-call-parser`` for native tool calls; None: no native tool path."""
    agent_thinking: bool
    system_switch: tuple[str, str] | None = None

    def template_kwargs(self, thinking: bool) -> dict[str, bool] | None:
        """``chat_template_kwargs`` that switch thinking on or off; None when the model has none."""
        return None if self.switch_kwarg is None else {self.switch_kwarg: thinking}

    @property
    def native_tools(self) -> bool:
        return self.tool_parser is not None


@dataclass(frozen=True)
class Sampling:
    """Sampling for an agent step, and for localization alone (one point, no plan)."""

    temperature: float
    top_p: float | None
    max_tokens: int
    retry_temperature: float | None = None
    """The temperature of a retry after an invalid or repeated step, where one is used."""
    localization_temperature: float = 0.0
    localization_thinking: bool = False


@dataclass(frozen=True)
class VllmRange:
    """The vLLM versions that serve the model: ``minimum`` inclusive, ``maximum`` exclusive."""

    minimum: tuple[int, int, int]
    maximum: tuple[int, int, int] | None = None

    def fit(self, version: tuple[int, int, int] | None) -> VersionFit:
        if version is None:
            return VersionFit.UNKNOWN
        if version < self.minimum:
            return VersionFit.TOO_OLD
        if self.maximum is not None and version >= self.maximum:
            return VersionFit.TOO_NEW
        return VersionFit.FITS

    def describe(self) -> str:
        low = ".".join(map(str, self.minimum))
        if self.maximum is None:
            return f"vLLM {low} or newer"
        return f"vLLM {low} or newer, older than {'.'.join(map(str, self.maximum))}"

    def pip_spec(self) -> str:
        """The requirement for pip: ``vllm>=0.17.0`` or ``vllm>=0.14.1,<0.15``."""
        spec = f"vllm>={'.'.join(map(str, self.minimum))}"
        if self.maximum is not None:
            spec += f",<{'.'.join(map(str, self.maximum))}"
        return spec


@dataclass(frozen=True)
class Weights:
    """One published checkpoint: its format and what it weighs on the GPU."""

    format: WeightFormat
    repo: str
    parameters: int
    """Parameters the checkpoint holds (language model, vision encoder and projector)."""
    bytes_per_parameter: float
    """Average bytes per parameter as stored (scales and unquantized parts included)."""
    exact: bool = False
    """Whether ``parameters x bytes_per_parameter`` is a published size, not an estimate."""

    @property
    def bytes(self) -> int:
        return int(self.parameters * self.bytes_per_parameter)


@dataclass(frozen=True)
class CacheShape:
    """What the capacity plan needs of the language model; None where no source gives it.

    Attention layers keep K and V per token (``2 x kv_heads x head_dim``). ``state`` says
    what the other token mixers keep per sequence: Mamba-2 (``mamba_*``, ``ssm_state_size``,
    ``n_groups``) or Gated DeltaNet (``linear_*``); ``conv_kernel`` is the short convolution
    of either.
    """

    layers: int | None
    attention_layers: int | None
    kv_heads: int | None
    head_dim: int | None
    state: StateKind
    state_layers: int | None = None
    mamba_heads: int | None = None
    mamba_head_dim: int | None = None
    ssm_state_size: int | None = None
    n_groups: int | None = None
    linear_key_heads: int | None = None
    linear_value_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_head_dim: int | None = None
    conv_kernel: int | None = None
    source: str = ""

    def missing(self) -> tuple[str, ...]:
        """The figures the plan needs that are unknown."""
        need = ["layers", "attention_layers", "kv_heads", "head_dim"]
        if self.state is StateKind.MAMBA2:
            need += ["state_layers", "mamba_heads", "mamba_head_dim", "ssm_state_size",
                     "n_groups", "conv_kernel"]
        elif self.state is StateKind.GATED_DELTANET:
            need += ["state_layers", "linear_key_heads", "linear_value_heads",
                     "linear_key_head_dim", "linear_value_head_dim", "conv_kernel"]
        return tuple(name for name in need if getattr(self, name) is None)


def tiled_image_tokens(width: int, height: int, *, tile: int = 512, max_tiles: int = 12,
                       tile_tokens: int = 256) -> int:
    """The tokens of one image cut into tiles (docs/holotron.md, "Images").

    The processor picks the grid of at most ``max_tiles`` tiles whose aspect ratio is closest
    to the image's (on a tie, the larger grid when the image has the area for it), stretches
    the image onto it, and adds a thumbnail tile when there is more than one tile.
    """
    if width <= 0 or height <= 0:
        raise ValueError("an image has a positive width and height")
    aspect = width / height
    area = width * height
    best = (1, 1)
    best_diff = math.inf
    grids = sorted({(c, r) for n in range(1, max_tiles + 1) for c in range(1, n + 1)
                    for r in range(1, n + 1) if c * r == n}, key=lambda g: g[0] * g[1])
    for cols, rows in grids:
        diff = abs(aspect - cols / rows)
        if diff < best_diff:
            best, best_diff = (cols, rows), diff
        elif diff == best_diff and area > 0.5 * tile * tile * cols * rows:
            best = (cols, rows)
    count = best[0] * best[1]
    return (count + (1 if count > 1 else 0)) * tile_tokens


def dynamic_image_tokens(width: int, height: int, *, patch: int = 16, merge: int = 2,
                         min_pixels: int = 65_536, max_pixels: int = 16_777_216) -> int:
    """The tokens of one image under Qwen's dynamic resolution (docs/models.md, "Screenshots").

    Each side is rounded to a multiple of ``patch x merge`` pixels (32 for Qwen3.5); an image
    over ``max_pixels`` is scaled down (sides floored), one under ``min_pixels`` scaled up
    (sides ceiled), keeping its aspect ratio; each ``merge x merge`` block of patches is one
    token. The image's start and end marker tokens are not counted (text, a token each).
    """
    if width <= 0 or height <= 0:
        raise ValueError("an image has a positive width and height")
    factor = patch * merge
    # Python's round(), as the processor's smart_resize rounds.
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return (h // factor) * (w // factor)


@dataclass(frozen=True)
class ImageTokens:
    """What one screenshot costs the model in prompt tokens, and where the rule comes from.

    ``TILES`` uses ``tile``, ``max_tiles`` and ``tile_tokens``; ``DYNAMIC`` uses ``patch``,
    ``merge``, ``min_pixels`` and ``max_pixels`` (the preprocessor config's ``size``
    ``shortest_edge`` and ``longest_edge``, which are pixel counts).
    """

    rule: ImageRule
    source: str
    tile: int = 512
    max_tiles: int = 12
    tile_tokens: int = 256
    patch: int = 16
    merge: int = 2
    min_pixels: int = 65_536
    max_pixels: int = 16_777_216

    def count(self, width: int, height: int) -> int:
        """The prompt tokens of one ``width`` x ``height`` image."""
        if self.rule is ImageRule.TILES:
            return tiled_image_tokens(width, height, tile=self.tile, max_tiles=self.max_tiles,
                                      tile_tokens=self.tile_tokens)
        return dynamic_image_tokens(width, height, patch=self.patch, merge=self.merge,
                                    min_pixels=self.min_pixels, max_pixels=self.max_pixels)

    def describe(self) -> str:
        if self.rule is ImageRule.TILES:
            return (f"{self.tile}-pixel tiles, up to {self.max_tiles} plus a thumbnail, "
                    f"{self.tile_tokens} tokens each")
        side = self.patch * self.merge
        return (f"dynamic resolution: a token per {side}x{side} pixels, "
                f"{self.min_pixels:,} to {self.max_pixels:,} pixels")


@dataclass(frozen=True)
class Serving:
    """How ``vllm serve`` runs the model, beyond model, host, port and memory share."""

    trust_remote_code: bool
    mamba_ssm_cache_dtype: str | None
    """``--mamba-ssm-cache-dtype``; None: vLLM's default (the model dtype)."""
    chat_template_content_format: str | None
    """``--chat-template-content-format``; None: vLLM detects it."""
    max_model_len: int
    """The ``--max-model-len`` holodesk serves with by default."""
    extra_modalities: tuple[str, ...] = ("video",)
    """Other modalities set to 0 in ``--limit-mm-per-prompt`` (the model takes them; holodesk
    sends none)."""
    flags: tuple[str, ...] = ()
    """Any further flags, after the ones above."""


# --------------------------------------------------------------------------- the profile


@dataclass(frozen=True)
class ModelProfile:
    """Everything model-specific (see the module doc; values and sources: docs/models.md)."""

    key: str
    display_name: str
    hf_id: str
    contract: ContractKind
    vocabulary: Vocabulary
    reasoning: Reasoning
    sampling: Sampling
    serving: Serving
    vllm: VllmRange
    weights: tuple[Weights, ...]
    cache: CacheShape
    context_length: int | None
    """The longest context the model takes (its published window); None: not published."""
    image_limit: int = 3
    """Screenshots kept in a prompt (older ones become placeholders)."""
    aliases: tuple[str, ...] = ()
    """Other names it is served or published under (hub API ids, served names)."""
    image_tokens: ImageTokens | None = None
    """What a screenshot costs it (the capacity plan's workload); None: the Holotron tiling,
    :data:`NEMOTRON_TILES`."""

    @property
    def image_rule(self) -> ImageTokens:
        return self.image_tokens or NEMOTRON_TILES

    @property
    def state(self) -> StateKind:
        return self.cache.state

    @property
    def native_tools(self) -> bool:
        """Whether the model can answer with native tool calls (and vLLM needs a tool parser)."""
        return self.reasoning.native_tools

    def codec_config(self) -> CodecConfig:
        """How the model is asked at each step (its contract's codec, model/contracts)."""
        reasoning, sampling = self.reasoning, self.sampling
        return CodecConfig(
            contract=self.contract,
            vocabulary=self.vocabulary,
            thinking=reasoning.agent_thinking,
            thinking_switch=reasoning.switch_kwarg,
            reasoning_effort=reasoning.effort,
            system_switch=reasoning.system_switch,
            temperature=sampling.temperature,
            retry_temperature=sampling.retry_temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
        )

    def weights_for(self, fmt: WeightFormat | None = None) -> Weights:
        """The checkpoint of ``fmt`` (default: the first, the reference checkpoint)."""
        if fmt is None:
            return self.weights[0]
        for w in self.weights:
            if w.format is fmt:
                return w
        have = ", ".join(w.format.value for w in self.weights)
        raise HolodeskError(
            f"{self.display_name} is not published in {fmt.value} (there is: {have})",
            Fix(f"use one of: {have}"),
        )

    def format_of(self, model: str) -> WeightFormat:
        """The weight format of ``model`` (a repo id or folder), by its quantization suffix."""
        return _format_from_name(model) or self.weights[0].format

    def names(self) -> Iterable[str]:
        """Every name this profile answers to."""
        yield self.key
        yield self.hf_id
        yield from (w.repo for w in self.weights)
        yield from self.aliases


# --------------------------------------------------------------------------- shared values

_ENABLE_THINKING = "enable_thinking"

# H's hub agent loop (pages "Agent loop", "Chat completions"): temperature 0.8, about 4,096
# output tokens (the API's cap for holo3-1-35b-a3b, page "Models").
_HUB_SAMPLING = Sampling(temperature=0.8, top_p=None, max_tokens=4096)
# The holo-nano loop (NVIDIA's cookbook): temperature 0.8, top_p 0.95, max_tokens 4096.
_NANO_SAMPLING = Sampling(temperature=0.8, top_p=0.95, max_tokens=4096)

# Qwen3.5-based Holo models: the switch, effort and parsers H's self-hosting commands use.
_QWEN_REASONING = Reasoning(
    switch_kwarg=_ENABLE_THINKING, effort="medium", parser="qwen3", tool_parser="qwen3_coder",
    agent_thinking=True,
)  # fmt: skip

_QWEN_SERVING = Serving(
    trust_remote_code=False, mamba_ssm_cache_dtype=None, chat_template_content_format="openai",
    max_model_len=65536,
)  # fmt: skip

_NEMOTRON_H_CONFIG = ("built-in, from https://huggingface.co/nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16"
                      " (config.json), the base of Holotron-12B")

_HOLOTRON_CACHE = CacheShape(
    layers=62, attention_layers=6, kv_heads=8, head_dim=128, state=StateKind.MAMBA2,
    state_layers=28, mamba_heads=128, mamba_head_dim=80, ssm_state_size=128, n_groups=8,
    conv_kernel=4, source=_NEMOTRON_H_CONFIG,
)  # fmt: skip

_HOLOTRON_WEIGHTS = (
    Weights(WeightFormat.BF16, "Hcompany/Holotron-12B", 13_000_000_000, 2.0),
)

_HOLOTRON_SERVING = Serving(
    trust_remote_code=True, mamba_ssm_cache_dtype="float32", chat_template_content_format=None,
    max_model_len=32768,
)  # fmt: skip

# Holotron-12B was published with vLLM 0.14.1; no upper bound is known.
_HOLOTRON_VLLM = VllmRange((0, 14, 1))


def _unknown_cache(state: StateKind, source: str, **known: int) -> CacheShape:
    base: dict[str, int | None] = {
        "layers": None, "attention_layers": None, "kv_heads": None, "head_dim": None,
    }
    base.update(known)
    return CacheShape(state=state, source=source, **base)  # type: ignore[arg-type]


def _deltanet(layers: int, attention: int, kv_heads: int, source: str, *,
              key_heads: int = 16, value_heads: int = 32) -> CacheShape:
    """A Qwen3.5 text model: every fourth layer full attention (head_dim 256), the others
    Gated DeltaNet with key/value head dims 128 and a convolution of 4."""
    return CacheShape(
        layers=layers, attention_layers=attention, kv_heads=kv_heads, head_dim=256,
        state=StateKind.GATED_DELTANET, state_layers=layers - attention,
        linear_key_heads=key_heads, linear_value_heads=value_heads, linear_key_head_dim=128,
        linear_value_head_dim=128, conv_kernel=4, source=source,
    )  # fmt: skip


# What a screenshot costs each model family (docs/models.md, "Screenshots").
NEMOTRON_TILES = ImageTokens(
    ImageRule.TILES,
    "Nemotron Nano VL's processor: 512-pixel tiles, up to 12 plus a thumbnail, 256 tokens a "
    "tile (docs/holotron.md, Images)")
QWEN35_DYNAMIC = ImageTokens(
    ImageRule.DYNAMIC,
    "Qwen3.5's preprocessor_config.json (Qwen3.5-9B-Base, Qwen3.5-35B-A3B): patch 16, merge 2, "
    "shortest_edge 65,536 and longest_edge 16,777,216 pixels")
# Assumed, not read: Nemotron 3 Nano Omni's image preprocessing is described as tiling to an
# aspect-matched grid with a thumbnail; tile size and tokens per tile are Nano v2 VL's.
OMNI_TILES = ImageTokens(
    ImageRule.TILES,
    "assumed: Nemotron 3 Nano Omni tiles like Nano v2 VL (512-pixel tiles, up to 12 plus a "
    "thumbnail, 256 tokens a tile); its processor config was not read (docs/models.md)")


# --------------------------------------------------------------------------- the profiles

HOLOTRON_12B = ModelProfile(
    key="holotron-12b",
    display_name="Holotron-12B",
    hf_id="Hcompany/Holotron-12B",
    # The lead's decision (issue 22): H's structured contract in the Holotron line's
    # holo-nano vocabulary. Its card documents no contract: docs/models.md.
    contract=ContractKind.H_STRUCTURED,
    vocabulary=Vocabulary.HOLO_NANO,
    # No reasoning parser is documented for Holotron-12B, so thinking stays off in agent mode
    # (it would land in content); the base model reads /think and /no_think in the system.
    reasoning=Reasoning(switch_kwarg=None, effort=None, parser=None, tool_parser=None,
                        agent_thinking=False, system_switch=("/think", "/no_think")),
    sampling=_NANO_SAMPLING,
    serving=_HOLOTRON_SERVING,
    vllm=_HOLOTRON_VLLM,
    weights=_HOLOTRON_WEIGHTS,
    cache=_HOLOTRON_CACHE,
    context_length=None,
    aliases=("holotron",),
)

LEGACY_PROFILE = ModelProfile(
    key="legacy",
    display_name="Holotron-12B (legacy holodesk contract)",
    hf_id="Hcompany/Holotron-12B",
    contract=ContractKind.LEGACY,
    vocabulary=Vocabulary.HOLODESK,
    # Today's contract: /no_think in the system prompt, no kwargs, no parser.
    reasoning=Reasoning(switch_kwarg=None, effort=None, parser=None, tool_parser=None,
                        agent_thinking=False, system_switch=("/think", "/no_think")),
    sampling=Sampling(temperature=0.0, top_p=None, max_tokens=1024, retry_temperature=0.5),
    serving=_HOLOTRON_SERVING,
    vllm=_HOLOTRON_VLLM,
    weights=_HOLOTRON_WEIGHTS,
    cache=_HOLOTRON_CACHE,
    context_length=None,
)

_QWEN35_9B = ("Qwen3.5-9B's config.json (base of Holo-3.1-9B): 32 layers, full attention "
              "every 4th (8), 16 query / 4 KV heads of 256; Gated DeltaNet 16 key / 32 value "
              "heads of 128")
_QWEN36_35B = ("Qwen3.6-35B-A3B's config.json (base of Holo-3.1-35B-A3B, same tensors): 40 layers,"
               " 10 full attention with 2 KV heads of 256; Gated DeltaNet 16 key / 32 value heads"
               " of 128")


def _holo31(size: str, weights: tuple[Weights, ...], cache: CacheShape) -> ModelProfile:
    key = f"holo3.1-{size.lower()}"
    return ModelProfile(
        key=key,
        display_name=f"Holo3.1-{size}",
        hf_id=f"Hcompany/Holo-3.1-{size}",
        contract=ContractKind.H_STRUCTURED,
        vocabulary=Vocabulary.HUB,
        reasoning=_QWEN_REASONING,
        sampling=_HUB_SAMPLING,
        serving=_QWEN_SERVING,
        vllm=VllmRange((0, 17, 0)),
        weights=weights,
        cache=cache,
        context_length=262_144,
        aliases=(f"holo3.1-{size.lower()}", f"holo3-1-{size.lower()}"),
        image_tokens=QWEN35_DYNAMIC,
    )


def _bf16(repo: str, params: float) -> Weights:
    return Weights(WeightFormat.BF16, repo, int(params), 2.0)


HOLO31_08B = _holo31("0.8B", (_bf16("Hcompany/Holo-3.1-0.8B", 0.9e9),),
                     _unknown_cache(StateKind.GATED_DELTANET, "not read: Qwen3.5-0.8B's config"))
HOLO31_4B = _holo31("4B", (_bf16("Hcompany/Holo-3.1-4B", 4.7e9),),
                    _unknown_cache(StateKind.GATED_DELTANET, "not read: Qwen3.5-4B's config",
                                   head_dim=256))
HOLO31_9B = _holo31("9B", (_bf16("Hcompany/Holo-3.1-9B", 9.4e9),),
                    _deltanet(32, 8, 4, _QWEN35_9B))
HOLO31_35B = _holo31(
    "35B-A3B",
    (
        _bf16("Hcompany/Holo-3.1-35B-A3B", 35e9),
        Weights(WeightFormat.FP8, "Hcompany/Holo-3.1-35B-A3B-FP8", int(35e9), 1.05),
        Weights(WeightFormat.NVFP4, "Hcompany/Holo-3.1-35B-A3B-NVFP4", int(35e9), 0.6),
        Weights(WeightFormat.GGUF, "Hcompany/Holo-3.1-35B-A3B-GGUF", int(35e9), 0.6),
    ),
    _deltanet(40, 10, 2, _QWEN36_35B),
)


def native_tools(profile: ModelProfile) -> ModelProfile:
    """``profile`` speaking H's native function calling instead of structured output, under
    the key ``<key>-tools``: the same model, served the same way (its tool parser makes
    ``holodesk serve`` add ``--enable-auto-tool-choice --tool-call-parser``), reached by key
    only (docs/models.md, "Native tool calls")."""
    if not profile.native_tools:
        raise ValueError(f"{profile.display_name} documents no native tool calls")
    return dataclasses.replace(
        profile, key=f"{profile.key}-tools",
        display_name=f"{profile.display_name} (native tool calls)",
        contract=ContractKind.H_NATIVE_TOOLS, aliases=())


#: Holo3.1 in H's native function-calling contract, which H documents for Holo3.1 alone of the
#: Holo3.x line ("Models": "supports both output formats"; docs/contract.md).
HOLO31_TOOLS: tuple[ModelProfile, ...] = tuple(
    native_tools(p) for p in (HOLO31_08B, HOLO31_4B, HOLO31_9B, HOLO31_35B))


def _holo4(size: str, params: float) -> ModelProfile:
    repo = f"Hcompany/Holo4-{size}"
    return ModelProfile(
        key=f"holo4-{size.lower()}",
        display_name=f"Holo4-{size}",
        hf_id=repo,
        contract=ContractKind.H_STRUCTURED,
        vocabulary=Vocabulary.HUB,
        reasoning=_QWEN_REASONING,
        sampling=_HUB_SAMPLING,
        # H's self-hosting command serves Holo4 with the window it publishes, 262,144 tokens.
        serving=Serving(trust_remote_code=False, mamba_ssm_cache_dtype=None,
                        chat_template_content_format="openai", max_model_len=262_144),
        vllm=VllmRange((0, 28, 0)),
        weights=(
            _bf16(repo, params),
            Weights(WeightFormat.FP8, f"{repo}-FP8", int(params), 1.05),
            Weights(WeightFormat.NVFP4, f"{repo}-NVFP4", int(params), 0.6),
            Weights(WeightFormat.GGUF, f"{repo}-GGUF", int(params), 0.6),
        ),
        cache=_unknown_cache(StateKind.GATED_DELTANET,
                             "not read: Holo4's base and config.json are not confirmed"),
        context_length=262_144,
        aliases=(f"holo4-{size.lower()}",),
        # Assumed: Holo4 shares Qwen3.5's template (docs/models.md) and so its processor.
        image_tokens=QWEN35_DYNAMIC,
    )


HOLO4_27B = _holo4("27B", 27e9)
HOLO4_35B = _holo4("35B-A3B", 35e9)

HOLOTRON4_30B = ModelProfile(
    key="holotron4-30b-a3b",
    display_name="Holotron4-30B-A3B",
    hf_id="Hcompany/Holotron4-30B-A3B",
    contract=ContractKind.H_STRUCTURED,
    vocabulary=Vocabulary.HOLO_NANO,
    # The Nemotron 3 Nano family: enable_thinking in the template, vLLM's nemotron_v3 parser.
    reasoning=Reasoning(switch_kwarg=_ENABLE_THINKING, effort=None, parser="nemotron_v3",
                        tool_parser=None, agent_thinking=True),
    sampling=_NANO_SAMPLING,
    serving=Serving(trust_remote_code=True, mamba_ssm_cache_dtype="float32",
                    chat_template_content_format=None, max_model_len=65536),
    vllm=VllmRange((0, 20, 0)),
    weights=(
        _bf16("Hcompany/Holotron4-30B-A3B", 31e9),
        Weights(WeightFormat.FP8, "Hcompany/Holotron4-30B-A3B-FP8", int(31e9), 1.06),
    ),
    cache=_unknown_cache(StateKind.MAMBA2,
                         "Nemotron 3 Nano: 52 layers, 23 Mamba-2 and 6 attention; head counts "
                         "not read", layers=52, attention_layers=6, state_layers=23),
    context_length=262_144,
    aliases=("holotron4",),
    image_tokens=OMNI_TILES,
)

GENERIC_PROFILE = ModelProfile(
    key="generic-h",
    display_name="unknown model (H's documented contract)",
    hf_id="",
    contract=ContractKind.H_STRUCTURED,
    vocabulary=Vocabulary.HUB,
    reasoning=Reasoning(switch_kwarg=_ENABLE_THINKING, effort="medium", parser=None,
                        tool_parser=None, agent_thinking=True),
    sampling=_HUB_SAMPLING,
    serving=Serving(trust_remote_code=False, mamba_ssm_cache_dtype=None,
                    chat_template_content_format=None, max_model_len=32768),
    # structured_outputs, the field holodesk sends, is vLLM 0.12 or newer.
    vllm=VllmRange((0, 12, 0)),
    weights=(Weights(WeightFormat.BF16, "", 0, 2.0),),
    cache=_unknown_cache(StateKind.NONE, "unknown model: read from its config.json when cached"),
    context_length=None,
)

PROFILES: tuple[ModelProfile, ...] = (
    HOLOTRON_12B, LEGACY_PROFILE, HOLO31_08B, HOLO31_4B, HOLO31_9B, HOLO31_35B, *HOLO31_TOOLS,
    HOLO4_27B, HOLO4_35B, HOLOTRON4_30B, GENERIC_PROFILE,
)  # fmt: skip

DEFAULT_PROFILE = HOLOTRON_12B


# --------------------------------------------------------------------------- lookup


class UnknownProfile(HolodeskError):
    """A profile key that names no profile."""


def profile_keys() -> tuple[str, ...]:
    return tuple(p.key for p in PROFILES)


def profile_by_key(key: str) -> ModelProfile:
    """The profile named ``key`` (case-insensitive); :class:`UnknownProfile` otherwise."""
    wanted = key.strip().lower()
    for profile in PROFILES:
        if profile.key == wanted:
            return profile
    keys = ", ".join(profile_keys())
    raise UnknownProfile(
        f"there is no model profile {key!r}",
        Fix(f"use one of: {keys}; or leave it empty to find the profile from the served model",
            setting="model_profile"),
    )


@dataclass(frozen=True)
class ProfileMatch:
    """The profile for a served model, and how it was found."""

    profile: ModelProfile
    source: MatchSource
    matched: str = ""
    """The name that matched (the root or the served id)."""
    notice: str | None = None
    """For a guess: what was not recognised and what holodesk does instead."""
    weight_format: WeightFormat | None = field(default=None)

    @property
    def guessed(self) -> bool:
        return self.source is MatchSource.NONE


# Quantization and packaging suffixes of published and community checkpoints.
_SUFFIX = re.compile(
    r"[-_.](fp8(-dynamic)?|nvfp4|gguf|bf16|fp16|awq|gptq|int4|int8|w4a16|w8a8|mxfp4|"
    r"mlx(-\w+)?|q\d(_\w+)?|iq\d(_\w+)?)$"
)
_FORMATS = {"fp8": WeightFormat.FP8, "nvfp4": WeightFormat.NVFP4, "gguf": WeightFormat.GGUF,
            "bf16": WeightFormat.BF16}


def _base_name(name: str) -> str:
    """The last path component of a repo id or folder, lower case, without a ``.gguf``."""
    last = name.strip().replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    return last.removesuffix(".gguf")


def _strip_suffixes(name: str) -> str:
    while True:
        shorter = _SUFFIX.sub("", name)
        if shorter == name:
            return name
        name = shorter


def canonical_name(name: str) -> str:
    """``name`` reduced for comparison: its last path component, lower case, without
    quantization suffixes, with only letters and digits (``Hcompany/Holo-3.1-9B-FP8``,
    ``holo3-1-9b`` and ``/models/holo3.1-9b/`` all become ``holo319b``)."""
    return re.sub(r"[^a-z0-9]", "", _strip_suffixes(_base_name(name)))


def _format_from_name(name: str) -> WeightFormat | None:
    base = _base_name(name)
    if name.strip().lower().endswith(".gguf"):
        return WeightFormat.GGUF
    for suffix, fmt in _FORMATS.items():
        if re.search(rf"[-_.]{suffix}([-_.]|$)", base):
            return fmt
    return None


def _index() -> dict[str, ModelProfile]:
    found: dict[str, ModelProfile] = {}
    for profile in PROFILES:
        if profile in (LEGACY_PROFILE, GENERIC_PROFILE, *HOLO31_TOOLS):
            continue  # reached by key only: a served model's name says nothing of its contract
        for name in profile.names():
            if name:
                found.setdefault(canonical_name(name), profile)
    return found


_BY_NAME = _index()


def find_profile(served_id: str, root: str | None = None) -> ProfileMatch:
    """The profile of the model a server serves, from ``/v1/models``: its ``root`` (the
    weights: a repo id or a local folder) first, then the served ``id``.

    Case, organisation prefixes, quantization suffixes (``-FP8``, ``-NVFP4``, ``-GGUF``...)
    and local paths ending in the model's folder name are all tolerated. An unknown model
    gets :data:`GENERIC_PROFILE` (H's documented contract, hub tool names) with a notice.
    """
    for source, name in ((MatchSource.ROOT, root), (MatchSource.SERVED_ID, served_id)):
        if not name:
            continue
        profile = _BY_NAME.get(canonical_name(name))
        if profile is not None:
            return ProfileMatch(profile, source, name, weight_format=_format_from_name(name))
    shown = served_id if not root or root == served_id else f"{served_id} ({root})"
    return ProfileMatch(
        GENERIC_PROFILE, MatchSource.NONE, "",
        notice=(f"holodesk has no profile for {shown or 'an unnamed model'}: it talks to it with "
                "H Company's documented agent contract (structured JSON steps, the hub's tool "
                "names, reasoning on). Set the model profile if it is one of: "
                + ", ".join(k for k in profile_keys() if k != GENERIC_PROFILE.key)),
        weight_format=_format_from_name(root or served_id or ""),
    )  # fmt: skip


# --------------------------------------------------------------------------- vLLM versions

_VERSION = re.compile(r"(?<![\w.])v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.+\-]?(?:rc|dev|post|a|b)[\w.+]*"
                      r"|\+[\w.]+)?(?![\w.])")


def parse_vllm_version(text: str) -> tuple[int, int, int] | None:
    """The release of a vLLM version string: ``vllm --version`` output (possibly after log
    lines: the last line with a version wins) or ``importlib.metadata.version("vllm")``.

    ``0.17.1.dev12+g1234`` and ``0.20.0rc1`` read as their release numbers (0.17.1, 0.20.0):
    holodesk checks ranges on releases. None when no version is found.
    """
    for line in reversed(text.strip().splitlines()):
        match = _VERSION.search(line.strip())
        if match:
            major, minor, patch = match.group(1), match.group(2), match.group(3) or "0"
            return int(major), int(minor), int(patch)
    return None
