"""holodesk agent core that runs without a GUI: loop, sessions, log store, settings, CLI."""

# holodesk's own package, not another project's `app` (ui/identity.py checks at start).
HOLODESK_PACKAGE = True
