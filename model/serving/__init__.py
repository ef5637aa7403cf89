"""Running a local vLLM server: the launcher and the guard that stops it with holodesk."""
