"""holodesk's version from its one place, and the refusal to run another project's `app`.

The version is pyproject.toml's, read back from the installed metadata: `holodesk --version`,
the log's line at start and `doctor --json` all say it. A folder on PYTHONPATH that holds
another `app` or `model` package shadows holodesk's: the program must stop at once with what
it found and the fix, before any of that code runs.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from app.version import version
from tests.support.e2e import holodesk_argv, holodesk_env, run_holodesk
from tests.support.home import REPO_ROOT, Home

#: A port nothing listens on (discard): the doctor's server checks fail at once.
CLOSED_ENDPOINT = "http://127.0.0.1:9/v1"


def declared_version() -> str:
    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared: str = data["project"]["version"]
    return declared


def test_the_version_is_pyprojects() -> None:
    assert version() == declared_version()


def test_version_flag_log_line_and_doctor_json_say_the_version(home: Home) -> None:
    shown = run_holodesk(home, "--version")
    assert shown.returncode == 0, str(shown)
    assert shown.stdout.strip() == f"holodesk {declared_version()}"

    doctor = run_holodesk(home, "doctor", "--json", "--endpoint", CLOSED_ENDPOINT)
    report = json.loads(doctor.stdout)
    assert report["version"] == declared_version(), doctor.stdout

    log = (home.state / "holodesk" / "holodesk.log").read_text(encoding="utf-8")
    assert f"holodesk {declared_version()} starting" in log


def shadowing_package(folder: Path, name: str, *, marked: bool) -> Path:
    """Another project's top-level ``name`` package in ``folder``; it says when it is run."""
    package = folder / name
    package.mkdir(parents=True)
    mark = "HOLODESK_PACKAGE = True\n" if marked else ""
    (package / "__init__.py").write_text(
        f"{mark}import sys\nprint('FOREIGN {name} RAN', file=sys.stderr)\n", encoding="utf-8")
    return package


@pytest.mark.parametrize(("name", "marked"), [
    ("app", False),
    ("model", False),
    # Even one that claims to be holodesk's is not when it lives elsewhere.
    ("app", True),
], ids=["app", "model", "app-claiming-the-mark"])
def test_a_shadowing_package_stops_holodesk_with_the_fix(
    home: Home, tmp_path: Path, name: str, marked: bool
) -> None:
    package = shadowing_package(tmp_path / "other-project", name, marked=marked)
    env = holodesk_env(home)
    env["PYTHONPATH"] = f"{package.parent}:{env['PYTHONPATH']}"
    done = subprocess.run(holodesk_argv("config", "show"), env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4, done.stderr
    assert f"the Python package `{name}` it imported is not holodesk's own" in done.stderr
    assert str(package / "__init__.py") in done.stderr
    assert "environment of its own" in done.stderr and "pipx install" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (home.config / "holodesk").exists()  # nothing of app/ ran
