"""An isolated home for tests: every holodesk path and keyring location under a temp folder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Home:
    """The folders a test's holodesk sees (each XDG base directory is separate)."""

    root: Path
    config: Path
    data: Path
    state: Path
    runtime: Path
    keyring: Path  # for tests.support.keyring_backend.FileBackend

    def env(self) -> dict[str, str]:
        """An environment for a subprocess: this home, the repo importable, no HOLODESK_*."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("HOLODESK_")}
        env.update(
            HOME=str(self.root),
            XDG_CONFIG_HOME=str(self.config),
            XDG_DATA_HOME=str(self.data),
            XDG_STATE_HOME=str(self.state),
            XDG_RUNTIME_DIR=str(self.runtime),
            PYTHONPATH=str(REPO_ROOT),
            HOLODESK_TEST_KEYRING_DIR=str(self.keyring),
        )
        env.pop("PYTHON_KEYRING_BACKEND", None)
        return env


def make_home(tmp_path: Path) -> Home:
    """A fresh home under ``tmp_path``, its folders created (for this process or a child)."""
    root = tmp_path / "home"
    home = Home(
        root=root,
        config=root / ".config",
        data=root / ".local" / "share",
        state=root / ".local" / "state",
        runtime=tmp_path / "run",
        keyring=tmp_path / "keyring",
    )
    for folder in (home.root, home.runtime, home.keyring):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return home


def isolate_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    """Point HOME and the XDG variables at ``tmp_path`` and drop every HOLODESK_* variable."""
    home = make_home(tmp_path)
    for name in list(os.environ):
        if name.startswith("HOLODESK_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setenv("HOME", str(home.root))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home.config))
    monkeypatch.setenv("XDG_DATA_HOME", str(home.data))
    monkeypatch.setenv("XDG_STATE_HOME", str(home.state))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home.runtime))
    return home
