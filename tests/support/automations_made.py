"""Automations with parameters that several tests start: one to rename a file (a plain value
with a default, one without) and one to sign in (a secret)."""

from __future__ import annotations

from app.automations import Automation


def rename() -> Automation:
    return Automation.make("", name="rename", task="rename {file} to {new_name}",
                           parameters={"file": {"default": "report.pdf"},
                                       "new_name": {"description": "the new name"}})


def sign_in() -> Automation:
    return Automation.make("", name="sign in", task="sign in with {password}",
                           parameters={"password": {"secret": True}})
