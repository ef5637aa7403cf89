"""The practice window `holodesk demo` drives: its own process, its own window class."""
