"""Shared test setup: kept minimal; fixtures live in tests/support/fixtures.py."""

pytest_plugins = ["tests.support.fixtures"]
