"""What lets the suite run in parallel (pytest-xdist) and without an X server (`make test-quick`).

* **A private home per process.** Each pytest process (the serial run, or each xdist worker)
  points HOME and the XDG directories at a fresh temporary folder of its own before any test
  runs: two workers never share a settings file, an action log, a keyring folder or, above all,
  holodesk's single-instance lock (``$XDG_RUNTIME_DIR/holodesk``), and no test writes into the
  person's own home. Tests that want a home of their own still make one (tests/support/home.py).
  The cache stays the person's: fontconfig's and pip's caches are made to be shared.
* **Modules that share a module fixture run on one worker.** A module whose tests use a fixture
  scoped wider than a test (the per-module Xvfb, its window manager, the target app, the input
  worker) is one ``xdist_group``: one Xvfb per module as in a serial run, and its tests in file
  order. Everything else is spread test by test (``--dist loadgroup``, set in pyproject.toml).
  The group's name that xdist appends to the test id (``::test_x@tests/a/test_b.py``) is taken
  off again in the reports, so a failing id can be pasted back into pytest.
* **``--no-x-server``** (what `make test-quick` passes): starting an Xvfb fails the test with the
  fix; files named ``*_x11.py`` carry the ``x11`` marker even if they forget ``pytestmark``.
* **``slow``**: the files in :data:`QUICK_SKIPS` are marked ``slow``, which `make test-quick`
  leaves out (`make test` runs them as ever).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

#: The variables a process's private home sets (the old values are put back at the end).
HOME_VARS = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
             "XDG_CACHE_HOME")
#: Fixture scopes that outlive one test, so that their tests must stay on one worker.
_SHARED_SCOPES = ("module", "class", "package")


@dataclass
class ProcessHome:
    """The temporary home of this pytest process and the environment it replaced."""

    root: Path
    saved: dict[str, str | None]

    def close(self) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.root, ignore_errors=True)


def worker_id() -> str:
    """This process's xdist worker (``gw0``, ``gw1``, …), or ``main`` when not a worker."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def enter_process_home() -> ProcessHome:
    """Point this process (and its children) at a fresh home of its own."""
    saved = {name: os.environ.get(name) for name in HOME_VARS}
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    root = Path(tempfile.mkdtemp(prefix=f"holodesk-tests-{worker_id()}-"))
    folders = {"HOME": root / "home", "XDG_CONFIG_HOME": root / "home" / ".config",
               "XDG_DATA_HOME": root / "home" / ".local" / "share",
               "XDG_STATE_HOME": root / "home" / ".local" / "state",
               "XDG_RUNTIME_DIR": root / "run"}
    for name, folder in folders.items():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.environ[name] = str(folder)
    os.environ["XDG_CACHE_HOME"] = cache
    return ProcessHome(root, saved)


#: Files `make test-quick` leaves out: each took 15 s or more of test time without an X server
#: (`pytest -m "not x11" --durations=0` on 2 loaded cores, issue 23), nearly all of it in tests
#: that start holodesk, pip or a server as a subprocess, or run whole demo tasks. Together they
#: were four fifths of the time of the tests that need no display.
QUICK_SKIPS = (
    "tests/app/test_approval_cli.py",  # holodesk subprocesses
    "tests/app/test_cli.py",
    "tests/app/test_loadbench_cli.py",
    "tests/app/test_automations.py",
    "tests/app/test_serve.py",  # holodesk serve with stand-in vllm and nvidia-smi
    "tests/app/test_demo_task_plans.py",  # every demo task planned step by step
    "tests/app/test_protected_blind_spots.py",
    "tests/ui/test_server_control.py",  # the stand-in vllm started and stopped
    "tests/app/test_automation_parameters.py",
    "tests/app/test_replay.py",
    "tests/app/test_protected.py",
    "tests/app/test_vllm_env.py",  # pip installs from a folder of wheels
    "tests/app/test_report.py",
    "tests/app/test_plain_http.py",
    "tests/app/test_demo_tasks.py",
    "tests/app/test_serve_plan.py",
    "tests/app/test_config_api_key.py",
    "tests/app/test_demo_model.py",
)


def mark_slow_files(items: list[pytest.Item], rootpath: Path) -> None:
    """Mark the tests of :data:`QUICK_SKIPS` ``slow``."""
    slow = {rootpath / name for name in QUICK_SKIPS}
    for item in items:
        if item.path in slow:
            item.add_marker(pytest.mark.slow)


def _shares_a_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope in _SHARED_SCOPES
               for defs in info.name2fixturedefs.values() for d in defs)


def group_modules_with_shared_fixtures(items: list[pytest.Item]) -> None:
    """Mark every test of a module that holds a wider-than-test fixture with that module's
    ``xdist_group`` (a no-op outside ``--dist loadgroup``)."""
    shared = {item.path for item in items if _shares_a_fixture(item)}
    for item in items:
        if item.path in shared:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def mark_x11_files(items: list[pytest.Item]) -> None:
    """A file named ``*_x11.py`` is an X11 test file, whatever its ``pytestmark`` says."""
    for item in items:
        if item.path.name.endswith("_x11.py") and item.get_closest_marker("x11") is None:
            item.add_marker(pytest.mark.x11)


def ungrouped_nodeid(nodeid: str) -> str:
    """``nodeid`` without the ``@group`` xdist appends under loadgroup (xdist's own rule: an
    ``@`` after the last ``]``, so a parametrized id holding ``@`` is left alone)."""
    at = nodeid.rfind("@")
    return nodeid[:at] if at > nodeid.rfind("]") else nodeid


def no_x_server_message() -> str:
    return ("this run starts no X server (`make test-quick`, --no-x-server), yet this test "
            "starts an Xvfb: mark it `pytest.mark.x11` (or name its file *_x11.py) so that "
            "the quick run leaves it out, and run it with `make test`")
