"""Shared test setup: kept minimal; fixtures live in tests/support/ (see pytest_plugins)."""

import os

# Qt widgets are tested offscreen; tests that need a real X display start their own Xvfb.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest_plugins = ["tests.support.fixtures", "tests.support.app_rig",
                  "tests.support.agent_harness"]
