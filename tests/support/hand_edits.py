"""holodesk's own files changed as another program would change them (a text editor run by a
hijacked model): rewritten from outside holodesk's code, never through its writers."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from app import paths
from app.automations import automations_path
from tests.support.home import Home

#: What a systemd desktop session runs to make its environment from ~/.config/environment.d.
ENVIRONMENT_D_GENERATOR = Path("/usr/lib/systemd/user-environment-generators/"
                               "30-systemd-environment-d-generator")


def edit_settings_by_hand(path: Path | None = None, **values: Any) -> Path:
    """settings.toml (or the settings file at ``path``) changed in an editor, outside
    holodesk's code; a value None deletes that line."""
    path = paths.settings_path() if path is None else path
    path.parent.mkdir(parents=True, exist_ok=True)
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for key, value in values.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


def edit_automation_by_hand(name: str, **values: Any) -> None:
    """The automation called ``name`` changed in automations.toml in an editor; a value None
    deletes that line."""
    path = automations_path()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    tables = [t for t in data["automation"] if t["name"] == name]
    assert tables, f"no automation {name!r} in {path}"
    for key, value in values.items():
        if value is None:
            tables[0].pop(key, None)
        else:
            tables[0][key] = value
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


def session_environment(home: Home, conf: str) -> dict[str, str]:
    """The environment a systemd session gives its programs (the desktop app's autostart, each
    terminal) once ``conf`` was saved by an editor as ~/.config/environment.d/60-notes.conf:
    the output of systemd's own generator."""
    folder = home.config / "environment.d"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "60-notes.conf").write_text(conf, encoding="utf-8")
    out = subprocess.run([str(ENVIRONMENT_D_GENERATOR)],
                         env={"HOME": str(home.root), "XDG_CONFIG_HOME": str(home.config),
                              "PATH": os.environ.get("PATH", "")},
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
