"""Shared test setup: kept minimal; fixtures live in tests/support/ (see pytest_plugins)."""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

from app.secrets import vouch_for
from tests.support import xvfb as xvfb_server
from tests.support.ci import describe, in_ci, missing_x11_tools
from tests.support.keyring_backend import FileBackend
from tests.support.workers import (
    ProcessHome,
    enter_process_home,
    group_modules_with_shared_fixtures,
    mark_slow_files,
    mark_x11_files,
    no_x_server_message,
    ungrouped_nodeid,
)

# Qt widgets are tested offscreen; tests that need a real X display start their own Xvfb.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Nor the person's desktop notifications: tests that need a session bus start their own
# (tests/support/fake_notifications.py).
os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)

pytest_plugins = ["tests.support.fixtures", "tests.support.app_rig",
                  "tests.support.agent_harness"]

# The tests' file keyring is a secure keyring in this process (app/secrets.py): holodesk takes
# no backend's word for it, and a holodesk subprocess gets it only from its -X option.
vouch_for(FileBackend)


_process_home: ProcessHome | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--no-x-server", action="store_true",
        help="fail any test that starts an Xvfb (`make test-quick`: pair it with -m 'not x11')",
    )


def pytest_configure(config: pytest.Config) -> None:
    global _process_home
    # Each process (the serial run, each xdist worker) its own HOME and XDG folders, so that
    # workers share no settings, log, keyring or run lock (tests/support/workers.py).
    _process_home = enter_process_home()
    if config.getoption("--no-x-server"):
        xvfb_server.FORBIDDEN = no_x_server_message()
    if not in_ci():
        return
    missing = missing_x11_tools()
    if missing:
        raise pytest.UsageError(
            f"CI is set, so the X11 tests must run, but their tools are {describe(missing)}"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    global _process_home
    if _process_home is not None:
        _process_home.close()
        _process_home = None


# tryfirst: before xdist's own hook turns the groups into test ids (--dist loadgroup).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_x11_files(items)
    mark_slow_files(items, config.rootpath)
    group_modules_with_shared_fixtures(items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    # The id as written in the file, without the xdist group: what a person pastes back.
    report.nodeid = ungrouped_nodeid(report.nodeid)
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        # A skip in CI means something CI claims to test was not tested.
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"


# tryfirst: the terminal reporter files the report by its outcome when it sees it (as a skip,
# whose summary then chokes on the changed report); an xdist worker sends it on as changed.
@pytest.hookimpl(tryfirst=True)
def pytest_collectreport(report: pytest.CollectReport) -> None:
    # A module that skips itself while being collected (a missing import) hides every test in
    # it; in CI that is a failure too.
    if report.skipped and in_ci():
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"
