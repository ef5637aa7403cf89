"""Is the ``app``, ``control`` and ``model`` Python imported holodesk's own?

holodesk's top-level packages have generic names. Installed with ``pip install .`` into an
environment shared with another project that also ships an ``app`` or ``model`` package (or
with such a folder on ``PYTHONPATH``), one of them shadows the other, or pip mixes their files
into one folder, and holodesk would run someone else's code or fail far from the cause. Each
of holodesk's packages therefore carries a mark (``HOLODESK_PACKAGE = True`` in its
``__init__``), and they must all come from the same folder as this ``ui`` package.

Only the standard library here: this runs before anything of ``app`` is imported.
"""

from __future__ import annotations

import importlib
from pathlib import Path

PACKAGES = ("app", "control", "model")
#: The exit status when they are not: the installation is wrong, not the arguments (2), a run
#: (1) or a busy desktop (3); app.cli.exitcodes cannot be imported to say so before the check.
EXIT_NOT_OURS = 4
MARK = "HOLODESK_PACKAGE"

FIX = (
    "Install holodesk into an environment of its own: in the clone, `make run` (it makes "
    ".venv), or `pipx install .`, or `python3 -m venv ~/.local/share/holodesk/venv && "
    "~/.local/share/holodesk/venv/bin/pip install .`; and run it without a PYTHONPATH that "
    "holds another project's packages."
)


def identity_problem() -> str | None:
    """None when every package is holodesk's own, else what is wrong and the fix."""
    home = Path(__file__).resolve().parent.parent
    for name in PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            return (f"holodesk cannot start: its package `{name}` cannot be imported ({exc}). "
                    f"{FIX}")
        where = getattr(module, "__file__", None)
        ours = getattr(module, MARK, False) is True
        if not ours or where is None or Path(where).resolve().parent.parent != home:
            found = where or "a namespace package with no __init__.py"
            return (
                f"holodesk cannot start: the Python package `{name}` it imported is not "
                f"holodesk's own ({found}; holodesk's is in {home / name}). Another project's "
                f"top-level `{name}` package shadows it in this Python environment. {FIX}"
            )
    return None
