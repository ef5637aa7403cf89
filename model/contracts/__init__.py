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
from model.contracts.legacy import LegacyCodec

__all__ = [
    "Codec",
    "CodecConfig",
    "ContractKind",
    "LegacyCodec",
    "ToolCall",
    "ToolResult",
    "Vocabulary",
    "tool_result",
]
