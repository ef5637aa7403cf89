"""Settings: defaults, TOML round trip, env overrides, readable errors, no key in the file."""

from __future__ import annotations

import logging
import re
import stat
import tomllib
from pathlib import Path

import pytest

from app import paths
from app.secrets import ENV_API_KEY
from app.settings import (
    DEFAULT_ENDPOINT,
    Settings,
    SettingsError,
    describe_settings,
    load_settings,
    normalize_endpoint,
    save_settings,
    set_value,
    setting_names,
    unset_value,
    validate_values,
)
from control.capture import CaptureTarget
from control.hotkeys import DEFAULT_STOP_HOTKEY
from control.policy import ConfirmMode
from model.coords import Convention
from tests.support.home import Home, isolate_home
from tests.support.memory_secrets import MemoryStore

KEY = "sk-holodesk-test-0123456789abcdef"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Home:
    return isolate_home(monkeypatch, tmp_path)


def write_toml(text: str) -> Path:
    path = paths.settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- paths ---------------------------------------------------------------------------------


def test_paths_follow_xdg_at_call_time(home: Home) -> None:
    assert paths.settings_path() == home.config / "holodesk" / "settings.toml"
    assert paths.db_path() == home.data / "holodesk" / "holodesk.db"
    assert paths.runs_dir() == home.data / "holodesk" / "runs"
    assert paths.log_path() == home.state / "holodesk" / "holodesk.log"
    assert paths.lock_path() == home.runtime / "holodesk" / "holodesk.lock"
    # Nothing is created by merely asking.
    assert not (home.config / "holodesk").exists()


def test_paths_change_with_the_environment(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    before = paths.config_dir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home.root / "elsewhere"))
    assert paths.config_dir() == home.root / "elsewhere" / "holodesk"
    assert paths.config_dir() != before


def test_ensure_private_dir_is_owner_only(home: Home) -> None:
    folder = paths.ensure_private_dir(home.root / "a" / "b")
    assert folder.is_dir()
    assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0


# --- defaults and round trip ----------------------------------------------------------------


def test_missing_file_gives_defaults(home: Home) -> None:
    settings = load_settings()
    assert settings == Settings()
    assert settings.endpoint == DEFAULT_ENDPOINT
    assert settings.model is None
    assert settings.convention is Convention.NORM1000
    assert settings.confirm is ConfirmMode.RISKY
    assert settings.monitor == "1"
    assert (settings.max_steps, settings.max_seconds, settings.loop_limit) == (30, 900.0, 3)
    assert (settings.image_format, settings.jpeg_quality, settings.max_side) == ("jpeg", 90, 2048)
    assert settings.thinking is False
    assert settings.temperature == 0.0
    assert settings.sources == {}


def test_round_trip_writes_only_changed_values(home: Home) -> None:
    wanted = Settings(
        endpoint="http://gpu-box:8000",
        model="holotron",
        convention=Convention.PIXELS,
        confirm="always",
        monitor="1280x800+0+0",
        max_steps=50,
        thinking=True,
        settle_min=0.2,
    )
    path = save_settings(wanted)
    assert path == paths.settings_path()
    loaded = load_settings()
    assert loaded == wanted
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "endpoint": "http://gpu-box:8000/v1",
        "model": "holotron",
        "convention": "pixels",
        "confirm": "always",
        "monitor": "1280x800+0+0",
        "max_steps": 50,
        "thinking": True,
        "settle_min": 0.2,
    }
    assert loaded.sources["max_steps"] == "settings.toml"
    assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
    # The atomic write leaves no temporary file behind.
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.toml"]


def test_settings_are_immutable(home: Home) -> None:
    settings = load_settings()
    with pytest.raises(ValueError):
        settings.max_steps = 5  # type: ignore[misc]


# --- errors name the place, the key and the value -------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('max_steps = "abc"', "max_steps = 'abc' is not a valid integer"),
        ("max_steps = 0", "max_steps = 0 is out of range: at least 1 and at most 500"),
        ("max_side = 1280", "max_side = 1280 is out of range: at least 1366"),
        ("jpeg_quality = 101", "jpeg_quality = 101 is out of range"),
        ('image_format = "gif"', "image_format = 'gif' must be one of: 'jpeg' or 'png'"),
        ('confirm = "sometimes"', "confirm = 'sometimes' must be one of"),
        ('convention = "norm100"', "convention = 'norm100' must be one of"),
        ('thinking = "perhaps"', "thinking = 'perhaps' is not a valid boolean"),
        ('temperature = "hot"', "temperature = 'hot' is not a valid number"),
        ('endpoint = "ftp://host/v1"', "endpoint = 'ftp://host/v1' must start with http://"),
        ('monitor = "left"', "monitor = 'left' must be a monitor index"),
    ],
)
def test_bad_file_value_names_file_key_and_value(home: Home, line: str, expected: str) -> None:
    path = write_toml(line + "\n")
    with pytest.raises(SettingsError) as err:
        load_settings()
    message = str(err.value)
    assert str(path) in message
    assert expected in message


def test_unknown_key_in_file_lists_valid_keys(home: Home) -> None:
    write_toml("max_stesp = 3\n")
    with pytest.raises(SettingsError, match="'max_stesp' is not a setting; valid keys: endpoint"):
        load_settings()


def test_malformed_toml_names_the_file(home: Home) -> None:
    path = write_toml("max_steps = = 3\n")
    with pytest.raises(SettingsError, match="is not valid TOML") as err:
        load_settings()
    assert str(path) in str(err.value)


def test_settle_order_is_checked(home: Home) -> None:
    write_toml("settle_min = 5.0\nsettle_max = 1.0\n")
    with pytest.raises(SettingsError, match=r"settle_min \(5\) must not exceed settle_max \(1\)"):
        load_settings()


def test_api_key_in_the_file_is_refused_without_echoing_it(home: Home) -> None:
    write_toml(f'api_key = "{KEY}"\n')
    with pytest.raises(SettingsError, match="must not be in the settings file") as err:
        load_settings()
    assert KEY not in str(err.value)
    assert "keyring" in str(err.value)


# --- environment overrides -------------------------------------------------------------------


def test_environment_overrides_the_file(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toml("max_steps = 40\nconfirm = 'always'\n")
    monkeypatch.setenv("HOLODESK_MAX_STEPS", "55")
    # On the network (no keyring here: one on the internet would wait for approval).
    monkeypatch.setenv("HOLODESK_ENDPOINT", "https://gpu-box.lan:8443/")
    monkeypatch.setenv("HOLODESK_THINKING", "yes")
    monkeypatch.setenv("HOLODESK_MODEL", "")  # empty counts as unset
    settings = load_settings()
    assert settings.max_steps == 55
    assert settings.endpoint == "https://gpu-box.lan:8443/v1"
    assert settings.thinking is True
    assert settings.confirm == "always"
    assert settings.sources["max_steps"] == "$HOLODESK_MAX_STEPS"
    assert settings.sources["confirm"] == "settings.toml"
    assert "model" not in settings.sources


def test_bad_environment_value_names_the_variable(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLODESK_MAX_STEPS", "abc")
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert str(err.value) == "$HOLODESK_MAX_STEPS: max_steps = 'abc' is not a valid integer"


def test_environment_values_are_not_saved(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toml("endpoint = 'http://saved:8000/v1'\n")
    monkeypatch.setenv("HOLODESK_ENDPOINT", "http://from-env:9000")
    monkeypatch.setenv("HOLODESK_JPEG_QUALITY", "70")
    settings = set_value("max_steps", "12")
    assert settings.endpoint == "http://from-env:9000/v1"
    data = tomllib.loads(paths.settings_path().read_text(encoding="utf-8"))
    assert data == {"endpoint": "http://saved:8000/v1", "max_steps": 12}


def test_with_overrides_validates_and_names_the_source(home: Home) -> None:
    settings = load_settings().with_overrides({"max_steps": 7, "confirm": "never"})
    assert (settings.max_steps, settings.confirm) == (7, "never")
    assert settings.sources["max_steps"] == "command line"
    with pytest.raises(SettingsError, match="command line: max_steps = 0 is out of range"):
        settings.with_overrides({"max_steps": 0})


# --- config set ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "attr", "expected"),
    [
        ("max_steps", "50", "max_steps", 50),
        ("max-steps", " 60 ", "max_steps", 60),
        ("max_seconds", "120.5", "max_seconds", 120.5),
        ("thinking", "true", "thinking", True),
        ("thinking", "off", "thinking", False),
        ("convention", "norm1", "convention", Convention.NORM1),
        ("confirm", "never", "confirm", "never"),
        ("monitor", "Mouse", "monitor", "mouse"),
        ("monitor", "1920X1080-1920+0", "monitor", "1920x1080-1920+0"),
        ("model", "holotron", "model", "holotron"),
        (
            "endpoint",
            "http://10.0.0.5:8000/v1/chat/completions",
            "endpoint",
            "http://10.0.0.5:8000/v1",
        ),
    ],
)
def test_set_value_parses_per_type(
    home: Home, file_keyring: object, key: str, value: str, attr: str, expected: object
) -> None:
    # A keyring: `confirm never` asks less than the default, an approval it must remember.
    settings = set_value(key, value)
    assert getattr(settings, attr) == expected
    assert getattr(load_settings(), attr) == expected


def test_set_value_back_to_default_and_unset(home: Home) -> None:
    set_value("model", "holotron")
    assert load_settings().model == "holotron"
    set_value("model", "")
    assert load_settings().model is None
    set_value("max_steps", "99")
    unset_value("max_steps")
    assert load_settings().max_steps == 30
    assert "max_steps" not in paths.settings_path().read_text(encoding="utf-8")


def test_set_value_unknown_key_lists_valid_keys(home: Home) -> None:
    with pytest.raises(SettingsError) as err:
        set_value("colour", "blue")
    message = str(err.value)
    assert "unknown setting 'colour'" in message
    for name in setting_names():
        assert name in message


def test_set_value_bad_value_changes_nothing(home: Home) -> None:
    set_value("max_steps", "40")
    before = paths.settings_path().read_bytes()
    with pytest.raises(
        SettingsError, match="config set: max_steps = 'lots' is not a valid integer"
    ):
        set_value("max_steps", "lots")
    with pytest.raises(SettingsError, match="jpeg_quality = '10' is out of range"):
        set_value("jpeg_quality", "10")
    assert paths.settings_path().read_bytes() == before


# --- the stop hotkey ------------------------------------------------------------------------


def test_a_stored_stop_hotkey_the_rule_refuses_falls_back_with_a_notice(
    home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    # Saved under an older, looser rule: the settings still load, with the default stop key.
    write_toml('stop_hotkey = "ctrl+c"\nmax_steps = 40\n')
    with caplog.at_level(logging.WARNING, logger="app.settings"):
        settings = load_settings()
    assert settings.stop_hotkey == DEFAULT_STOP_HOTKEY
    assert settings.max_steps == 40
    assert len(settings.notes) == 1
    note = settings.notes[0]
    assert "stop_hotkey 'ctrl+c'" in note and "all day" in note
    assert f"the default {DEFAULT_STOP_HOTKEY} is used" in note
    assert [r.getMessage() for r in caplog.records] == [note]


def test_settings_without_a_refused_stop_hotkey_have_no_notice(
        home: Home, file_keyring: object) -> None:
    set_value("stop_hotkey", "f9")  # a hand-written one would wait for approval
    settings = load_settings()
    assert settings.stop_hotkey == "f9"
    assert settings.notes == ()


def test_another_setting_can_be_set_next_to_a_refused_stop_hotkey(home: Home) -> None:
    path = write_toml('stop_hotkey = "super+l"\n')
    settings = set_value("max_steps", "40")
    assert settings.max_steps == 40
    assert settings.stop_hotkey == DEFAULT_STOP_HOTKEY
    assert "stop_hotkey" not in tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("combo", "reason"),
    [("ctrl+c", "all day"), ("ctrl+alt+delete", "security screen"), ("alt+f4", "closes")],
)
def test_config_set_refuses_a_stop_hotkey_with_the_reason(
    home: Home, combo: str, reason: str
) -> None:
    expected = f"config set: stop_hotkey = {re.escape(repr(combo))}.*{reason}"
    with pytest.raises(SettingsError, match=expected):
        set_value("stop_hotkey", combo)
    assert not paths.settings_path().exists()


def test_the_settings_dialog_refuses_a_stop_hotkey_with_the_reason(home: Home) -> None:
    with pytest.raises(SettingsError, match=r"settings dialog: stop_hotkey = 'super\+l'.*all day"):
        validate_values({"stop_hotkey": "super+l"})


# --- endpoint and monitor --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "normalized"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"),
        ("  HTTPS://GPU-Box.Example:8443  ", "https://gpu-box.example:8443/v1"),
        ("http://host/proxy/holotron", "http://host/proxy/holotron/v1"),
        ("http://host:8000/v1/models", "http://host:8000/v1"),
        ("http://[::1]:8000", "http://[::1]:8000/v1"),
    ],
)
def test_endpoint_normalization(given: str, normalized: str) -> None:
    assert normalize_endpoint(given) == normalized
    assert Settings(endpoint=given).endpoint == normalized


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("ftp://host/v1", "must start with http:// or https://"),
        ("localhost:8000", "must start with http:// or https://"),
        ("http:///v1", "has no host name"),
        ("http://host:99999/v1", "is not a valid URL"),
        ("http://host:8000/v1?x=1", "query string"),
    ],
)
def test_bad_endpoints(given: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        normalize_endpoint(given)


def test_credentials_in_the_endpoint_are_refused_and_not_echoed(home: Home) -> None:
    with pytest.raises(SettingsError) as err:
        set_value("endpoint", f"http://user:{KEY}@host:8000/v1")
    assert "must not contain credentials" in str(err.value)
    assert KEY not in str(err.value)
    assert not paths.settings_path().exists()


@pytest.mark.parametrize("bad", ["-1", "left", "100x+0+0", "0x10+0+0", "10x10", "1.5"])
def test_bad_monitor_values(home: Home, bad: str) -> None:
    with pytest.raises(SettingsError, match="monitor"):
        set_value("monitor", bad)


@pytest.mark.parametrize(
    ("given", "normalized"),
    [
        ("2", "2"),
        ("0", "0"),
        ("02", "2"),
        (" Mouse ", "mouse"),
        ("primary", "primary"),
        ("all", "0"),
        ("monitor:3", "3"),
        ("1280X800+0+0", "1280x800+0+0"),
        ("1920x1080-1920+0", "1920x1080-1920+0"),
    ],
)
def test_monitor_values_agree_with_the_capturer(given: str, normalized: str) -> None:
    settings = Settings(monitor=given)
    assert settings.monitor == normalized
    # Whatever settings accept, the capturer must accept, meaning the same target.
    assert str(CaptureTarget.parse(settings.monitor)) == str(CaptureTarget.parse(given))


# --- the API key -----------------------------------------------------------------------------


def test_api_key_goes_to_the_store_never_to_the_file(home: Home) -> None:
    store = MemoryStore()
    set_value("max_steps", "45")
    set_value("api_key", KEY, store=store)
    assert store.get(DEFAULT_ENDPOINT) == KEY
    text = paths.settings_path().read_text(encoding="utf-8")
    assert KEY not in text
    assert "api_key" not in text
    assert load_settings().max_steps == 45


def test_api_key_is_stored_for_the_endpoint_in_effect(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore()
    set_value("endpoint", "http://gpu-box:8000")
    monkeypatch.setenv("HOLODESK_ENDPOINT", "http://other:8000/v1")
    set_value("api_key", KEY, store=store)
    assert store.get("http://other:8000/v1") == KEY
    assert store.get("http://gpu-box:8000/v1") is None


def test_api_key_dash_reads_it_and_empty_forgets_it(home: Home) -> None:
    store = MemoryStore()
    set_value("api_key", "-", store=store, read_secret=lambda: f"  {KEY}\n")
    assert store.get(DEFAULT_ENDPOINT) == KEY
    set_value("api_key", "", store=store)
    assert store.get(DEFAULT_ENDPOINT) is None
    assert not paths.settings_path().exists()


def test_invalid_api_key_is_refused_without_echo(home: Home) -> None:
    store = MemoryStore()
    with pytest.raises(SettingsError, match="whitespace") as err:
        set_value("api_key", "sk-abc def-secret", store=store)
    assert "def-secret" not in str(err.value)
    assert store.get(DEFAULT_ENDPOINT) is None


def test_api_key_is_not_a_setting(home: Home) -> None:
    with pytest.raises(SettingsError, match="'api_key' is not a setting"):
        load_settings().with_overrides({"api_key": KEY})
    assert "api_key" not in Settings.model_fields


# --- config show -----------------------------------------------------------------------------


def test_describe_marks_sources_and_hides_the_key(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore({DEFAULT_ENDPOINT: KEY})
    set_value("max_steps", "44")
    monkeypatch.setenv("HOLODESK_CONFIRM", "always")
    text = describe_settings(load_settings(), store=store)
    assert str(paths.settings_path()) in text
    lines = {line.split("=")[0].strip(): line for line in text.splitlines() if " = " in line}
    assert set(lines) == set(setting_names())
    assert "44" in lines["max_steps"] and "(settings.toml)" in lines["max_steps"]
    assert "always" in lines["confirm"] and "($HOLODESK_CONFIRM)" in lines["confirm"]
    assert "(default)" in lines["jpeg_quality"]
    assert "(from the server)" in lines["model"]
    assert "stored in the keyring (memory" in text
    assert KEY not in text
    assert str(paths.db_path()) in text


def test_describe_reports_the_environment_key_without_showing_it(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_API_KEY, KEY)
    text = describe_settings(load_settings(), store=MemoryStore())
    assert f"${ENV_API_KEY}" in text
    assert KEY not in text


def test_describe_says_when_no_key_is_stored(home: Home) -> None:
    text = describe_settings(load_settings(), store=MemoryStore())
    assert "none stored" in text
    assert "holodesk config set api_key -" in text


def test_command_line_overrides_are_not_saved(home: Home) -> None:
    set_value("max_steps", "40")
    save_settings(load_settings().with_overrides({"max_steps": 7, "confirm": "never"}))
    settings = load_settings()
    assert settings.max_steps == 40
    assert settings.confirm is ConfirmMode.RISKY
