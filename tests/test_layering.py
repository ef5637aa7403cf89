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


# --------------------------------------------------------------------------- the one core

PACKAGES = ("app", "ui", "control", "model")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in _sources(pkg)}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of import nodes under ``if TYPE_CHECKING:``: they never run, so they make no cycle."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return ids


def _internal_imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The product modules ``path`` imports when it runs (at module level or in a function).

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else
    ``pkg`` itself; relative imports are resolved against the file's package.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _type_checking_only(tree)
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name:
                    found.add(name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in modules:
                    found.add(full)
                    continue
                name = base
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name:
                    found.add(name)
    found.discard(me)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _internal_imports(path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    """A cycle means two modules are one concept split in two, or a core reaching up a layer."""
    cycles = _cycles(_graph())
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_rule_catches_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_only_the_entry_point_routes_into_the_cli() -> None:
    """The GUI and the core never reach into the `holodesk` command: each feature lives in app/.

    ui/main.py is the one entry point that routes between the GUI and the CLI.
    """
    graph = _graph()
    bad = [
        f"{name} imports {target}"
        for name, targets in sorted(graph.items())
        for target in sorted(targets)
        if (target == "app.cli" or target.startswith("app.cli."))
        and not (name == "app.cli" or name.startswith("app.cli."))
        and name != "ui.main"
    ]
    assert not bad, "\n".join(bad)


def test_the_core_neither_prints_nor_parses_arguments() -> None:
    bad = []
    for path in _sources("app"):
        if path.relative_to(ROOT).parts[:2] == ("app", "cli"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "print":
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} calls print()")
        bad.extend(f"{path.relative_to(ROOT)} imports argparse"
                   for name, _ in _imports(path) if name == "argparse")
    assert not bad, "\n".join(bad)


def test_no_test_doubles_in_the_product() -> None:
    """Fakes live in tests/support/: a fake in the product can end up running for real."""
    bad = [
        f"{path.relative_to(ROOT)}:{node.lineno} defines {node.name}"
        for pkg in PACKAGES
        for path in _sources(pkg)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and node.name.startswith("Fake")
    ]
    assert not bad, "\n".join(bad)


def test_code_points_only_at_documents_in_the_repository() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{no}"
        for pkg in (*PACKAGES, "tests", "bench", "scripts")
        for path in sorted((ROOT / pkg).rglob("*.py"))
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "shared/docs" in line and path.name != "test_layering.py"
    ]
    assert not bad, "\n".join(bad)
