"""The server's base URL: one normalization for the settings, the client and the CLI."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"


def normalize_base_url(url: str) -> str:
    """The OpenAI-style base URL (``…/v1``) for what a person typed as the endpoint.

    ``localhost:8000`` -> ``http://localhost:8000/v1``; a trailing slash, a pasted
    ``/chat/completions`` or ``/models`` are removed; a path prefix (a reverse proxy) is kept.
    """
    text = url.strip()
    if not text:
        return DEFAULT_BASE_URL
    if "://" not in text:
        text = f"http://{text}"
    parts = urlsplit(text)
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models", "/health"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if not path.endswith("/v1"):
        path = f"{path}/v1"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def root_url_of(base_url: str) -> str:
    """The server root (where ``/health`` lives) of a normalized base URL."""
    return base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
