"""Model actions written short, for the policy's tests (validated as the client validates)."""

from __future__ import annotations

from typing import Any

from model.schema import ACTION_ADAPTER, Action


def act(**fields: Any) -> Action:
    return ACTION_ADAPTER.validate_python(fields)


def typing(text: str, **extra: Any) -> Action:
    return act(action="type", text=text, **extra)


def key(*keys: str) -> Action:
    return act(action="hotkey", keys=list(keys))


def click(element: str, **extra: Any) -> Action:
    return act(action="click", element=element, x=10, y=20, **extra)
