# The two commands a new machine needs: `make run` and `make test`.
# PYTHON picks the interpreter for a new .venv (default: the newest python3.11+ on PATH).
VENV := .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
INSTALL_INPUTS := pyproject.toml scripts/install.sh scripts/install_deps.py
# The installs (scripts/install.sh, packaging/build_deb.py), not what runs after them: no check
# of PyPI for a newer pip (a request and an upgrade notice per pip run), and PEP 517 builds even
# with Debian 12's pip 23.0, which otherwise installs the projects that have only a setup.py
# (pyautogui and five of its dependencies) the legacy way with a deprecation notice each; a built
# wheel is cached for the next install too. Later pips always build that way and ignore it.
PIP_ENV := PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_USE_PEP517=1

.PHONY: run test test-quick lint sysdeps sysdeps-runtime bench screenshots stress fresh-check \
	fresh-check-quick clean package package-check

# Runtime only: the app's system packages (as root; otherwise the sudo line, and stop), then
# the runtime Python packages. No test or lint tools.
run: sysdeps-runtime $(RUN_STAMP)
	$(VENV)/bin/holodesk $(ARGS)

sysdeps-runtime:
	@bash scripts/sysdeps.sh runtime

$(RUN_STAMP): $(INSTALL_INPUTS)
	@$(PIP_ENV) bash scripts/install.sh run
	@touch $@

# The developer tools go in with `make test` / `make lint` only.
$(DEV_STAMP): $(INSTALL_INPUTS)
	@$(PIP_ENV) bash scripts/install.sh dev
	@touch $@ $(RUN_STAMP)

# System packages the tests need (Xvfb, xdotool, …) on top of the runtime ones; installed only
# when running as root.
sysdeps:
	@bash scripts/sysdeps.sh test

# The suite on TEST_WORKERS pytest-xdist workers, each with its own Xvfbs and home (tests/README.md).
# Most of a test's time is spent waiting (on Xvfb, a subprocess, HTTP), so 4 workers beat one per
# core on 2 cores. Serially: `make test PYTEST_ARGS=-n0`; one file: `make test PYTEST_ARGS=tests/x.py`.
TEST_WORKERS ?= 4
test: sysdeps $(DEV_STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# The inner loop: no X server at all (no Xvfb, no window manager, no xdotool), the tests that
# start processes by the dozen left out too (tests/support/workers.py QUICK_SKIPS); a few minutes.
test-quick: $(DEV_STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) -m "not x11 and not slow" --no-x-server $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The source install on a fresh Debian 12 (as root; scripts/fresh-check.sh, the README says more):
# debootstrap a minimal root (cached in .cache/), clone this commit into it, `make run` to a
# window on Xvfb, then `make test` there (13 to 15 minutes with the root cached).
fresh-check:
	bash scripts/fresh-check.sh

# The same with a few tests inside instead of the whole suite (about 3 minutes from nothing):
# .ci/run runs this one. The tests: Qt, pynput's listeners without evdev, the keyring rules,
# version and identity.
FRESH_QUICK_TESTS := -p no:cacheprovider tests/e2e/test_version_identity.py \
	tests/ui/test_qt_runtime.py tests/control/test_hotkeys.py tests/control/test_touch.py \
	tests/app/test_secrets.py tests/app/test_release_at_start.py
fresh-check-quick:
	FRESH_SILENCE_FAILS=0 FRESH_TEST_ARGS="$(FRESH_QUICK_TESTS)" bash scripts/fresh-check.sh

# The race hunt, not part of `make test`: under stress-ng's two busy processes per core, the
# race-prone X11 tests STRESS_RUNS times, then the whole suite STRESS_SUITE_RUNS times in a row,
# each pass on TEST_WORKERS workers (scripts/stress.sh).
STRESS_RUNS ?= 20
STRESS_SUITE_RUNS ?= 3
stress: sysdeps $(DEV_STAMP)
	STRESS_RUNS=$(STRESS_RUNS) STRESS_SUITE_RUNS=$(STRESS_SUITE_RUNS) TEST_WORKERS=$(TEST_WORKERS) \
		bash scripts/stress.sh

bench: sysdeps $(DEV_STAMP)
	$(PY) bench/capture.py
	$(PY) bench/settle.py
	$(PY) bench/step.py

# Renders every window on a private 1366x768 Xvfb into docs/screenshots/ (shown in the README).
screenshots: sysdeps $(DEV_STAMP)
	$(PY) scripts/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# The Debian package (packaging/README.md): a frozen build, dist/holodesk_<version>_amd64.deb.
# PYTHON=... picks the Python to freeze (default python3). package-check builds it with the
# desktop entry's and AppStream file's validators required (a missing one is an error there, a
# warning in `make package`), then installs the .deb into a fresh Debian 12 root and runs it there
# (root; minutes).
package:
	$(PIP_ENV) $(or $(PYTHON),python3) packaging/build_deb.py $(PACKAGE_ARGS)

package-check:
	$(MAKE) package PACKAGE_ARGS=--require-validators
	bash packaging/smoke.sh
