"""The layering rules of the design card, checked on the source: ui -> app -> {model, control}."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# What each package may not import (top-level module names).
FORBIDDEN = {
    "model": {"PySide6", "pyautogui", "pynput", "mss", "control", "app", "ui"},
    "control": {"PySide6", "app", "ui"},
    "app": {"ui"},
}
# Libraries that need a display when imported: only ever imported inside functions.
LAZY = {"pyautogui", "pynput", "mss"}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(top-level module, imported at module level) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    top_level = {id(node) for node in tree.body}
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found.extend((n.split(".")[0], id(node) in top_level) for n in names)
    return found


def _sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _sources(package)
        for name, _ in _imports(path)
        if name in FORBIDDEN[package]
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", ["model", "control", "app"])
def test_display_libraries_are_imported_lazily(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {name} at module level"
        for path in _sources(package)
        for name, at_top in _imports(path)
        if name in LAZY and at_top
    ]
    assert not bad, "\n".join(bad)


def test_the_rule_catches_a_violation(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import PySide6.QtCore\ndef f():\n    import mss\n", encoding="utf-8")
    assert _imports(sample) == [("PySide6", True), ("mss", False)]
