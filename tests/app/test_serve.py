"""`holodesk serve` and model.serving.launcher: real processes against the stand-in `vllm`."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.render import fix_line
from app.serving import serve_config, serve_port
from app.settings import Settings, SettingsError, set_value
from model.serving.guard import parent_alive, process_start_time
from model.serving.launcher import (
    ServeConfig,
    ServeError,
    ServerExited,
    VLLMServer,
    build_command,
    check_port,
    explain_failure,
    format_command,
    parse_progress,
    preflight,
)
from tests.support.e2e import holodesk_argv, holodesk_env
from tests.support.fake_vllm import FakeVLLM, ScriptedPolicy
from tests.support.fake_vllm_cli import install_shims, shim_path
from tests.support.home import REPO_ROOT, Home, isolate_home
from tests.support.keyring_backend import without_keyring

KEY = "sk-test-serve-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def port_free(port: int) -> bool:
    return check_port("127.0.0.1", port) is None


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(predicate: object, timeout: float = 60.0, what: str = "condition") -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def http_status(url: str, key: str | None = None) -> int:
    request = urllib.request.Request(url)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def shims(tmp_path: Path) -> Path:
    return install_shims(tmp_path / "bin")


def serve_env(home: Home, bin_dir: Path, **extra: str) -> dict[str, str]:
    env = holodesk_env(home)
    env["PATH"] = shim_path(bin_dir)
    env["FAKE_VLLM_LOAD_SECONDS"] = "1"
    env.update(extra)
    return env


def run_serve(
    home: Home, bin_dir: Path, *args: str, timeout: float = 90, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        holodesk_argv("serve", *args),
        env=serve_env(home, bin_dir, **extra),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class Started:
    """A `holodesk serve` running in the background, its output in files."""

    def __init__(self, home: Home, bin_dir: Path, workdir: Path, *args: str, **extra: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.stdout_path = workdir / "stdout"
        self.stderr_path = workdir / "stderr"
        self.record = workdir / "record.json"
        self.proc = subprocess.Popen(
            holodesk_argv("serve", *args),
            env=serve_env(home, bin_dir, FAKE_VLLM_RECORD=str(self.record), **extra),
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self.stdout_path.open("w"),
            stderr=self.stderr_path.open("w"),
        )

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def recorded(self) -> dict[str, object]:
        wait_for(lambda: self.record.exists() and self.record.stat().st_size > 0, 30, "record")
        data: dict[str, object] = json.loads(self.record.read_text())
        return data

    def wait_output(self, text: str, timeout: float = 60) -> None:
        def seen() -> bool:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                raise AssertionError(f"exited {code}:\n{self.stdout}\n{self.stderr}")
            return text in self.stdout

        wait_for(seen, timeout, repr(text))

    def wait_exit(self, timeout: float = 60) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"did not exit:\n{self.stdout}\n{self.stderr}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.record.exists():
            data = json.loads(self.record.read_text())
            for pid in (data.get("pid"), data.get("child")):
                if isinstance(pid, int) and alive(pid):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[list[Started]]:
    servers: list[Started] = []
    yield servers
    for server in servers:
        server.close()


# --------------------------------------------------------------------------- the command


EXPECTED_ARGV = [
    "vllm", "serve", "Hcompany/Holotron-12B",
    "--trust-remote-code",
    "--dtype", "bfloat16",
    "--max-model-len", "32768",
    "--mamba-ssm-cache-dtype", "float32",
    "--limit-mm-per-prompt", '{"image": 3, "video": 0}',
    "--enable-prefix-caching",
    "--gpu-memory-utilization", "0.9",
    # The sessions that fit an H100 80GB (what the nvidia-smi shim lists, and the card assumed
    # without one): tests/model/test_capacity.py works the 111 out by hand.
    "--max-num-seqs", "111",
    "--served-model-name", "holotron",
    "--host", "127.0.0.1",
    "--port", "8000",
]  # fmt: skip


def test_build_command_is_the_documented_one() -> None:
    assert build_command(ServeConfig(max_num_seqs=111)) == EXPECTED_ARGV
    # Without a number vLLM keeps its own default: the flag is left out.
    assert "--max-num-seqs" not in build_command(ServeConfig())


def test_format_command_quotes_and_continues() -> None:
    text = format_command(EXPECTED_ARGV)
    assert text.splitlines()[0] == "vllm serve Hcompany/Holotron-12B \\"
    assert "  --limit-mm-per-prompt '{\"image\": 3, \"video\": 0}' \\" in text.splitlines()
    assert text.splitlines()[-1] == "  --port 8000"
    assert format_command(["vllm", "serve", "m"]) == "vllm serve m"


def test_print_command_prints_exactly_the_command(home: Home, shims: Path) -> None:
    result = run_serve(home, shims, "--print-command")
    assert result.returncode == 0, result.stderr
    expected = format_command(EXPECTED_ARGV) + "\n"
    assert result.stdout == expected


def test_print_command_takes_options_and_needs_no_vllm(home: Home, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_serve(
        home, empty, "--print-command", "--port", "9123", "--gpu-memory", "0.8",
        "--max-model-len", "65536", "--image-limit", "4", "--model", "/models/holo",
        "--", "--enforce-eager",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    # No nvidia-smi here: planned for an H100 80GB. 0.8 x 81,559 MiB = 65,247.2 MiB, less
    # 24,795.5 MiB of weights (26e9 bytes) and the 4,096 MiB reserve = 36,355.7 MiB;
    # / 397.72 MiB per session (tests/model/test_capacity.py) = 91.4: 91 sessions.
    argv = build_command(
        ServeConfig(
            model="/models/holo", port=9123, gpu_memory=0.8, max_model_len=65536,
            image_limit=4, max_num_seqs=91, extra_args=("--enforce-eager",),
        )
    )  # fmt: skip
    assert result.stdout == format_command(argv) + "\n"
    assert "--max-num-seqs 91: the sessions that fit the GPU's memory" in result.stderr


def test_print_command_never_shows_the_key(home: Home, shims: Path) -> None:
    result = run_serve(home, shims, "--print-command", HOLODESK_API_KEY=KEY)
    assert result.returncode == 0
    assert KEY not in result.stdout + result.stderr
    assert "--api-key" not in result.stdout
    assert "$VLLM_API_KEY" in result.stdout


@pytest.mark.parametrize(
    ("args", "said", "fix"),
    [
        (("--gpu-memory", "1.5"), "--gpu-memory 1.5 is out of range",
         "use --gpu-memory from 0.1 to 0.98"),
        (("--max-model-len", "8192"), "--max-model-len 8192 is out of range",
         "use --max-model-len from 16384 to 131072"),
        (("--image-limit", "2"), "--image-limit 2 is out of range",
         "use --image-limit from 3 to 16"),
        (("--port", "70000"), "--port 70000 is out of range", "use --port from 1 to 65535"),
    ],
)  # fmt: skip
def test_an_option_out_of_range_is_named_as_typed(
    home: Home, shims: Path, args: tuple[str, ...], said: str, fix: str
) -> None:
    result = run_serve(home, shims, "--print-command", *args)
    assert result.returncode == 2
    assert result.stderr.startswith(f"holodesk: {said}\nFix: {fix}"), result.stderr
    assert "serve_" not in result.stderr  # the setting's name is not what the person typed
    assert result.stdout == ""


def test_config_set_still_names_the_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_home(monkeypatch, tmp_path)
    with pytest.raises(SettingsError) as caught:
        set_value("serve_gpu_memory", "2")
    assert "serve_gpu_memory = '2'" in str(caught.value)
    assert "is out of range: at least 0.1 and at most 0.98" in str(caught.value)


def test_print_command_never_reads_the_keyring(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A locked keyring could prompt or stall: --print-command must not ask it anything."""
    import keyring

    import app.secrets
    from app.cli.main import main

    isolate_home(monkeypatch, tmp_path)

    def trap(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the keyring was asked")

    for name in ("get_keyring", "get_password", "get_credential"):
        monkeypatch.setattr(keyring, name, trap)
    for name in ("lookup_api_key", "api_key", "KeyringStore"):
        monkeypatch.setattr(app.secrets, name, trap)
    assert main(["serve", "--print-command"]) == 0
    assert capsys.readouterr().out == format_command(EXPECTED_ARGV) + "\n"
    # With HOLODESK_API_KEY set, the note says how the key reaches vLLM (never the key).
    monkeypatch.setenv("HOLODESK_API_KEY", KEY)
    assert main(["serve", "--print-command"]) == 0
    out = capsys.readouterr().out
    assert "$VLLM_API_KEY" in out and KEY not in out


def test_not_linux_says_serving_is_linux_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.main import main

    isolate_home(monkeypatch, tmp_path)
    without_keyring(monkeypatch)
    monkeypatch.setattr(sys, "platform", "win32")
    problems = preflight(ServeConfig(port=free_port()), "vllm")
    assert [p.fatal for p in problems] == [True]
    assert "Linux only" in problems[0].message and "Windows" in problems[0].message
    assert "WSL2" in problems[0].fix.text and problems[0].fix.setting == "endpoint"
    with pytest.raises(ServeError, match="Linux only"):
        VLLMServer(ServeConfig()).start(tmp_path / "never.log")
    assert main(["serve", "--port", str(free_port())]) == 1
    err = capsys.readouterr().err
    assert "holodesk serve runs vLLM, which serves this model on Linux only" in err
    assert "Traceback" not in err
    # Printing the command is fine anywhere: it can be run on the Linux machine.
    assert main(["serve", "--print-command"]) == 0
    assert capsys.readouterr().out.startswith("vllm serve Hcompany/Holotron-12B")


@pytest.mark.parametrize("flag", ["--port", "--port=9001", "--api-key", "--served-model-name"])
def test_flags_holodesk_manages_are_refused_after_the_dashes(
    home: Home, shims: Path, flag: str
) -> None:
    result = run_serve(home, shims, "--print-command", "--", "--enforce-eager", flag, "x")
    assert result.returncode == 2
    assert "cannot be passed after `--`" in result.stderr and "Fix: " in result.stderr
    assert result.stdout == ""


def test_a_vllm_that_cannot_be_executed_is_a_message_not_a_traceback(
    home: Home, shims: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "vllm-broken"
    broken.write_text("#!/nonexistent/python\n")  # a venv that was moved or deleted
    broken.chmod(0o755)
    result = run_serve(home, shims, "--port", str(free_port()), "--vllm", str(broken))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"cannot run {broken}" in result.stderr and "interpreter" in result.stderr


# --------------------------------------------------------------------------- checks


def test_missing_vllm_says_how_to_install(home: Home, tmp_path: Path) -> None:
    if (Path(sys.executable).parent / "vllm").exists():
        pytest.skip("a real vllm is installed next to this Python")
    bin_dir = install_shims(tmp_path / "bin", vllm=False)
    result = run_serve(home, bin_dir, "--port", str(free_port()))
    assert result.returncode == 1
    assert "vLLM is not installed" in result.stderr
    assert "pip install 'holodesk[server]'" in result.stderr


@pytest.mark.parametrize(
    ("gpus", "said"),
    [(None, "`nvidia-smi` is not installed"), ("", "`nvidia-smi` lists no GPU")],
)
def test_no_gpu_says_what_is_needed(
    home: Home, tmp_path: Path, gpus: str | None, said: str
) -> None:
    bin_dir = install_shims(tmp_path / "bin", gpus=gpus)
    result = run_serve(home, bin_dir, "--port", str(free_port()))
    assert result.returncode == 1
    assert said in result.stderr
    assert "40 GB" in result.stderr and "H100" in result.stderr


def test_busy_port_names_the_holder(home: Home, shims: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        problem = check_port("127.0.0.1", port)
        assert problem is not None
        assert f"port {port} is already in use by pid {os.getpid()}" in problem.message
        result = run_serve(home, shims, "--port", str(port))
    assert result.returncode == 1
    assert f"port {port} is already in use" in result.stderr


def test_refuses_a_second_server(home: Home, shims: Path) -> None:
    answer = {"thought": "t", "action": {"action": "answer", "text": "ok"}}
    with FakeVLLM(ScriptedPolicy([answer])) as fake:
        result = run_serve(home, shims, "--port", str(fake.port))
    assert result.returncode == 3
    assert f"already running at http://127.0.0.1:{fake.port}/v1" in result.stderr


def test_the_checks_warn_of_a_server_beyond_this_machine_without_a_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shims: Path
) -> None:
    # app.serving.check: the one place `holodesk serve` and the tray's server control get it.
    from app.serving import Verdict, check, exposure_warning, plan_server

    isolate_home(monkeypatch, tmp_path)
    monkeypatch.setenv("PATH", shim_path(shims))
    without_keyring(monkeypatch)
    settings = Settings(endpoint=f"http://127.0.0.1:{free_port()}/v1")
    exposed = check(plan_server(settings, host="0.0.0.0", executable=str(shims / "vllm")))
    assert exposed.verdict is Verdict.GO
    assert [w.message for w in exposed.warnings] == [
        "vLLM will listen on 0.0.0.0 without an API key: anyone who can reach this machine "
        "can use the model."]
    assert not check(plan_server(settings, executable=str(shims / "vllm"))).warnings
    cfg = serve_config(settings, host="0.0.0.0")
    assert exposure_warning(cfg, KEY) is None  # a key: only who has it can use the model
    for host in ("127.0.0.1", "127.0.1.1", "localhost", "::1"):
        assert exposure_warning(serve_config(settings, host=host), None) is None


def test_serve_warns_of_a_server_beyond_this_machine_without_a_key(
    home: Home, shims: Path, tmp_path: Path, started: list[Started]
) -> None:
    server = Started(home, shims, tmp_path / "run", "--host", "0.0.0.0", "--port",
                     str(free_port()))  # the tests' keyring, no key in it
    started.append(server)
    server.wait_output("ready at")
    assert ("holodesk: warning: vLLM will listen on 0.0.0.0 without an API key: anyone who can "
            "reach this machine can use the model.\nFix: Store an API key first") in server.stderr
    assert "(`holodesk config set api_key -`)" in server.stderr


# --------------------------------------------------------------------------- running


def test_serves_until_ctrl_c(
    home: Home, shims: Path, tmp_path: Path, started: list[Started]
) -> None:
    port = free_port()
    server = Started(
        home, shims, tmp_path / "run", "--port", str(port),
        HOLODESK_API_KEY=KEY, FAKE_VLLM_CHILD="1",
    )  # fmt: skip
    started.append(server)
    server.wait_output("ready at")
    out = server.stdout
    assert f"ready at http://127.0.0.1:{port}/v1 (model holotron)" in out
    assert "loading weights:" in out and "capturing CUDA graphs" in out
    log = home.state / "holodesk" / f"vllm-{port}.log"
    assert f"log: {log}" in out
    assert "Loading safetensors checkpoint shards" in log.read_text()

    record = server.recorded()
    assert record["has_key"] is True
    argv = record["argv"]
    assert isinstance(argv, list) and KEY not in " ".join(argv)
    # The sessions that fit the H100 the nvidia-smi shim lists (tests/model/test_capacity.py).
    assert argv[argv.index("--max-num-seqs") + 1] == "111"
    vllm_pid, child_pid = record["pid"], record["child"]
    assert isinstance(vllm_pid, int) and isinstance(child_pid, int)
    assert f"starting vLLM (pid {vllm_pid})" in out
    guard_pid = parent_of(vllm_pid)
    for pid in (vllm_pid, guard_pid):
        assert KEY.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    # The log starts with the vLLM command, not the guard's.
    first = log.read_text().splitlines()[0]
    assert first.startswith("# holodesk serve: /") and first.endswith(" " + shlex.join(argv))
    assert "serving/guard" not in first
    # The key went through the environment: the server demands it.
    assert http_status(f"http://127.0.0.1:{port}/v1/models") == 401
    assert http_status(f"http://127.0.0.1:{port}/v1/models", KEY) == 200

    server.proc.send_signal(signal.SIGINT)
    assert server.wait_exit() == 0, server.stderr
    assert "stopped." in server.stdout
    assert not alive(vllm_pid) and not alive(guard_pid)
    wait_for(lambda: not alive(child_pid), 15, "the engine worker to go")


def test_sigterm_while_loading_stops_cleanly(
    home: Home, shims: Path, tmp_path: Path, started: list[Started]
) -> None:
    server = Started(
        home, shims, tmp_path / "run", "--port", str(free_port()), FAKE_VLLM_LOAD_SECONDS="60"
    )
    started.append(server)
    pid = server.recorded()["pid"]
    assert isinstance(pid, int)
    server.wait_output("starting vLLM")
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait_exit() == 0, server.stderr
    assert "ready at" not in server.stdout
    assert not alive(pid)


@pytest.mark.parametrize(
    ("kind", "message", "fix", "log_line"),
    [
        ("oom", "ran out of GPU memory", "--gpu-memory", "CUDA out of memory"),
        ("arch", "does not know the model's architecture", "upgrade vLLM", "are not supported"),
    ],
)
def test_crash_at_load_is_explained(
    home: Home, shims: Path, kind: str, message: str, fix: str, log_line: str
) -> None:
    result = run_serve(home, shims, "--port", str(free_port()), FAKE_VLLM_FAIL=kind)
    assert result.returncode == 1
    assert "vLLM did not start" in result.stderr and message in result.stderr
    assert fix in result.stderr
    assert log_line in result.stderr  # the log's last lines are shown


# --------------------------------------------------------------------------- launcher


def test_stop_escalates_and_leaves_no_worker(
    tmp_path: Path, shims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_STUBBORN", "1")  # ignores SIGINT
    monkeypatch.setenv("FAKE_VLLM_CHILD", "1")
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "0.5")
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(record))
    server = VLLMServer(ServeConfig(port=free_port()), executable=str(shims / "vllm"))
    server.start(tmp_path / "vllm.log")
    try:
        progress: list[str] = []
        assert server.wait_ready(timeout=60, on_progress=lambda p: progress.append(p.phase))
        assert progress[-1] == "ready" and "load" in progress
        data = json.loads(record.read_text())
        code = server.stop(int_timeout=1, term_timeout=5)
        assert code is not None
        assert not alive(data["pid"]) and not alive(data["child"])
        assert server.stop() == code  # twice is fine
    finally:
        server.stop(int_timeout=1, term_timeout=1)


def test_wait_ready_raises_with_the_log_tail(
    tmp_path: Path, shims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_FAIL", "kv")
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "0.2")
    server = VLLMServer(ServeConfig(port=free_port()), executable=str(shims / "vllm"))
    server.start(tmp_path / "vllm.log")
    with pytest.raises(ServerExited) as caught:
        server.wait_ready(timeout=60)
    server.stop()
    assert caught.value.returncode == 1
    assert "context of 32768 tokens" in caught.value.message
    fix = caught.value.fix
    assert fix is not None and "context length" in fix.text and fix.setting == "serve_gpu_memory"
    assert "--gpu-memory" in fix_line(fix)  # the terminal names `holodesk serve`'s option
    assert any("KV cache" in line for line in caught.value.log_tail)


REAL_LINES = [
    ("Loading safetensors checkpoint shards:  56% Completed | 5/9 [00:13<00:11,  2.87s/it]",
     "load", "loading weights: 56% (5/9 shards)"),
    ("(Worker_TP0 pid=34322) INFO 05-06 20:59:57 [default_loader.py:384] Loading weights took "
     "24.84 seconds", "load", "weights loaded in 25 s"),
    ("Capturing CUDA graphs (decode, FULL):  97%|████▎ | 65/67 [00:15<00:00,  4.58it/s]",
     "graphs", "capturing CUDA graphs: 97%"),
    ("(Worker_TP3_EP3 pid=2709393) INFO 09-29 09:52:22 [gpu_model_runner.py:3468] Graph capturing "
     "finished in 38 secs, took 1.64 GiB", "graphs", "CUDA graphs captured in 38 s"),
    ("(APIServer pid=1) INFO:     Application startup complete.", "ready", "API server started"),
    ("model-00002-of-00005.safetensors:  45%|████▌     | 2.24G/4.97G [00:31<00:38, 71.2MB/s]",
     "download", "downloading model-00002-of-00005.safetensors: 45%"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "phase", "text"), REAL_LINES)
def test_progress_from_real_vllm_lines(line: str, phase: str, text: str) -> None:
    found = parse_progress(line)
    assert found is not None and (found.phase, found.text) == (phase, text)


def test_unknown_failure_falls_back_to_the_exit_code() -> None:
    message, fix = explain_failure(["something odd"], ServeConfig(), 7)
    assert "exited with code 7" in message and "log" in fix.text


# --------------------------------------------------------------------------- settings


def test_port_follows_a_local_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path)
    assert serve_port(Settings()) == 8000
    assert serve_port(Settings(endpoint="http://localhost:9001/v1")) == 9001
    assert serve_port(Settings(endpoint="http://gpu-box:9001/v1")) == 8000
    assert serve_port(Settings(endpoint="http://127.0.0.1:9001/v1", serve_port=9100)) == 9100
    cfg = serve_config(
        Settings(serve_gpu_memory=0.8, serve_max_model_len=65536, serve_image_limit=4)
    )
    assert (cfg.gpu_memory, cfg.max_model_len, cfg.image_limit) == (0.8, 65536, 4)


# --------------------------------------------------------------------------- the guard


def test_vllm_dies_with_a_killed_holodesk_serve(
    home: Home, shims: Path, tmp_path: Path, started: list[Started]
) -> None:
    port = free_port()
    server = Started(home, shims, tmp_path / "run", "--port", str(port), FAKE_VLLM_CHILD="1")
    started.append(server)
    server.wait_output("ready at")
    record = server.recorded()
    vllm_pid, child_pid = record["pid"], record["child"]
    assert isinstance(vllm_pid, int) and isinstance(child_pid, int)
    guard_pid = parent_of(vllm_pid)
    assert guard_pid != server.proc.pid and parent_of(guard_pid) == server.proc.pid
    assert not port_free(port)

    server.proc.kill()  # no handler runs: only the guard is left to stop vLLM
    server.proc.wait(10)
    wait_for(lambda: not alive(vllm_pid), 30, "vLLM to stop after holodesk was killed")
    wait_for(lambda: not alive(child_pid) and not alive(guard_pid), 30, "worker and guard")
    wait_for(lambda: port_free(port), 30, "the port to be free")
    log = (home.state / "holodesk" / f"vllm-{port}.log").read_text()
    assert f"holodesk (pid {server.proc.pid}) is gone; stopping vLLM (pid {vllm_pid})" in log
    assert "Shutting down" in log  # SIGINT first: vLLM's clean shutdown


OWNER = """
import sys, time
from pathlib import Path
from model.serving.launcher import ServeConfig, VLLMServer
from model.serving.guard import StopTimeouts

server = VLLMServer(ServeConfig(port=int(sys.argv[1])), executable=sys.argv[2],
                    stop_timeouts=StopTimeouts(1.0, 5.0, 5.0), guard_poll=0.2)
server.start(Path(sys.argv[3]))
assert server.wait_ready(timeout=60)
print("ready", server.pid, server.vllm_pid, flush=True)
time.sleep(600)
"""


def test_vllm_that_ignores_sigint_dies_with_a_killed_owner(tmp_path: Path, shims: Path) -> None:
    """Any owner of a VLLMServer (the GUI too): SIGKILLed, the guard escalates to SIGTERM."""
    port = free_port()
    record = tmp_path / "record.json"
    env = {
        **os.environ, "PATH": shim_path(shims), "FAKE_VLLM_STUBBORN": "1",
        "FAKE_VLLM_CHILD": "1", "FAKE_VLLM_LOAD_SECONDS": "0.5",
        "FAKE_VLLM_RECORD": str(record),
    }  # fmt: skip
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(port), str(shims / "vllm"), str(tmp_path / "v.log")],
        env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    data: dict[str, int] = {}
    try:
        assert owner.stdout is not None
        line = owner.stdout.readline().split()
        assert line[:1] == ["ready"], line
        guard_pid, vllm_pid = int(line[1]), int(line[2])
        data = json.loads(record.read_text())
        assert data["pid"] == vllm_pid and parent_of(vllm_pid) == guard_pid
        owner.kill()
        owner.wait(10)
        wait_for(lambda: not alive(vllm_pid), 30, "vLLM to stop after its owner was killed")
        wait_for(lambda: not alive(data["child"]) and not alive(guard_pid), 30, "the rest")
        wait_for(lambda: port_free(port), 30, "the port to be free")
        assert "ignored SIGINT" not in (tmp_path / "v.log").read_text()  # SIGTERM sufficed
    finally:
        if owner.poll() is None:
            owner.kill()
        for pid in (data.get("pid"), data.get("child")):
            if isinstance(pid, int) and alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigint_to_the_guard_stops_vllm_cleanly(
    tmp_path: Path, shims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "0.2")
    monkeypatch.setenv("FAKE_VLLM_CHILD", "1")
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_VLLM_RECORD", str(record))
    server = VLLMServer(ServeConfig(port=free_port()), executable=str(shims / "vllm"))
    server.start(tmp_path / "vllm.log")
    try:
        assert server.wait_ready(timeout=60)
        data = json.loads(record.read_text())
        assert server.vllm_pid == data["pid"] and server.pid != data["pid"]
        assert server.pid is not None
        os.kill(server.pid, signal.SIGINT)  # as `kill -INT PID` by hand: forwarded to vLLM
        assert server.wait(30) == 0
        assert not alive(data["pid"]) and not alive(data["child"])
    finally:
        assert server.stop() == 0


def test_the_guard_exits_with_the_signal_that_killed_vllm(
    tmp_path: Path, shims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "60")
    server = VLLMServer(ServeConfig(port=free_port()), executable=str(shims / "vllm"))
    server.start(tmp_path / "vllm.log")
    try:
        assert server.vllm_pid is not None
        os.kill(server.vllm_pid, signal.SIGKILL)
        with pytest.raises(ServerExited) as caught:
            server.wait_ready(timeout=60)
        assert caught.value.returncode == -signal.SIGKILL
    finally:
        server.stop()


def test_parent_alive_sees_an_exited_or_reused_pid() -> None:
    me = os.getpid()
    start = process_start_time(me)
    assert start is not None
    assert parent_alive(me, start, direct=False)
    assert not parent_alive(me, start + 1, direct=False)  # same pid, another process
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert not parent_alive(done.pid, None, direct=False)
    assert not parent_alive(me, start, direct=True)  # we are not our own parent


def test_the_guard_runs_nothing_for_a_parent_already_gone(tmp_path: Path) -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    marker = tmp_path / "ran"
    guard = subprocess.run(
        [sys.executable, "-P", str(REPO_ROOT / "model" / "serving" / "guard.py"),
         "--parent", str(done.pid), "--", "touch", str(marker)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert guard.returncode == 1
    assert not marker.exists()


def test_vllm_dies_with_a_killed_guard(
    tmp_path: Path, shims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard itself SIGKILLed: PR_SET_PDEATHSIG hands vLLM a SIGTERM."""
    monkeypatch.setenv("FAKE_VLLM_LOAD_SECONDS", "0.2")
    port = free_port()
    server = VLLMServer(ServeConfig(port=port), executable=str(shims / "vllm"))
    server.start(tmp_path / "vllm.log")
    try:
        assert server.wait_ready(timeout=60)
        vllm_pid = server.vllm_pid
        assert server.pid is not None and vllm_pid is not None
        os.kill(server.pid, signal.SIGKILL)
        wait_for(lambda: not alive(vllm_pid), 30, "vLLM to stop after its guard was killed")
        wait_for(lambda: port_free(port), 30, "the port to be free")
    finally:
        server.stop()


def test_serve_takes_the_profile_from_the_model_or_the_option(tmp_path: Path) -> None:
    """docs/models.md: each model is served with its own flags; a name no profile knows is
    served as Holotron-12B, as before profiles; the profile may be named."""
    from model.profiles import DEFAULT_PROFILE, HOLO31_9B

    holo = serve_config(Settings(serve_model="Hcompany/Holo-3.1-9B"))
    assert holo.profile is HOLO31_9B
    assert "--reasoning-parser" in build_command(holo)
    local = serve_config(Settings(serve_model="/models/my-fine-tune"))
    assert local.profile is DEFAULT_PROFILE
    named = serve_config(Settings(serve_model="/models/my-fine-tune", model_profile="Holo3.1-9B"))
    assert named.profile is HOLO31_9B
    with pytest.raises(ValueError, match="is not a model profile"):
        Settings(model_profile="holo99")


def test_the_plan_of_a_model_with_unknown_figures_says_why_and_serving_goes_on() -> None:
    """Holo4's layer figures are not published (docs/models.md): without its config.json the
    plan says so, and serving leaves --max-num-seqs to vLLM."""
    from app.serving import PlanUnknown, capacity_plan, planned_max_num_seqs
    from model.serving.capacity import DEFAULT_GPU

    settings = Settings(serve_model="Hcompany/Holo4-27B")
    with pytest.raises(PlanUnknown, match=r"config\.json"):
        capacity_plan(settings, gpu=DEFAULT_GPU, environ={"HF_HUB_CACHE": "/nonexistent"})
    assert planned_max_num_seqs(settings, gpu=DEFAULT_GPU) is None
