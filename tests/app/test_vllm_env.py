"""`holodesk serve --install`: vLLM's own environment, from a local wheel folder (no network).

The folder holds a stand-in ``vllm`` 0.14.1 with a pinned dependency and a newer 0.15.0 that
the pinned install must leave alone (tests/support/wheels.py).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from app.serving import plan_server
from app.settings import Settings
from app.vllm_env import (
    VLLM_REQUIREMENT,
    InstallError,
    ManagedEnv,
    install,
    managed_env,
    managed_vllm,
)
from model.serving.guard import FROZEN_SUBCOMMAND, external_environ
from model.serving.launcher import guard_prefix
from tests.support.e2e import holodesk_argv, holodesk_env
from tests.support.fake_vllm_cli import install_shims, shim_path
from tests.support.gui import poll
from tests.support.home import REPO_ROOT, Home, isolate_home
from tests.support.wheels import stand_in_vllm_folder


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stand_in_vllm_folder(tmp_path_factory.mktemp("wheels"))


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def pip_env(wheels: Path, tmp_path: Path) -> dict[str, str]:
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels),
            "PIP_CACHE_DIR": str(tmp_path / "pip-cache")}


def test_vllm_is_pinned_to_the_version_the_model_was_published_with() -> None:
    assert VLLM_REQUIREMENT == "vllm==0.14.1"


def test_install_pins_writes_down_and_reports_progress(
    home: Home, wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in pip_env(wheels, tmp_path).items():
        monkeypatch.setenv(key, value)
    env = managed_env()
    assert env.root == home.data / "holodesk" / "vllm-env"
    assert managed_vllm() is None
    lines: list[str] = []
    packages = install(on_progress=lines.append)

    assert ("vllm", "0.14.1") in packages  # the pin, not the newer 0.15.0 in the folder
    assert ("holodesk-fake-torch", "2.9.0") in packages
    assert env.ready()
    assert managed_vllm() == env.vllm
    assert env.packages() == packages
    lock = env.lock_path.read_text()
    assert "vllm==0.14.1\n" in lock and "holodesk-fake-torch==2.9.0\n" in lock
    manifest = env.manifest()
    assert manifest["state"] == "ready" and manifest["requirement"] == "vllm==0.14.1"
    assert any("making a virtual environment" in line for line in lines)
    assert any("Successfully installed" in line and "vllm-0.14.1" in line for line in lines)
    ran = subprocess.run([str(env.vllm), "--version"], capture_output=True, text=True)
    assert ran.stdout.startswith("vllm stand-in 0.14.1")

    # `holodesk serve` uses it from now on.
    plan = plan_server(Settings())
    assert plan.executable == str(env.vllm)


def _serve_install(home: Home, wheels: Path, tmp_path: Path) -> subprocess.Popen[str]:
    env = {**home.env(), **pip_env(wheels, tmp_path), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "ui.main", "serve", "--install"], env=env, cwd=REPO_ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def test_a_killed_install_goes_on_where_it_stopped(home: Home, wheels: Path,
                                                   tmp_path: Path) -> None:
    first = _serve_install(home, wheels, tmp_path)
    assert first.stdout is not None
    seen = []
    for line in first.stdout:  # waits on the install's own report, no sleep
        seen.append(line)
        if "installing vllm==0.14.1 with pip" in line:
            os.killpg(first.pid, signal.SIGKILL)  # holodesk and pip with it
            break
    first.wait(timeout=60)
    first.stdout.close()
    assert first.returncode == -signal.SIGKILL, "".join(seen)
    env = ManagedEnv(home.data / "holodesk" / "vllm-env")
    assert env.manifest()["state"] == "installing"
    assert not env.ready()  # a half install is never used

    again = _serve_install(home, wheels, tmp_path)
    out, _ = again.communicate(timeout=300)
    assert again.returncode == 0, out
    assert "going on with the install left unfinished" in out
    assert "  vllm 0.14.1\n" in out and "  holodesk-fake-torch 2.9.0\n" in out
    assert "written down in" in out and "requirements.lock" in out
    assert env.ready()


def test_an_environment_left_half_made_is_made_anew(home: Home, wheels: Path,
                                                    tmp_path: Path) -> None:
    env = ManagedEnv(tmp_path / "env")
    (env.root / "bin").mkdir(parents=True)
    (env.root / "pyvenv.cfg").write_text("home = /nowhere\n")  # killed while venv ran
    lines: list[str] = []
    install(env, on_progress=lines.append,
            environ={**os.environ, **pip_env(wheels, tmp_path)})
    assert any("incomplete: making it anew" in line for line in lines)
    assert env.ready()


def test_a_python_without_venv_says_to_install_python3_venv(tmp_path: Path) -> None:
    python = tmp_path / "python3"
    # Debian's python3 without python3-venv: answers its version, fails to make a venv.
    python.write_text('#!/bin/sh\nif [ "$1" = "-c" ]; then echo "3 11"; exit 0; fi\n'
                      'echo "The virtual environment was not created successfully because '
                      'ensurepip is not available."; exit 1\n')
    python.chmod(0o755)
    with pytest.raises(InstallError) as caught:
        install(ManagedEnv(tmp_path / "env"), python=str(python))
    assert "python3-venv" in str(caught.value.fix)
    assert not ManagedEnv(tmp_path / "env").ready()


def test_no_suitable_python_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match=r"no Python 3\.10"):
        install(ManagedEnv(tmp_path / "env"), environ={"PATH": str(tmp_path)})


def test_serve_runs_the_managed_vllm(home: Home, wheels: Path, tmp_path: Path) -> None:
    install(managed_env(), environ={**os.environ, **pip_env(wheels, tmp_path)})
    shims = install_shims(tmp_path / "shims", vllm=False)  # an nvidia-smi, no vllm on PATH
    env = {**holodesk_env(home), "PATH": shim_path(shims)}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tmp_path / "serve.out"
    with out.open("w") as sink:
        proc = subprocess.Popen(holodesk_argv("serve", "--port", str(port)), env=env,
                                cwd=REPO_ROOT, stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        poll(lambda: "ready at" in out.read_text(), 90, f"the server to be ready: {out}",
             alive=lambda: None if proc.poll() is None else f"serve exited: {out.read_text()}")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as r:
            assert json.loads(r.read())["data"][0]["id"] == "holotron"
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    assert code == 0, out.read_text()
    assert f"{managed_env().vllm} serve" in out.read_text()


# --------------------------------------------------------------------------- the frozen app


def test_the_frozen_app_runs_the_guard_with_its_own_binary() -> None:
    assert guard_prefix(frozen=True) == [sys.executable, FROZEN_SUBCOMMAND]
    source = guard_prefix(frozen=False)
    assert source[:2] == [sys.executable, "-P"] and source[2].endswith("guard.py")


def test_the_hidden_subcommand_runs_the_guard(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ui.main", FROZEN_SUBCOMMAND, "--parent", str(os.getpid()),
             "--status-fd", str(write_fd), "--", "sh", "-c", "exit 3"],
            cwd=REPO_ROOT, pass_fds=(write_fd,), capture_output=True, text=True, timeout=60,
        )
    finally:
        os.close(write_fd)
    with os.fdopen(read_fd) as status:
        assert status.read().startswith("started ")
    assert proc.returncode == 3, proc.stderr  # vLLM's exit code, repeated


def test_programs_outside_the_bundle_get_the_persons_library_path() -> None:
    frozen_env = {"LD_LIBRARY_PATH": "/opt/holodesk/_internal", "LD_LIBRARY_PATH_ORIG": "/mine",
                  "_PYI_ARCHIVE_FILE": "/opt/holodesk/holodesk", "HOME": "/home/a"}
    assert external_environ(frozen_env, frozen=True) == \
        {"LD_LIBRARY_PATH": "/mine", "HOME": "/home/a"}
    assert external_environ({"LD_LIBRARY_PATH": "/opt/holodesk/_internal"}, frozen=True) == {}
    assert external_environ(frozen_env, frozen=False) == frozen_env


def test_the_manifest_is_plain_json(tmp_path: Path) -> None:
    env = ManagedEnv(tmp_path)
    env.manifest_path.write_text(json.dumps({"state": "ready", "packages": [
        {"name": "vllm", "version": "0.14.1"}]}))
    assert env.packages() == [("vllm", "0.14.1")]
    assert not env.ready()  # no vllm command there


def test_each_range_of_vllm_versions_gets_its_own_environment(home: Home) -> None:
    """Holotron-12B keeps the pinned vLLM in `vllm-env`; a model that needs a newer vLLM
    (Holo3.1: 0.17 or newer, docs/models.md) gets its own environment beside it, and a run's
    tripwire watches every one of them (issue 22)."""
    from app.protected import server_paths
    from app.vllm_env import managed_envs, requirement_for
    from model.profiles import HOLO31_9B, HOLOTRON_12B

    assert managed_env(HOLOTRON_12B) == managed_env()
    assert requirement_for(HOLOTRON_12B) == VLLM_REQUIREMENT
    newer = managed_env(HOLO31_9B)
    assert newer.root.name == "vllm-env-0.17"
    assert requirement_for(HOLO31_9B) == "vllm>=0.17.0"
    newer.root.mkdir(parents=True)
    assert newer.root in [env.root for env in managed_envs()]
    assert newer.root in server_paths(Settings())
