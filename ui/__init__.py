"""Qt widgets of the holodesk tray app (issue 3)."""
