"""Which contract a run speaks when no profile is named (docs/contract.md, issue 22)."""

from __future__ import annotations

import pytest

from app.parts import auto_codec, convention_notice, run_codec, run_convention
from app.settings import Settings
from model.client import ServedModel
from model.contracts import ContractKind, Vocabulary
from model.coords import Convention


@pytest.mark.parametrize(("name", "root"), [
    ("holotron", "Hcompany/Holotron-12B"),  # holodesk's own served name
    ("holotron", None),
])
def test_holotron_12b_gets_hs_contract_in_the_holo_nano_tools(name: str,
                                                              root: str | None) -> None:
    choice = auto_codec(ServedModel(name, 32768, root))
    codec = choice.codec
    assert choice.notice == ""
    assert codec.kind is ContractKind.H_STRUCTURED
    assert codec.config.vocabulary is Vocabulary.HOLO_NANO  # type: ignore[attr-defined]


def test_an_unknown_model_gets_hs_documented_contract_with_a_notice(
        caplog: pytest.LogCaptureFixture) -> None:
    choice = auto_codec(ServedModel("my-model", 32768, "/models/fine-tune"))
    codec = choice.codec
    assert "holodesk has no profile for my-model" in choice.notice
    assert codec.kind is ContractKind.H_STRUCTURED
    assert codec.config.vocabulary is Vocabulary.HUB  # type: ignore[attr-defined]
    assert "holodesk has no profile for my-model" in caplog.text


def test_the_legacy_profile_keeps_holodesks_own_dialect() -> None:
    settings = Settings(model_profile="legacy")
    codec = run_codec(settings)
    assert codec is not None and codec.kind is ContractKind.LEGACY


@pytest.mark.parametrize("root", ["Hcompany/Holo-3.1-9B", "Hcompany/Holo4-35B-A3B-FP8",
                                  "/srv/models/holo3.1-4b"])
def test_a_recognised_h_model_gets_its_documented_contract(root: str) -> None:
    codec = auto_codec(ServedModel("served", 262144, root)).codec
    assert codec.kind is ContractKind.H_STRUCTURED
    assert codec.config.vocabulary is Vocabulary.HUB  # type: ignore[attr-defined]


def test_a_named_profile_fixes_the_contract_and_its_coordinates() -> None:
    settings = Settings(model_profile="holotron-12b", convention=Convention.PIXELS)
    codec = run_codec(settings)
    assert codec is not None and codec.kind is ContractKind.H_STRUCTURED
    assert run_convention(settings, codec) is Convention.NORM1000
    legacy = Settings(convention=Convention.PIXELS)
    assert run_codec(legacy) is None and run_convention(legacy, None) is Convention.PIXELS


def test_a_convention_hs_contract_does_not_use_is_said() -> None:
    settings = Settings(model_profile="holotron-12b", convention=Convention.PIXELS)
    said = convention_notice(settings, run_codec(settings))
    assert "convention setting (pixels) is not used" in said
    assert convention_notice(Settings(model_profile="holotron-12b"),
                             run_codec(Settings(model_profile="holotron-12b"))) == ""
    legacy = Settings(model_profile="legacy", convention=Convention.PIXELS)
    assert convention_notice(legacy, run_codec(legacy)) == ""
