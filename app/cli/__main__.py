"""`python -m app.cli ...`: the same as the `holodesk` command without the GUI routing."""

import sys

from app.cli.main import main

sys.exit(main())
