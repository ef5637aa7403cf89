"""The machine: screen capture, input execution, emergency stop, safety policy. No Qt."""

# holodesk's own package, not another project's `control` (ui/identity.py checks at start).
HOLODESK_PACKAGE = True
