"""Lines the control tests add to the end of the test report (the safety corpus's rates)."""

from __future__ import annotations

import pytest

RATES = pytest.StashKey[list[str]]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    for line in config.stash.get(RATES, []):
        terminalreporter.write_line(line)
