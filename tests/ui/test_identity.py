"""ui.identity, in this process: holodesk's own packages pass; a look-alike does not."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

import app
import control
import model
from ui.identity import MARK, PACKAGES, identity_problem


def test_holodesks_own_packages_pass() -> None:
    assert identity_problem() is None
    for package in (app, control, model):
        assert getattr(package, MARK) is True
    assert PACKAGES == ("app", "control", "model")


def look_alike(name: str, folder: Path, *, marked: bool) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(folder / name / "__init__.py")
    if marked:
        setattr(module, MARK, True)
    return module


@pytest.mark.parametrize("name", PACKAGES)
@pytest.mark.parametrize("marked", [False, True], ids=["unmarked", "marked-elsewhere"])
def test_a_package_from_elsewhere_is_named_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, marked: bool
) -> None:
    monkeypatch.setitem(sys.modules, name, look_alike(name, tmp_path, marked=marked))
    problem = identity_problem()
    assert problem is not None
    assert f"`{name}`" in problem and str(tmp_path / name / "__init__.py") in problem
    assert "pipx install" in problem and "venv" in problem


def test_a_namespace_package_is_not_holodesks(monkeypatch: pytest.MonkeyPatch) -> None:
    # A folder named `model` without __init__.py anywhere on the path imports as one.
    monkeypatch.setitem(sys.modules, "model", types.ModuleType("model"))
    problem = identity_problem()
    assert problem is not None and "namespace package" in problem
