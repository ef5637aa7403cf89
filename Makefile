# The two commands a new machine needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint sysdeps bench screenshots stress clean

run: $(STAMP)
	$(VENV)/bin/holodesk $(ARGS)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# System packages the tests need (Xvfb, xdotool, xclip); installed only when running as root.
sysdeps:
	@bash scripts/sysdeps.sh

test: sysdeps $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The race hunt, not part of `make test` (about an hour): the race-prone X11 tests STRESS_RUNS
# times and the whole x11 suite STRESS_SUITE_RUNS times with every core busy (scripts/stress.sh).
STRESS_RUNS ?= 20
STRESS_SUITE_RUNS ?= 3
stress: sysdeps $(STAMP)
	STRESS_RUNS=$(STRESS_RUNS) STRESS_SUITE_RUNS=$(STRESS_SUITE_RUNS) bash scripts/stress.sh

bench: sysdeps $(STAMP)
	$(PY) bench/capture.py
	$(PY) bench/settle.py

# Renders every window on a private Xvfb into docs/screenshots/ (shown in the README).
screenshots: sysdeps $(STAMP)
	$(PY) scripts/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
