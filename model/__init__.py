"""Talking to Holotron-12B: step schema, prompts, coordinates, HTTP client. No Qt or pyautogui."""
