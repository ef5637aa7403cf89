"""holodesk agent core that runs without a GUI: loop, sessions, log store, settings, CLI."""
