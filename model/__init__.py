"""Talking to Holotron-12B: action schema, prompts, coordinates, HTTP client. No Qt, no pyautogui."""
