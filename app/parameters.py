"""Parameters of an automation: ``{name}`` placeholders in its task, declared, filled per run.

A task such as ``"rename {file} to {new_name}"`` declares ``file`` and ``new_name``::

    [automation.parameters.file]
    default = "report.pdf"
    description = "the file to rename"

    [automation.parameters.password]
    secret = true          # kept in the keyring, never in this file

Decisions:

* The syntax is Python's format syntax without its extras: ``{name}`` with ``name`` an ASCII
  identifier, ``{{`` and ``}}`` for literal braces; anything else between braces is an error
  saying so, never silently literal text (a typo such as ``{new name}`` would otherwise reach
  the model as is).
* A placeholder without a declaration, and a declaration the task never uses, are errors: both
  are a typo the person wants to hear about when saving, not at the first run.
* A value is one line of printable text: a newline would press Enter when typed, a control
  character could reach a terminal; both are refused, as is an empty value (a run with an empty
  name would act on the wrong thing).
* A secret parameter has no default: its value lives in the keyring
  (:mod:`app.secrets`, one entry per automation and parameter), is masked everywhere the
  typed secrets are, and is never recorded in clear, not even in a replay's trajectory
  (:func:`secret_typed`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from model.problem import HolodeskError

__all__ = [
    "MAX_VALUE",
    "Filled",
    "Parameter",
    "ParameterError",
    "check_param_name",
    "check_value",
    "escape",
    "fill",
    "placeholders",
    "replayed_text",
    "secret_typed",
]

MAX_VALUE = 1000
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# One token at a time: an escaped brace, a placeholder, or a lone brace (the error).
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class ParameterError(HolodeskError, ValueError):
    """A placeholder, a declaration or a value is unusable; the message says which and why."""


def check_param_name(name: str) -> str:
    """``name`` if it can be a parameter's name (letters, digits, ``_``; not starting with a
    digit); ParameterError saying why if not."""
    if not _NAME.match(name):
        raise ParameterError(
            f"{name!r} cannot name a parameter: use letters, digits and '_' (not first), "
            "e.g. new_name"
        )
    return name


class Parameter(BaseModel):
    """One declared parameter. ``secret`` ones have no default: the keyring keeps the value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: str | None = Field(default=None, description="used when a run gives no value")
    secret: bool = Field(default=False, description="kept in the keyring, typed masked")
    description: str = Field(default="", description="what to fill in, shown when asking")

    @field_validator("default", mode="before")
    @classmethod
    def _check_default(cls, value: object) -> object:
        if isinstance(value, str):
            return check_value("the default", value) if value != "" else None
        return value

    @field_validator("description", mode="before")
    @classmethod
    def _check_description(cls, value: object) -> object:
        if isinstance(value, str):
            return check_value("the description", value) if value.strip() else ""
        return value

    @model_validator(mode="after")
    def _no_secret_default(self) -> Parameter:
        if self.secret and self.default is not None:
            raise ValueError(
                "a secret parameter has no default in the automations file (anyone reading the "
                "file would see it); store its value in the keyring instead"
            )
        return self


def check_value(name: str, value: str) -> str:
    """``value`` if it can fill a placeholder; ParameterError naming ``name`` if not."""
    if value == "":
        raise ParameterError(f"{name} is empty; a run never fills a placeholder with nothing")
    if len(value) > MAX_VALUE:
        raise ParameterError(f"{name} is longer than {MAX_VALUE} characters")
    if "\n" in value or "\r" in value:
        raise ParameterError(f"{name} has a line break; a value is one line (typing a line "
                             "break would press Enter)")
    if any(not c.isprintable() for c in value):
        raise ParameterError(f"{name} has control characters; a value is printable text")
    return value


def placeholders(template: str) -> list[str]:
    """The placeholder names in ``template``, first use first, each once; ParameterError at
    a brace that is neither ``{name}`` nor doubled."""
    names: list[str] = []
    for m in _TOKEN.finditer(template):
        token = m.group(0)
        if token in ("{{", "}}"):
            continue
        inner = m.group(1)
        if inner is None:
            raise ParameterError(
                f"a lone {token!r} at character {m.start() + 1}: write {token * 2!r} for a "
                "brace, or {name} for a parameter"
            )
        if not _NAME.match(inner):
            raise ParameterError(
                f"{token!r} is not a placeholder: a parameter is {{name}} with letters, digits "
                "and '_' (write {{ and }} for braces)"
            )
        if inner not in names:
            names.append(inner)
    return names


def escape(text: str) -> str:
    """``text`` as a template that fills to itself (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with every placeholder replaced by its value and doubled braces undone;
    ParameterError listing the names without a value."""
    missing = [n for n in placeholders(template) if n not in values]
    if missing:
        raise ParameterError(f"no value for {', '.join(missing)}")

    def one(m: re.Match[str]) -> str:
        token = m.group(0)
        return token[0] if token in ("{{", "}}") else values[m.group(1)]

    return _TOKEN.sub(one, template)


@dataclass(frozen=True)
class Filled:
    """A run's task with its parameters filled. ``task`` and ``values`` hold every value,
    secrets too: they stay in memory (the repr shows neither)."""

    task: str = field(repr=False)
    values: Mapping[str, str] = field(default_factory=dict, repr=False)
    secret_names: frozenset[str] = frozenset()

    def secrets(self) -> list[str]:
        """The secret values, to be masked in the log, the action log and the prompt."""
        return [v for k, v in self.values.items() if k in self.secret_names]

    def record(self) -> dict[str, Any]:
        """What the run's settings snapshot keeps: the plain values, only the names of the
        secret ones (a replay needs them to retype; no secret value is ever recorded)."""
        if not self.values:
            return {}
        return {
            "parameters": {k: v for k, v in self.values.items() if k not in self.secret_names},
            "masked_parameters": sorted(self.secret_names),
        }


#: A recorded value shorter than this is not looked for in typed text: "1" or "g" is as likely
#: part of other text (a sum, a command) as the value.
MIN_REPLACED = 3


def replayed_text(typed: str, used: Mapping[str, str], new: Mapping[str, str]) -> str:
    """What a replayed ``type`` step types: ``typed`` (recorded in a run that used the
    parameter values ``used``) with each of those values replaced by this run's (``new``).

    Longer values are matched first and each character is replaced at most once, so
    ``file=report`` and ``folder=reports`` do not disturb each other and a new value containing
    an old one is not replaced again. A value this run has no new value for stays as recorded.

    A value is replaced only where it can only have been that value: ParameterError (the
    replay then hands over to the model) when a value to replace occurs in ``typed`` more than
    once, inside a longer word or number, is shorter than :data:`MIN_REPLACED` characters, or
    was also another parameter's value which now differs. Typing asks nothing outside a
    terminal, so a "1" replaced in "refund 10 EUR to ticket 1" would change the refund unseen.
    The message names the parameter, never its values.
    """
    # Every recorded value is matched, also those kept: "reports" of a kept parameter must not
    # be read as "report" of a changed one followed by "s".
    names: dict[str, list[str]] = {}
    for name, value in used.items():
        if value:
            names.setdefault(value, []).append(name)
    by_value = {old: {new.get(n, old) for n in owners} for old, owners in names.items()}
    if all(nows == {old} for old, nows in by_value.items()):
        return typed
    olds = sorted(by_value, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(v) for v in olds))
    found = list(pattern.finditer(typed))
    for old, nows in by_value.items():
        at = [m for m in found if m.group(0) == old]
        if nows == {old} or not at:
            continue
        name = " and ".join(names[old])
        if len(nows) > 1:
            raise ParameterError(f"{name} had the same value when recorded and differ now, "
                                 "so which of them the typing held is unknown")
        if len(old) < MIN_REPLACED:
            raise ParameterError(f"the value {name} had when recorded is shorter than "
                                 f"{MIN_REPLACED} characters, too short to be told from other "
                                 "text in what was typed")
        if len(at) > 1:
            raise ParameterError(f"the value {name} had when recorded occurs {len(at)} times in "
                                 "what was typed, so which of them were the value is unknown")
        if _inside_word(typed, at[0].start(), at[0].end()):
            raise ParameterError(f"the value {name} had when recorded is part of a longer word "
                                 "or number in what was typed")
    replace = {old: next(iter(nows)) for old, nows in by_value.items()}
    return pattern.sub(lambda m: replace[m.group(0)], typed)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _inside_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` continues a run of letters, digits or ``_`` on either side,
    or a number across a separator (``100`` in ``1,100``, ``100.50`` or ``5-100``)."""
    if (start > 0 and _word(text[start]) and _word(text[start - 1])) or (
            end < len(text) and _word(text[end - 1]) and _word(text[end])):
        return True
    before = start >= 2 and text[start].isdigit() and text[start - 1] in _NUMBER_JOINS \
        and text[start - 2].isdigit()
    after = end + 1 < len(text) and text[end - 1].isdigit() and text[end] in _NUMBER_JOINS \
        and text[end + 1].isdigit()
    return before or after


#: What joins the digits of one number (thousands, decimals, ranges, dates).
_NUMBER_JOINS = frozenset(",.-/:'")


def secret_typed(typed: str, secret_values: Mapping[str, str]) -> str | None:
    """For recording a step that typed a masked secret: the name of the secret parameter whose
    value is exactly ``typed`` (the trajectory keeps the name, never the text), or None: then
    the step cannot be replayed and the replay hands over to the model there."""
    for name, value in secret_values.items():
        if value and typed == value:
            return name
    return None


def declared(task: str, parameters: Mapping[str, Parameter]) -> list[str]:
    """Problems between ``task``'s placeholders and the declarations (empty: they agree)."""
    used = placeholders(task)
    problems = [
        f"{{{n}}} is used in the task but not declared; declare it as a parameter" for n in used
        if n not in parameters
    ]
    problems += [
        f"the parameter {n!r} is declared but the task never uses {{{n}}}" for n in parameters
        if n not in used
    ]
    return problems


def missing(names: Iterable[str], values: Mapping[str, str]) -> list[str]:
    """``names`` without a value, in order."""
    return [n for n in names if not values.get(n)]
