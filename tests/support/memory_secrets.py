"""A :class:`app.secrets.SecretStore` in a dict: API keys for tests, never persisted."""

from __future__ import annotations

from collections.abc import Mapping


class MemoryStore:
    """A :class:`app.secrets.SecretStore` in a dict."""

    def __init__(self, initial: Mapping[str, str] | None = None) -> None:
        self._secrets: dict[str, str] = dict(initial or {})

    def get(self, endpoint: str) -> str | None:
        return self._secrets.get(endpoint)

    def set(self, endpoint: str, secret: str) -> None:
        self._secrets[endpoint] = secret

    def delete(self, endpoint: str) -> bool:
        return self._secrets.pop(endpoint, None) is not None

    def backend_name(self) -> str:
        return "memory (not persisted)"
