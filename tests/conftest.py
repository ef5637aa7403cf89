"""Shared test setup: kept minimal; fixtures live in tests/support/ (see pytest_plugins)."""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

from app.secrets import vouch_for
from tests.support.ci import describe, in_ci, missing_x11_tools
from tests.support.keyring_backend import FileBackend

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


def pytest_configure(config: pytest.Config) -> None:
    if not in_ci():
        return
    missing = missing_x11_tools()
    if missing:
        raise pytest.UsageError(
            f"CI is set, so the X11 tests must run, but their tools are {describe(missing)}"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        # A skip in CI means something CI claims to test was not tested.
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"


def pytest_collectreport(report: pytest.CollectReport) -> None:
    # A module that skips itself while being collected (a missing import) hides every test in
    # it; in CI that is a failure too.
    if report.skipped and in_ci():
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"
