"""The managed environment for vLLM: `holodesk serve --install`.

The frozen app (the .deb) cannot hold vLLM: it is several GB of PyTorch and CUDA libraries for
its own Python. So holodesk makes a dedicated virtual environment for it in the person's data
folder (``~/.local/share/holodesk/vllm-env``) from the system ``python3``, installs the vLLM
version holodesk is made for (:data:`VLLM_REQUIREMENT`) with pip, and writes down exactly what
was installed (``holodesk-env.json``, and ``requirements.lock`` to reproduce it with
``pip install -r``). ``holodesk serve`` uses it from then on (:func:`managed_vllm`).

Resumable: the manifest says ``installing`` until pip has finished, and only ``ready`` makes
the environment count. Running the install again after a kill (or a lost connection) reuses
the environment when its Python and pip still run, else makes it anew, and pip installs what
is missing (its cache keeps what was downloaded). pip's own settings apply (``PIP_INDEX_URL``,
``PIP_FIND_LINKS``, ``PIP_NO_INDEX``, ``pip.conf``), for a mirror or an offline wheel folder.

Progress goes to a callback, one line at a time, as pip reports it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app import paths
from model.problem import Fix, HolodeskError
from model.profiles import DEFAULT_PROFILE, ModelProfile
from model.serving.guard import external_environ

__all__ = [
    "ENV_DIR",
    "VLLM_REQUIREMENT",
    "InstallError",
    "ManagedEnv",
    "install",
    "managed_env",
    "managed_envs",
    "managed_vllm",
    "requirement_for",
]

_log = logging.getLogger(__name__)

#: The vLLM holodesk is made for: Holotron-12B was published with vLLM 0.14.1.
VLLM_REQUIREMENT = "vllm==0.14.1"
ENV_DIR = "vllm-env"
MANIFEST = "holodesk-env.json"
LOCK = "requirements.lock"
#: vLLM's wheels are built for these Pythons.
PYTHONS = ((3, 10), (3, 11), (3, 12), (3, 13))

Progress = Callable[[str], None]


class InstallError(HolodeskError):
    """The environment could not be made or vLLM not installed; the message says which step."""


@dataclass(frozen=True)
class ManagedEnv:
    """The environment at ``root`` (it may not exist yet)."""

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def vllm(self) -> Path:
        return self.root / "bin" / "vllm"

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK

    def manifest(self) -> dict[str, object]:
        """What the last install wrote down (empty when none did, or it cannot be read)."""
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def ready(self) -> bool:
        """An install finished here and its ``vllm`` is still in place."""
        return self.manifest().get("state") == "ready" and os.access(self.vllm, os.X_OK)

    def packages(self) -> list[tuple[str, str]]:
        """``(name, version)`` of every package the finished install left, sorted by name."""
        raw = self.manifest().get("packages")
        if not isinstance(raw, list):
            return []
        return [(str(p["name"]), str(p["version"])) for p in raw
                if isinstance(p, dict) and "name" in p and "version" in p]


def managed_env(profile: ModelProfile | None = None) -> ManagedEnv:
    """This user's environment for vLLM under holodesk's data folder: one per range of vLLM
    versions the models need (docs/models.md). Holotron-12B's (the default) is ``vllm-env``;
    another range's is named by its lowest version (``vllm-env-0.17`` for Holo3.1)."""
    if profile is None or profile.vllm == DEFAULT_PROFILE.vllm:
        return ManagedEnv(paths.data_dir() / ENV_DIR)
    low = ".".join(map(str, profile.vllm.minimum[:2]))
    return ManagedEnv(paths.data_dir() / f"{ENV_DIR}-{low}")


def managed_envs() -> list[ManagedEnv]:
    """Every managed environment there is (made or half made), for the protected set."""
    root = paths.data_dir()
    try:
        found = sorted(p for p in root.iterdir() if p.name == ENV_DIR
                       or p.name.startswith(f"{ENV_DIR}-"))
    except OSError:
        found = []
    return [ManagedEnv(p) for p in dict.fromkeys([root / ENV_DIR, *found])]


def requirement_for(profile: ModelProfile | None = None) -> str:
    """What ``holodesk serve --install`` installs for ``profile``: the exact vLLM Holotron-12B
    was published with, else the profile's range."""
    if profile is None or profile.vllm == DEFAULT_PROFILE.vllm:
        return VLLM_REQUIREMENT
    return profile.vllm.pip_spec()


def managed_vllm(profile: ModelProfile | None = None) -> Path | None:
    """The ``vllm`` of ``profile``'s managed environment when its install finished, else
    None."""
    env = managed_env(profile)
    return env.vllm if env.ready() else None


# --------------------------------------------------------------------------- the install


def _python_version(python: str, environ: Mapping[str, str]) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=60, env=dict(environ),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.stdout.split()
    if out.returncode != 0 or len(parts) != 2:
        return None
    return int(parts[0]), int(parts[1])


def find_python(environ: Mapping[str, str]) -> str:
    """The system Python to make the environment from: the newest ``python3.X`` vLLM supports.

    Never the frozen app's own binary (it is not a Python); a source install's Python works
    like any other.
    """
    path = environ.get("PATH", os.defpath)
    names = [f"python{major}.{minor}" for major, minor in reversed(PYTHONS)] + ["python3"]
    for name in names:
        found = shutil.which(name, path=path)
        if found and _python_version(found, environ) in PYTHONS:
            return found
    supported = ", ".join(f"{a}.{b}" for a, b in PYTHONS)
    raise InstallError(
        f"no Python {supported} found on PATH to make vLLM's environment from",
        Fix("install one: sudo apt-get install python3 python3-venv (Debian 12 and Ubuntu 24.04 "
            "ship a suitable python3); or name one with --python PATH"),
    )


def _run(argv: Sequence[str], environ: Mapping[str, str], on_line: Progress,
         what: str) -> list[str]:
    """Run ``argv``, passing each line of its output to ``on_line``; its lines."""
    lines: list[str] = []
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=dict(environ),
                                errors="replace")
    except OSError as exc:
        raise InstallError(f"{what}: cannot run {argv[0]}: {exc.strerror or exc}",
                           Fix("check that it exists and runs")) from exc
    assert proc.stdout is not None
    with proc.stdout:
        for raw in proc.stdout:
            line = raw.rstrip()
            if line:
                lines.append(line)
                on_line(line)
    if proc.wait() != 0:
        tail = "\n".join(lines[-8:])
        raise InstallError(f"{what} failed (exit {proc.returncode}):\n{tail}",
                           Fix("fix what the lines above say, then run "
                               "`holodesk serve --install` again: it goes on from there"))
    return lines


def _usable(env: ManagedEnv, environ: Mapping[str, str]) -> bool:
    """Whether the environment's Python and pip run (a kill during its making leaves neither
    or half of them)."""
    if not env.python.exists():
        return False
    out = subprocess.run([str(env.python), "-m", "pip", "--version"], capture_output=True,
                         env=dict(environ), timeout=120)
    return out.returncode == 0


def _write_manifest(env: ManagedEnv, data: dict[str, object]) -> None:
    paths.write_atomic(env.manifest_path, json.dumps(data, indent=2) + "\n")


def install(
    env: ManagedEnv | None = None,
    *,
    requirement: str = VLLM_REQUIREMENT,
    python: str | None = None,
    on_progress: Progress = lambda _line: None,
    environ: Mapping[str, str] | None = None,
) -> list[tuple[str, str]]:
    """Make (or finish) the environment and install ``requirement``; the packages it holds.

    Raises :class:`InstallError` (message and fix) when a step fails; the environment then
    stays ``installing`` and a later call goes on from where this one stopped.
    """
    env = env or managed_env()
    base = external_environ(dict(os.environ if environ is None else environ))
    python = python or find_python(base)
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    paths.ensure_private_dir(env.root.parent)
    was = env.manifest().get("state")
    if was == "installing":
        on_progress(f"going on with the install left unfinished in {env.root}")

    if not _usable(env, base):
        if env.root.exists():
            on_progress(f"the environment in {env.root} is incomplete: making it anew")
            shutil.rmtree(env.root)
        on_progress(f"making a virtual environment in {env.root} with {python}")
        try:
            _run([python, "-m", "venv", str(env.root)], base, on_progress,
                 "making the virtual environment")
        except InstallError as exc:
            if "ensurepip" in exc.message or "venv" in exc.message.split(":", 1)[0]:
                raise InstallError(
                    exc.message,
                    Fix("install Python's venv module: sudo apt-get install python3-venv, "
                        "then run `holodesk serve --install` again"),
                ) from exc
            raise
    _write_manifest(env, {"state": "installing", "requirement": requirement,
                          "python": python, "started": started})

    on_progress(f"installing {requirement} with pip (vLLM brings PyTorch and CUDA libraries: "
                "several GB the first time)")
    pip = [str(env.python), "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "install", "--progress-bar", "off", requirement], base, on_progress,
         f"installing {requirement}")
    listed = _run([*pip, "list", "--format", "json"], base, lambda _line: None,
                  "listing the installed packages")
    try:
        found = json.loads(listed[-1]) if listed else []
    except ValueError as exc:
        raise InstallError("pip's list of packages cannot be read",
                           Fix("run `holodesk serve --install` again")) from exc
    packages = sorted((str(p["name"]), str(p["version"])) for p in found)
    if not os.access(env.vllm, os.X_OK):
        raise InstallError(f"{requirement} installed no `vllm` command in {env.root}",
                           Fix("check the package index pip used (PIP_INDEX_URL, pip.conf)"))
    paths.write_atomic(env.lock_path, "".join(f"{n}=={v}\n" for n, v in packages))
    version = _python_version(str(env.python), base)
    _write_manifest(env, {
        "state": "ready",
        "requirement": requirement,
        "python": python,
        "python_version": ".".join(map(str, version)) if version else None,
        "started": started,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "packages": [{"name": n, "version": v} for n, v in packages],
    })
    _log.info("vLLM environment ready in %s: %s", env.root,
              ", ".join(f"{n} {v}" for n, v in packages))
    return packages

