"""The `holodesk` entry point: no arguments start the desktop app, anything else is the CLI."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Route to the tray app or to the headless CLI (which never loads Qt)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        from app.cli import main as cli_main

        return cli_main(args)
    from ui.app import run_gui

    return run_gui()


if __name__ == "__main__":
    sys.exit(main())
