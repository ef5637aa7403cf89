"""Shared test setup: kept minimal; fixtures live in tests/support/ (fixtures.py, app_rig.py)."""

import os

# Qt widgets are tested offscreen; tests that need a real X display start their own Xvfb.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest_plugins = ["tests.support.fixtures", "tests.support.app_rig"]
