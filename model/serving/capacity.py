"""How many desktops one GPU serves: the memory arithmetic behind ``holodesk serve --plan``.

The published claim (docs/holotron.md, "Throughput and memory"): Holotron-12B keeps rising to
about 8,900 tokens/s at 100 concurrent sessions on one H100 where the attention-only Holo2-8B
levels off near 5,100. The mechanism is memory. vLLM runs as many sessions at once as their
caches fit in what is left of the GPU after the weights:

* an attention layer keeps K and V for every token of every session:
  ``2 x kv_heads x head_dim x dtype bytes`` per token and layer;
* a Mamba-2 layer keeps a fixed state per session, whatever its length: the SSM state
  ``heads x head_dim x state_size`` at the SSM cache dtype (float32: holodesk serves with
  ``--mamba-ssm-cache-dtype float32``) and the convolution state
  ``(conv_kernel - 1) x (heads x head_dim + 2 x n_groups x state_size)`` at the model dtype.

Those are vLLM's own shapes (``vllm/model_executor/layers/mamba/mamba_utils.py``,
``MambaStateShapeCalculator.mamba2_state_shape`` and ``MambaStateDtypeCalculator``).

Everything here is pure arithmetic over dataclasses, plus :func:`read_cached_config`, which
reads a model's ``config.json`` from the local Hugging Face cache (JSON only: no network, no
transformers). When the model is not cached, the built-in figures below are used, each naming
where it was published.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from model.problem import HolodeskError
from model.profiles import (
    NEMOTRON_TILES,
    ImageTokens,
    ModelProfile,
    StateKind,
    WeightFormat,
    tiled_image_tokens,
)

__all__ = [
    "ATTENTION_REFERENCE",
    "DEFAULT_GPU",
    "DEFAULT_RESERVE_GIB",
    "DEFAULT_TEXT_TOKENS",
    "GIB",
    "HOLOTRON",
    "IMAGES_PER_STEP",
    "KIB",
    "MIB",
    "Architecture",
    "AttentionLayers",
    "CapacityPlan",
    "ConfigError",
    "Dtypes",
    "GatedDeltaNetLayers",
    "Gpu",
    "GpuSource",
    "Mamba2Layers",
    "ModelPlan",
    "Workload",
    "architecture_for_profile",
    "architecture_from_config",
    "crossover_tokens",
    "dtypes_for_profile",
    "hub_cache",
    "image_tokens",
    "load_architecture",
    "make_plan",
    "max_num_seqs",
    "model_folder",
    "profile_architecture",
    "read_cached_config",
]

KIB = 1024
MIB = 1024**2
GIB = 1024**3

#: The screenshots a step sends (the history; docs/holotron.md "History").
IMAGES_PER_STEP = 3
#: Text of a long step besides its screenshots: system prompt with the action schema, task,
#: notes, the compact list of past actions and the answer (app/status.py sizes the context
#: window with the same allowance).
DEFAULT_TEXT_TOKENS = 4000
#: GPU memory vLLM needs besides weights and caches: the activation peak of its profiling run
#: (a full batch of prompt tokens, the vision encoder on the most images a prompt may carry),
#: CUDA graphs, and the CUDA context with its libraries' workspaces. An assumption, stated as
#: such in the output: vLLM measures the real figure at start-up ("Available KV cache memory"
#: in its log); docs/holotron.md says how to turn that into ``--reserve-gb``.
DEFAULT_RESERVE_GIB = 4.0


class ConfigError(ValueError):
    """A ``config.json`` that does not describe an architecture this planner knows."""


# --------------------------------------------------------------------------- architecture


@dataclass(frozen=True)
class AttentionLayers:
    """The attention layers: each keeps K and V of ``kv_heads x head_dim`` per token."""

    layers: int
    kv_heads: int
    head_dim: int

    def kv_bytes_per_token(self, dtype_bytes: int) -> int:
        return self.layers * 2 * self.kv_heads * self.head_dim * dtype_bytes


@dataclass(frozen=True)
class Mamba2Layers:
    """The Mamba-2 layers; their state per session does not grow with its length."""

    layers: int
    heads: int
    head_dim: int
    state_size: int
    n_groups: int
    conv_kernel: int

    @property
    def intermediate(self) -> int:
        # vLLM's Nemotron-H sizes the mixer as mamba_num_heads x mamba_head_dim.
        return self.heads * self.head_dim

    @property
    def conv_dim(self) -> int:
        return self.intermediate + 2 * self.n_groups * self.state_size

    def ssm_state_bytes(self, dtype_bytes: int) -> int:
        """All layers' SSM (temporal) state of one session."""
        return self.layers * self.heads * self.head_dim * self.state_size * dtype_bytes

    def conv_state_bytes(self, dtype_bytes: int) -> int:
        """All layers' convolution state of one session."""
        return self.layers * (self.conv_kernel - 1) * self.conv_dim * dtype_bytes


@dataclass(frozen=True)
class GatedDeltaNetLayers:
    """Qwen3.5's linear-attention (Gated DeltaNet) layers: a fixed state per session.

    vLLM's shapes (``MambaStateShapeCalculator.gated_delta_net_state_shape``): the temporal
    state ``value_heads x value_head_dim x key_head_dim`` and the convolution state
    ``(conv_kernel - 1) x (2 x key_heads x key_head_dim + value_heads x value_head_dim)``.
    """

    layers: int
    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int

    @property
    def conv_dim(self) -> int:
        return 2 * self.key_heads * self.key_head_dim + self.value_heads * self.value_head_dim

    def ssm_state_bytes(self, dtype_bytes: int) -> int:
        """All layers' recurrent state of one session."""
        return (self.layers * self.value_heads * self.value_head_dim * self.key_head_dim
                * dtype_bytes)

    def conv_state_bytes(self, dtype_bytes: int) -> int:
        """All layers' convolution state of one session."""
        return self.layers * (self.conv_kernel - 1) * self.conv_dim * dtype_bytes


@dataclass(frozen=True)
class Architecture:
    """What the planner needs of a model: its cache-bearing layers and its weights' size."""

    name: str
    repo: str
    attention: AttentionLayers
    mamba: Mamba2Layers | None
    layers: int
    """All layers of the language model (Mamba, attention and MLP)."""
    weight_bytes: int
    source: str
    """Where the figures come from (a file of the local cache, or the published page)."""
    weights_source: str
    deltanet: GatedDeltaNetLayers | None = None
    """Gated DeltaNet layers (Qwen3.5), the other kind of fixed-state layer."""

    @property
    def hybrid(self) -> bool:
        return self.mamba is not None or self.deltanet is not None

    def describe(self) -> str:
        """``62 layers: 28 Mamba-2, 6 attention, 28 MLP``, ``40 layers: 30 Gated DeltaNet,
        10 attention`` or ``36 attention layers``."""
        if self.deltanet is not None:
            return (f"{self.layers} layers: {self.deltanet.layers} Gated DeltaNet, "
                    f"{self.attention.layers} attention")
        if self.mamba is None:
            return f"{self.attention.layers} attention layers"
        mlp = self.layers - self.mamba.layers - self.attention.layers
        return (f"{self.layers} layers: {self.mamba.layers} Mamba-2, "
                f"{self.attention.layers} attention, {mlp} MLP")


# The base language model of Holotron-12B. Holotron-12B is post-trained from it without changes
# to the architecture (docs/holotron.md).
_NEMOTRON_CONFIG = "https://huggingface.co/nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16 (config.json)"
_NEMOTRON_CHECK = ("Megatron-Bridge NemotronNano12Bv2VLModelProvider, "
                   "https://docs.nvidia.com/nemo/megatron-bridge/0.4.1/apidocs/bridge/"
                   "bridge.models.nemotron_vl.nemotron_vl_provider.html")

#: Holotron-12B from the published configuration: hybrid_override_pattern
#: ``M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M-`` (28 M, 6 *, 28 -),
#: hidden 5120, 40 query / 8 KV heads of 128; mamba_num_heads 128, mamba_head_dim 80,
#: ssm_state_size 128, n_groups 8, conv_kernel 4. Weights: about 13 billion parameters in
#: BF16 (the language model's 12.3 billion plus the RADIO vision encoder and projector),
#: the size the Hugging Face pages of both checkpoints show.
HOLOTRON = Architecture(
    name="Holotron-12B",
    repo="Hcompany/Holotron-12B",
    attention=AttentionLayers(layers=6, kv_heads=8, head_dim=128),
    mamba=Mamba2Layers(layers=28, heads=128, head_dim=80, state_size=128, n_groups=8,
                       conv_kernel=4),
    layers=62,
    weight_bytes=13_000_000_000 * 2,
    source=f"built-in, from {_NEMOTRON_CONFIG}; checked against {_NEMOTRON_CHECK}",
    weights_source="built-in: about 13B parameters in BF16 "
    "(https://huggingface.co/Hcompany/Holotron-12B)",
)

_QWEN3_VL_CONFIG = "https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct (config.json, text_config)"

#: A pure-attention model of Holo2-8B's shape: Holo2-8B is post-trained from Qwen3-VL-8B, whose
#: language model has 36 layers with 32 query / 8 KV heads of 128 (hidden 4096). Weights: 8.77
#: billion parameters in BF16, the size the Hugging Face page of Qwen3-VL-8B shows.
ATTENTION_REFERENCE = Architecture(
    name="Holo2-8B shape",
    repo="Hcompany/Holo2-8B",
    attention=AttentionLayers(layers=36, kv_heads=8, head_dim=128),
    mamba=None,
    layers=36,
    weight_bytes=8_770_000_000 * 2,
    source=f"built-in, from {_QWEN3_VL_CONFIG} (Holo2-8B is post-trained from Qwen3-VL-8B)",
    weights_source="built-in: 8.77B parameters in BF16 "
    "(https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct)",
)


def _language_part(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's section: ``llm_config`` (InternVL-style VL configs, the family of
    Nemotron VL), ``text_config`` (Qwen-VL) or the top level (a text-only model)."""
    for key in ("llm_config", "text_config", "language_config"):
        part = config.get(key)
        if isinstance(part, Mapping) and part:
            return part
    return config


def _int(section: Mapping[str, Any], *keys: str, default: int | None = None) -> int:
    for key in keys:
        value = section.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    if default is not None:
        return default
    raise ConfigError(f"config.json has no {' or '.join(keys)}")


def architecture_from_config(
    config: Mapping[str, Any], *, name: str, repo: str, source: str,
    weight_bytes: int, weights_source: str,
) -> Architecture:
    """The :class:`Architecture` a Hugging Face ``config.json`` describes.

    Knows the hybrid layout of Nemotron-H (``hybrid_override_pattern``: ``M`` Mamba-2, ``*``
    attention, ``-`` MLP), Qwen3.5's (``layer_types``: ``linear_attention`` Gated DeltaNet,
    ``full_attention``) and plain decoder layouts (every layer attention). Raises
    :class:`ConfigError` when a figure the arithmetic needs is missing.
    """
    text = _language_part(config)
    hidden = _int(text, "hidden_size")
    heads = _int(text, "num_attention_heads")
    kv_heads = _int(text, "num_key_value_heads", default=heads)
    head_dim = _int(text, "head_dim", default=hidden // heads)
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        attention_layers = pattern.count("*")
        mamba_layers = pattern.count("M")
        mamba = Mamba2Layers(
            layers=mamba_layers,
            heads=_int(text, "mamba_num_heads"),
            head_dim=_int(text, "mamba_head_dim"),
            state_size=_int(text, "ssm_state_size", "mamba_state_dim"),
            n_groups=_int(text, "n_groups", "mamba_num_groups"),
            conv_kernel=_int(text, "conv_kernel", "mamba_d_conv"),
        )
        layers = len(pattern)
        deltanet = None
    elif isinstance(text.get("layer_types"), list) and "linear_attention" in text["layer_types"]:
        kinds = text["layer_types"]
        layers = len(kinds)
        attention_layers = sum(1 for k in kinds if k == "full_attention")
        mamba = None
        deltanet = GatedDeltaNetLayers(
            layers=sum(1 for k in kinds if k == "linear_attention"),
            key_heads=_int(text, "linear_num_key_heads"),
            value_heads=_int(text, "linear_num_value_heads"),
            key_head_dim=_int(text, "linear_key_head_dim"),
            value_head_dim=_int(text, "linear_value_head_dim"),
            conv_kernel=_int(text, "linear_conv_kernel_dim"),
        )
    else:
        layers = _int(text, "num_hidden_layers")
        attention_layers = layers
        mamba = None
        deltanet = None
    return Architecture(
        name=name, repo=repo,
        attention=AttentionLayers(attention_layers, kv_heads, head_dim),
        mamba=mamba, layers=layers, weight_bytes=weight_bytes, source=source,
        weights_source=weights_source, deltanet=deltanet,
    )  # fmt: skip


# --------------------------------------------------------------------------- the local cache


def hub_cache(environ: Mapping[str, str] | None = None) -> Path:
    """Where Hugging Face keeps downloaded models: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``,
    else ``~/.cache/huggingface/hub`` (huggingface_hub's own order)."""
    env = os.environ if environ is None else environ
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "huggingface" / "hub"


def _snapshot(repo: str, environ: Mapping[str, str] | None) -> Path | None:
    """The snapshot folder of ``repo`` with a config.json: the one ``refs/main`` names, else
    the most recently written."""
    folder = hub_cache(environ) / ("models--" + repo.replace("/", "--"))
    snapshots = folder / "snapshots"
    try:
        main = (folder / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        main = ""
    if main and (snapshots / main / "config.json").is_file():
        return snapshots / main
    try:
        found = [p for p in snapshots.iterdir() if (p / "config.json").is_file()]
    except OSError:
        return None
    return max(found, key=lambda p: (p / "config.json").stat().st_mtime, default=None)


def model_folder(model: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder holding ``model``'s config.json: ``model`` itself when it is a local folder
    (what ``holodesk serve --model`` also takes), else its snapshot in the cache."""
    local = Path(model).expanduser()
    if (local / "config.json").is_file():
        return local
    if model.count("/") != 1 or local.is_absolute():
        return None
    return _snapshot(model, environ)


def read_cached_config(
    model: str, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], Path] | None:
    """``model``'s parsed config.json and its path, when it is on this machine; else None."""
    folder = model_folder(model, environ)
    if folder is None:
        return None
    path = folder / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (data, path) if isinstance(data, dict) else None


def _weights_on_disk(folder: Path) -> int | None:
    """The checkpoint's size in bytes: the safetensors index's ``total_size``, else the size
    of the one ``model.safetensors``."""
    index = folder / "model.safetensors.index.json"
    try:
        total = json.loads(index.read_text(encoding="utf-8"))["metadata"]["total_size"]
        if isinstance(total, int) and total > 0:
            return total
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        return (folder / "model.safetensors").stat().st_size or None
    except OSError:
        return None


def load_architecture(
    model: str, builtin: Architecture, environ: Mapping[str, str] | None = None
) -> tuple[Architecture, str | None]:
    """``model``'s architecture from its config.json on this machine, else ``builtin``.

    Returns the architecture and, when a cached config was there but could not be used, why
    (the built-in figures are used then, and the output says so).
    """
    found = read_cached_config(model, environ)
    if found is None:
        return builtin, None
    config, path = found
    weights = _weights_on_disk(path.parent)
    try:
        arch = architecture_from_config(
            config, name=builtin.name, repo=model, source=f"local cache, {path}",
            weight_bytes=weights if weights is not None else builtin.weight_bytes,
            weights_source=f"checkpoint size on disk, {path.parent}" if weights is not None
            else builtin.weights_source,
        )  # fmt: skip
    except ConfigError as exc:
        return builtin, f"{path}: {exc}; using the built-in figures"
    return arch, None


# --------------------------------------------------------------------------- the workload


def image_tokens(width: int, height: int, *, tile: int = 512, max_tiles: int = 12,
                 tile_tokens: int = 256) -> int:
    """The tokens one screenshot costs Holotron-12B's base model (docs/holotron.md, "Images");
    other models: their profile's rule (:attr:`ModelProfile.image_rule`, docs/models.md)."""
    return tiled_image_tokens(width, height, tile=tile, max_tiles=max_tiles,
                              tile_tokens=tile_tokens)


@dataclass(frozen=True)
class Workload:
    """What one session holds at its longest: ``images`` screenshots plus ``text_tokens``."""

    images: int = IMAGES_PER_STEP
    image_width: int = 2048
    image_height: int = 1152
    text_tokens: int = DEFAULT_TEXT_TOKENS
    image_rule: ImageTokens = NEMOTRON_TILES
    """What a screenshot costs the served model: its profile's rule (docs/models.md)."""

    @property
    def tokens_per_image(self) -> int:
        return self.image_rule.count(self.image_width, self.image_height)

    def to_dict(self) -> dict[str, Any]:
        return {"images": self.images, "image_width": self.image_width,
                "image_height": self.image_height, "text_tokens": self.text_tokens,
                "image_rule": self.image_rule.rule.value,
                "image_rule_source": self.image_rule.source}

    @property
    def context(self) -> int:
        return self.images * self.tokens_per_image + self.text_tokens

    def describe(self) -> str:
        return (f"{self.images} screenshots of {self.image_width}x{self.image_height} x "
                f"{self.tokens_per_image:,} tokens + {self.text_tokens:,} tokens of text")


# --------------------------------------------------------------------------- the GPU


class GpuSource(Enum):
    """Where the GPU's memory size came from."""

    NVIDIA_SMI = "nvidia-smi"
    OPTION = "given"
    DEFAULT = "assumed"


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: int
    source: GpuSource


#: The reference card when none is found or given: an H100 80GB, with the memory nvidia-smi
#: reports for it (81,559 MiB).
DEFAULT_GPU = Gpu("NVIDIA H100 80GB HBM3", 81_559 * MIB, GpuSource.DEFAULT)


@dataclass(frozen=True)
class Dtypes:
    """Bytes per element: weights and KV cache at the model dtype (``--dtype bfloat16``, KV
    cache dtype ``auto``), the conv state at the model dtype, the SSM state at
    ``--mamba-ssm-cache-dtype float32``."""

    model: int = 2
    kv: int = 2
    conv: int = 2
    ssm: int = 4
    model_name: str = "bfloat16"
    ssm_name: str = "float32"


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class ModelPlan:
    """One model on the GPU: what a session costs and how many fit."""

    arch: Architecture
    context: int
    pool_bytes: int
    """What vLLM has for caches: its share of the GPU less the weights and the reserve."""
    kv_bytes_per_token: int
    ssm_state_bytes: int
    conv_state_bytes: int
    sessions: int | None = None
    """The number of sessions asked about (``--sessions``), if any."""

    @property
    def kv_bytes(self) -> int:
        return self.kv_bytes_per_token * self.context

    @property
    def fixed_bytes(self) -> int:
        """The Mamba state: the same for a session of any length."""
        return self.ssm_state_bytes + self.conv_state_bytes

    @property
    def session_bytes(self) -> int:
        return self.kv_bytes + self.fixed_bytes

    @property
    def sessions_fit(self) -> int:
        if self.pool_bytes <= 0:
            return 0
        return self.pool_bytes // self.session_bytes

    @property
    def sessions_bytes(self) -> int | None:
        """Memory the asked-about sessions need at this context."""
        return None if self.sessions is None else self.sessions * self.session_bytes

    @property
    def sessions_max_context(self) -> int | None:
        """The longest context each of the asked-about sessions can have (0: none fit)."""
        if self.sessions is None:
            return None
        left = self.pool_bytes // self.sessions - self.fixed_bytes
        return max(0, left // self.kv_bytes_per_token)


def crossover_tokens(hybrid: ModelPlan, attention: ModelPlan) -> float | None:
    """The context at which a hybrid session costs as much as an attention-only one: the
    fixed state over the difference in KV per token. None when the hybrid's KV per token is
    not smaller (it would never catch up)."""
    saved = attention.kv_bytes_per_token - hybrid.kv_bytes_per_token
    if saved <= 0:
        return None
    return (hybrid.fixed_bytes - attention.fixed_bytes) / saved


@dataclass(frozen=True)
class CapacityPlan:
    """Both models side by side on one GPU, for one workload."""

    gpu: Gpu
    utilization: float
    reserve_bytes: int
    workload: Workload
    context: int
    hybrid: ModelPlan
    attention: ModelPlan
    dtypes: Dtypes = field(default_factory=Dtypes)
    notes: tuple[str, ...] = ()

    @property
    def vllm_bytes(self) -> int:
        """The share of the GPU vLLM takes (``--gpu-memory-utilization``)."""
        return int(self.gpu.memory_bytes * self.utilization)

    @property
    def crossover(self) -> float | None:
        return crossover_tokens(self.hybrid, self.attention)

    def to_dict(self) -> dict[str, Any]:
        """Everything, inputs and results, as plain JSON-able data (``--json``)."""

        def model(p: ModelPlan) -> dict[str, Any]:
            arch = asdict(p.arch)
            return {
                "architecture": arch, "layers": p.arch.describe(),
                "weights_bytes": p.arch.weight_bytes, "pool_bytes": p.pool_bytes,
                "kv_bytes_per_token": p.kv_bytes_per_token, "kv_bytes": p.kv_bytes,
                "ssm_state_bytes": p.ssm_state_bytes, "conv_state_bytes": p.conv_state_bytes,
                "session_bytes": p.session_bytes, "sessions_fit": p.sessions_fit,
                "sessions": p.sessions, "sessions_bytes": p.sessions_bytes,
                "sessions_fits": None if p.sessions is None else p.sessions <= p.sessions_fit,
                "sessions_max_context": p.sessions_max_context,
            }  # fmt: skip

        return {
            "gpu": {"name": self.gpu.name, "memory_bytes": self.gpu.memory_bytes,
                    "source": self.gpu.source.value},
            "gpu_memory_utilization": self.utilization,
            "vllm_bytes": self.vllm_bytes,
            "reserve_bytes": self.reserve_bytes,
            "context_tokens": self.context,
            "workload": {**self.workload.to_dict(),
                         "tokens_per_image": self.workload.tokens_per_image,
                         "context": self.workload.context},
            "dtypes": asdict(self.dtypes),
            "holotron": model(self.hybrid),
            "attention_only": model(self.attention),
            "crossover_tokens": self.crossover,
            "notes": list(self.notes),
        }  # fmt: skip


def _model_plan(arch: Architecture, *, vllm_bytes: int, reserve: int, context: int,
                dtypes: Dtypes, sessions: int | None) -> ModelPlan:
    state = arch.mamba or arch.deltanet
    return ModelPlan(
        arch=arch,
        context=context,
        pool_bytes=vllm_bytes - arch.weight_bytes - reserve,
        kv_bytes_per_token=arch.attention.kv_bytes_per_token(dtypes.kv),
        ssm_state_bytes=state.ssm_state_bytes(dtypes.ssm) if state else 0,
        conv_state_bytes=state.conv_state_bytes(dtypes.conv) if state else 0,
        sessions=sessions,
    )


def make_plan(
    *,
    gpu: Gpu = DEFAULT_GPU,
    utilization: float = 0.9,
    reserve_bytes: int = int(DEFAULT_RESERVE_GIB * GIB),
    workload: Workload | None = None,
    context: int | None = None,
    sessions: int | None = None,
    hybrid: Architecture = HOLOTRON,
    attention: Architecture = ATTENTION_REFERENCE,
    dtypes: Dtypes | None = None,
    notes: tuple[str, ...] = (),
) -> CapacityPlan:
    """The plan for ``gpu``. ``context`` (tokens per session) defaults to the ``workload``'s:
    a long step of a holodesk run."""
    if not 0 < utilization <= 1:
        raise ValueError("the GPU memory share is between 0 and 1")
    if sessions is not None and sessions < 1:
        raise ValueError("sessions must be at least 1")
    work = workload or Workload()
    tokens = work.context if context is None else context
    if tokens < 1:
        raise ValueError("the context is at least 1 token")
    types = dtypes or Dtypes()
    vllm_bytes = int(gpu.memory_bytes * utilization)

    def one(arch: Architecture) -> ModelPlan:
        return _model_plan(arch, vllm_bytes=vllm_bytes, reserve=reserve_bytes, context=tokens,
                           dtypes=types, sessions=sessions)

    return CapacityPlan(
        gpu=gpu, utilization=utilization, reserve_bytes=reserve_bytes, workload=work,
        context=tokens, hybrid=one(hybrid), attention=one(attention), dtypes=types,
        notes=notes,
    )  # fmt: skip


def max_num_seqs(plan: CapacityPlan) -> int:
    """``--max-num-seqs`` for the served (hybrid) model: the sessions that fit, at least 1.

    vLLM admits up to ``--max-num-seqs`` sequences at once; beyond what their caches fit it
    preempts running ones and computes them again later, which costs throughput for nothing.
    """
    return max(1, plan.hybrid.sessions_fit)



# --------------------------------------------------------------------------- model profiles


def architecture_for_profile(
    profile: ModelProfile, fmt: WeightFormat | None = None
) -> Architecture:
    """The built-in :class:`Architecture` of ``profile`` with the weights of ``fmt`` (default:
    its reference checkpoint). Raises :class:`ConfigError` naming the figures no source gives
    (docs/models.md): the plan then needs the model's config.json on this machine."""
    cache = profile.cache
    missing = cache.missing()
    if missing:
        raise ConfigError(
            f"{profile.display_name}: {', '.join(missing)} unknown (not published, or not "
            "read by holodesk; docs/models.md); download the model so its config.json is in "
            "the Hugging Face cache, or pass its folder"
        )
    weights = profile.weights_for(fmt)
    # missing() is empty, so every figure the state kind needs is set.
    assert cache.layers and cache.attention_layers and cache.kv_heads and cache.head_dim
    mamba = deltanet = None
    if cache.state is StateKind.MAMBA2:
        mamba = Mamba2Layers(
            layers=cache.state_layers or 0, heads=cache.mamba_heads or 0,
            head_dim=cache.mamba_head_dim or 0, state_size=cache.ssm_state_size or 0,
            n_groups=cache.n_groups or 0, conv_kernel=cache.conv_kernel or 0,
        )  # fmt: skip
    elif cache.state is StateKind.GATED_DELTANET:
        deltanet = GatedDeltaNetLayers(
            layers=cache.state_layers or 0, key_heads=cache.linear_key_heads or 0,
            value_heads=cache.linear_value_heads or 0,
            key_head_dim=cache.linear_key_head_dim or 0,
            value_head_dim=cache.linear_value_head_dim or 0, conv_kernel=cache.conv_kernel or 0,
        )  # fmt: skip
    how = "published size" if weights.exact else "estimate"
    return Architecture(
        name=profile.display_name, repo=weights.repo,
        attention=AttentionLayers(cache.attention_layers, cache.kv_heads, cache.head_dim),
        mamba=mamba, deltanet=deltanet, layers=cache.layers, weight_bytes=weights.bytes,
        source=f"built-in, {cache.source}",
        weights_source=(f"built-in: about {weights.parameters / 1e9:g}B parameters in "
                        f"{weights.format.value.upper()}, {weights.bytes_per_parameter:g} bytes "
                        f"each ({how}; docs/models.md)"),
    )  # fmt: skip


def profile_architecture(
    profile: ModelProfile, model: str | None = None, fmt: WeightFormat | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Architecture | None, str | None]:
    """``profile``'s architecture for ``model`` (a repo id or folder; default the profile's
    checkpoint of ``fmt``): from its config.json on this machine when there, else built in.

    Returns None and why when neither can say (a figure of the profile is unknown and the
    config is not cached); otherwise the architecture and a note when one is due.
    """
    weights_fmt = fmt if fmt is not None else (profile.format_of(model) if model else None)
    try:
        builtin: Architecture | None = architecture_for_profile(profile, weights_fmt)
    except ConfigError as exc:
        builtin, why = None, str(exc)
    except HolodeskError as exc:
        builtin, why = None, exc.message
    repo = model or (builtin.repo if builtin else profile.weights_for(weights_fmt).repo)
    found = read_cached_config(repo, environ) if repo else None
    if found is not None:
        config, path = found
        on_disk = _weights_on_disk(path.parent)
        fallback = builtin.weight_bytes if builtin else profile.weights_for(weights_fmt).bytes
        try:
            arch = architecture_from_config(
                config, name=profile.display_name, repo=repo, source=f"local cache, {path}",
                weight_bytes=on_disk if on_disk is not None else fallback,
                weights_source=f"checkpoint size on disk, {path.parent}" if on_disk is not None
                else (builtin.weights_source if builtin else "built-in estimate"),
            )  # fmt: skip
        except ConfigError as exc:
            if builtin is None:
                return None, f"{path}: {exc}"
            return builtin, f"{path}: {exc}; using the built-in figures"
        return arch, None
    if builtin is None:
        return None, why
    return builtin, None


def dtypes_for_profile(profile: ModelProfile) -> Dtypes:
    """The cache dtypes ``profile`` is served with: the SSM state at
    ``--mamba-ssm-cache-dtype`` when the profile sets it (float32 for the Holotron line),
    else at the model dtype (vLLM's ``auto``)."""
    ssm = profile.serving.mamba_ssm_cache_dtype
    if ssm == "float32":
        return Dtypes()
    return Dtypes(ssm=2, ssm_name="bfloat16")
