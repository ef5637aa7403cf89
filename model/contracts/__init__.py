"""The contracts holodesk speaks to a model: each a codec that builds the request and decodes
the answer into holodesk's own action model (docs/contract.md)."""

from model.contracts.base import (
    Codec,
    CodecConfig,
    ContractKind,
    ToolCall,
    ToolResult,
    Vocabulary,
    tool_result,
)
from model.contracts.h_native import HNativeToolsCodec
from model.contracts.h_structured import HStructuredCodec
from model.contracts.legacy import LegacyCodec
from model.contracts.localization import decode_point, localization_body


def codec_for(config: CodecConfig, *, legacy: LegacyCodec | None = None) -> Codec:
    """The codec of ``config.contract`` (``legacy`` is the legacy codec to use, sampled as
    the client's settings say; a default one otherwise)."""
    if config.contract is ContractKind.H_STRUCTURED:
        return HStructuredCodec(config)
    if config.contract is ContractKind.H_NATIVE_TOOLS:
        return HNativeToolsCodec(config)
    return legacy if legacy is not None else LegacyCodec(
        config.temperature, config.retry_temperature or config.temperature, config.max_tokens)

__all__ = [
    "Codec",
    "CodecConfig",
    "ContractKind",
    "HNativeToolsCodec",
    "HStructuredCodec",
    "LegacyCodec",
    "ToolCall",
    "ToolResult",
    "Vocabulary",
    "codec_for",
    "decode_point",
    "localization_body",
    "tool_result",
]
