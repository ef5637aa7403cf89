"""Which contract a run speaks when no profile is named (docs/contract.md, issue 22)."""

from __future__ import annotations

import pytest

from app.parts import auto_codec, run_codec, run_convention
from app.settings import Settings
from model.client import ServedModel
from model.contracts import ContractKind, Vocabulary
from model.coords import Convention


@pytest.mark.parametrize(("name", "root"), [
    ("holotron", "Hcompany/Holotron-12B"),  # holodesk's own served name
    ("my-model", "/models/fine-tune"),  # nothing known: may be a Holotron-12B fine-tune
    ("holotron", None),
])
def test_holotron_and_unknown_models_keep_holodesks_own_dialect(name: str,
                                                               root: str | None) -> None:
    assert auto_codec(ServedModel(name, 32768, root)) is None


@pytest.mark.parametrize("root", ["Hcompany/Holo-3.1-9B", "Hcompany/Holo4-35B-A3B-FP8",
                                  "/srv/models/holo3.1-4b"])
def test_a_recognised_h_model_gets_its_documented_contract(root: str) -> None:
    codec = auto_codec(ServedModel("served", 262144, root))
    assert codec is not None and codec.kind is ContractKind.H_STRUCTURED
    assert codec.config.vocabulary is Vocabulary.HUB  # type: ignore[attr-defined]


def test_a_named_profile_fixes_the_contract_and_its_coordinates() -> None:
    settings = Settings(model_profile="holotron-12b", convention=Convention.PIXELS)
    codec = run_codec(settings)
    assert codec is not None and codec.kind is ContractKind.H_STRUCTURED
    assert run_convention(settings, codec) is Convention.NORM1000
    legacy = Settings(convention=Convention.PIXELS)
    assert run_codec(legacy) is None and run_convention(legacy, None) is Convention.PIXELS
