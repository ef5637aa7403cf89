"""The frozen app's entry point: the same `ui.main:main` as the `holodesk` console script.

PyInstaller needs a script, not an entry-point name; this is that script and nothing more, so
the frozen `holodesk` and the one pip installs cannot drift apart (CLI and desktop app in one).
"""

import sys

from ui.main import main

if __name__ == "__main__":
    sys.exit(main())
