"""The secrets of one run, and every form in which they are stored or printed.

One :class:`RunSecrets` per run: the API key in use, the values of the automation's secret
parameters, and text the run typed as a secret (found step by step, as the policy judges it).
The action log, the safety policy, the prompt, the program's log file, an export, a shared
bundle and a problem report all take this one object and mask with it; none keeps a secret set
of its own, and none adds to another's.

It lives in ``model/`` because the lowest layers use it too (control/policy.py judges typing a
secret parameter's value; model/client.py masks the key in its errors): imports point
``ui -> app -> control -> model``.

Forms (:func:`forms_of`): a secret reaches text as typed, escaped inside JSON (the stored action,
the model's raw answer; with and without ``ensure_ascii``) and URL-encoded (an address the model
opened, a query string in an error). All are derived here, once.

Values are only ever added, and each addition swaps in new frozen sets: other threads (a log
record, a problem report, the prompt of the next step) read them while the run adds what it
typed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["MASK", "MIN_REDACT_LEN", "RunSecrets", "Unfinished", "forms_of", "without_a_start"]

#: What every form of a secret is replaced by.
MASK = "***"

#: The shortest form that is masked: shorter strings would be "masked" all over ordinary text,
#: and no real key is this short (a secret parameter must be at least this long).
MIN_REDACT_LEN = 6


class Unfinished(str):
    """Text that may stop inside a secret (a model's answer cut short by its token limit):
    written to a log, its end is held back where it may be a secret's start
    (:meth:`RunSecrets.mask_unfinished`), since no mask knows the secret from its start alone.
    The writer marks it; the log's filter (app/secrets.py) knows the run's secrets."""

    __slots__ = ()


def without_a_start(text: str, secrets: Iterable[str]) -> str:
    """``text`` without an end that is the start of one of ``secrets`` (each at least
    :data:`MIN_REDACT_LEN` long): text still arriving, or cut short, may stop inside a secret,
    and no mask can tell a secret from its start alone."""
    held = 0
    for secret in secrets:
        if len(secret) < MIN_REDACT_LEN:
            continue
        for size in range(min(len(secret) - 1, len(text)), held, -1):
            if text.endswith(secret[:size]):
                held = size
                break
    return text[: len(text) - held]


def forms_of(value: str) -> frozenset[str]:
    """Every form ``value`` is stored or printed in: as typed, JSON-escaped (ASCII-only and
    not), URL-encoded (``%20`` and ``+`` for a space). Empty for an empty value."""
    if not value:
        return frozenset()
    return frozenset({
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value, safe=""),
        quote_plus(value, safe=""),
    })


class RunSecrets:
    """The secret values of one run (see the module doc); :meth:`mask` hides every form of
    each in a text. Values are added, never removed."""

    def __init__(self, *, api_key: str | None = None, parameters: Iterable[str] = (),
                 typed: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._api_key = api_key or ""
        self._parameters: frozenset[str] = frozenset()
        self._typed: frozenset[str] = frozenset()
        self._forms: tuple[str, ...] = ()
        with self._lock:
            self._parameters = frozenset(p for p in parameters if p)
            self._typed = frozenset(t for t in typed if t)
            self._derive()

    @classmethod
    def masking(cls, values: Iterable[str]) -> RunSecrets:
        """Secrets gathered from elsewhere (a problem report's, a shared bundle's), to mask
        only: the policy judges typing none of them."""
        return cls(typed=values)

    def __repr__(self) -> str:  # never the values themselves
        return (f"RunSecrets(api_key={'set' if self._api_key else 'none'}, "
                f"parameters={len(self._parameters)}, typed={len(self._typed)})")

    # --- adding ----------------------------------------------------------------------------

    def add_parameters(self, values: Iterable[str]) -> None:
        """The values of the run's secret parameters: masked everywhere, and typing one is
        typing a secret (:meth:`parameters`)."""
        with self._lock:
            self._parameters = self._parameters | {v for v in values if v}
            self._derive()

    def add_typed(self, text: str) -> None:
        """Text the run typed as a secret (as typed, or as the action wrote it)."""
        if not text:
            return
        with self._lock:
            self._typed = self._typed | {text}
            self._derive()

    def _derive(self) -> None:
        values = {self._api_key, *self._parameters, *self._typed} - {""}
        forms = {f for v in values for f in forms_of(v)}
        # Longest first: a longer secret is masked before a shorter one inside it.
        self._forms = tuple(sorted(forms, key=lambda f: (-len(f), f)))

    # --- reading ---------------------------------------------------------------------------

    def parameters(self) -> frozenset[str]:
        """The secret parameters' values (the policy's "types the value of a secret
        parameter")."""
        return self._parameters

    def values(self) -> frozenset[str]:
        """Every secret value, as given (the API key, the parameters, typed secrets)."""
        return frozenset({self._api_key, *self._parameters, *self._typed} - {""})

    def forms(self) -> tuple[str, ...]:
        """Every form of every value (:func:`forms_of`), longest first."""
        return self._forms

    def __bool__(self) -> bool:
        return bool(self._forms)

    def mask(self, text: str) -> str:
        """``text`` with every form of every secret (at least :data:`MIN_REDACT_LEN` long)
        replaced by :data:`MASK`."""
        for form in self._forms:
            if len(form) >= MIN_REDACT_LEN and form in text:
                text = text.replace(form, MASK)
        return text

    def mask_unfinished(self, text: str) -> str:
        """:meth:`mask` for text still arriving (a streamed answer so far): also holds back an
        end that may be the start of a secret, since its rest is not there yet to be
        recognized. Once the rest arrives, the whole secret is masked."""
        return without_a_start(self.mask(text), self._forms)
