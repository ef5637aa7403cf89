"""Choosing H's native tool calls for Holo3.1 (docs/contract.md, "Choosing it"): the `-tools`
profile key, named in the settings, gives a run the native codec in H's coordinates and a
`holodesk serve` command with vLLM's tool-call flags; a served model's name never picks it."""

from __future__ import annotations

from app.parts import auto_codec, run_codec, run_convention
from app.serving import serve_config
from app.settings import Settings
from model.client import ServedModel
from model.contracts import ContractKind, HNativeToolsCodec
from model.coords import Convention
from model.serving.launcher import build_command


def test_the_tools_profile_gives_the_native_codec_and_the_tool_parser() -> None:
    settings = Settings(model_profile="holo3.1-9b-tools", convention=Convention.PIXELS,
                        serve_model="Hcompany/Holo-3.1-9B")
    codec = run_codec(settings)
    assert isinstance(codec, HNativeToolsCodec)
    assert run_convention(settings, codec) is Convention.NORM1000
    argv = build_command(serve_config(settings))
    assert argv[2] == "Hcompany/Holo-3.1-9B"
    at = argv.index("--enable-auto-tool-choice")
    assert argv[at:at + 3] == ["--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder"]
    assert argv[argv.index("--reasoning-parser") + 1] == "qwen3"


def test_the_served_name_picks_the_structured_contract() -> None:
    codec = auto_codec(ServedModel("holo3.1-9b-tools", 65536, "Hcompany/Holo-3.1-9B"))
    assert codec.codec.kind is ContractKind.H_STRUCTURED
