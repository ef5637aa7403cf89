"""The Qt windows of the holodesk tray app, over the same core (app/) the CLI uses."""
