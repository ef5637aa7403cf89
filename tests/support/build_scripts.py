"""The build scripts (scripts/, packaging/) as modules, for the tests of tests/install/.

They are programs, not packages: ``packaging`` would shadow the library of that name, and
``scripts`` has no ``__init__``. Each is loaded from its file under a name of its own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.support.home import REPO_ROOT

HEARTBEAT = REPO_ROOT / "scripts" / "heartbeat.py"
BUILD_DEB = REPO_ROOT / "packaging" / "build_deb.py"


def load(path: Path) -> ModuleType:
    """The module in ``path``, loaded once per test process (``holodesk_build_<stem>``)."""
    name = f"holodesk_build_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def heartbeat_argv(*args: str) -> list[str]:
    """``python scripts/heartbeat.py ARGS...``, as the shell scripts run it."""
    return [sys.executable, str(HEARTBEAT), *args]
