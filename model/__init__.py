"""Talking to Holotron-12B: step schema, prompts, coordinates, HTTP client. No Qt or pyautogui."""

# holodesk's own package, not another project's `model` (ui/identity.py checks at start).
HOLODESK_PACKAGE = True
