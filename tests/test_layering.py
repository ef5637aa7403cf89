"""The layering of docs/architecture.md, checked on the source: ``ui -> app -> control ->
model``, each package importing only the packages to its right (any of them), Qt only in ui,
the display libraries never in model or ui and only inside functions elsewhere."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The packages, left to right: each may import only those to its right.
ORDER = ("ui", "app", "control", "model")
QT = {"PySide6", "shiboken6"}
#: Libraries that need a display when imported: only ever imported inside functions, by the
#: packages that drive the desktop.
LAZY = {"pyautogui", "pynput", "mss", "Xlib"}


def forbidden(package: str) -> set[str]:
    """The top-level modules ``package`` may not import (docs/architecture.md's table)."""
    left = set(ORDER[: ORDER.index(package)])
    qt = set() if package == "ui" else QT
    display = LAZY if package in ("ui", "model") else set()
    return left | qt | display


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


def violations(root: Path, package: str) -> list[str]:
    """Every import in ``root/package`` that its rules forbid, one line each."""
    return [
        f"{path.relative_to(root)} imports {name}"
        for path in sorted((root / package).rglob("*.py"))
        for name, _ in _imports(path)
        if name in forbidden(package)
    ]


def eager_display_imports(root: Path, package: str) -> list[str]:
    return [
        f"{path.relative_to(root)} imports {name} at module level"
        for path in sorted((root / package).rglob("*.py"))
        for name, at_top in _imports(path)
        if name in LAZY and at_top
    ]


@pytest.mark.parametrize("package", ORDER)
def test_imports_point_one_way(package: str) -> None:
    bad = violations(ROOT, package)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", ["app", "control"])
def test_display_libraries_are_imported_lazily(package: str) -> None:
    bad = eager_display_imports(ROOT, package)
    assert not bad, "\n".join(bad)


def test_the_rule_catches_a_violation(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import PySide6.QtCore\ndef f():\n    import mss\n", encoding="utf-8")
    assert _imports(sample) == [("PySide6", True), ("mss", False)]


def test_the_rules_catch_every_kind_of_breach(tmp_path: Path) -> None:
    files = {
        "ui/fine.py": "import app.x\nimport control.y\nimport model.z\nimport PySide6\n",
        "ui/drives.py": "def f():\n    import pyautogui\n",
        "app/fine.py": "import control.y\nfrom model import z\ndef f():\n    import Xlib\n",
        "app/up.py": "from ui import window\n",
        "app/qt.py": "from PySide6 import QtCore\n",
        "app/eager.py": "import pynput\n",
        "control/up.py": "import app.agent\n",
        "model/up.py": "import control.capture\n",
        "model/display.py": "def f():\n    import mss\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert [line for package in ORDER for line in violations(tmp_path, package)] == [
        "ui/drives.py imports pyautogui",
        "app/qt.py imports PySide6",
        "app/up.py imports ui",
        "control/up.py imports app",
        "model/display.py imports mss",
        "model/up.py imports control",
    ]
    assert eager_display_imports(tmp_path, "app") == ["app/eager.py imports pynput at module level"]


def test_the_architecture_doc_writes_these_rules() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert " ───────▶ ".join(ORDER) in doc
    for package in ORDER:
        right = ORDER[ORDER.index(package) + 1:]
        allowed = ", ".join(f"`{p}`" for p in right) or "nothing of holodesk"
        assert f"| `{package}/` | {allowed}" in doc, package


# --------------------------------------------------------------------------- the one core

PACKAGES = ("app", "ui", "control", "model")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in _sources(pkg)}


def _internal_imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The product modules ``path`` imports: at module level, in a function, or for types only
    (``if TYPE_CHECKING:``: a cycle through one is still one concept split in two files).

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else
    ``pkg`` itself; relative imports are resolved against the file's package.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
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
    """A cycle, type-only imports included, means two modules are one concept split in two, or
    a core reaching up a layer."""
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
