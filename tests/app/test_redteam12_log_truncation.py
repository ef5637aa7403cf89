"""Red team (issue 23): a secret cut by a log line's own length limit still never reaches
``holodesk.log``.

Attack: the model quotes a typed secret (or a secret parameter's value) in an answer that is
not a valid step. model/client.py logs every rejected answer to ``holodesk.log`` (debug level;
the file takes every level) as ``"rejected answer: %.500s"``. The log's mask
(app/secrets.py ``RedactingFilter``, with the run's ``RunSecrets`` watched) looks for each
secret in the line *as formatted*: when the secret straddles the 500th character, the line
holds only its start, which is no form of it, and that start (all of the secret but its last
characters) is written to the file, and from there into a problem report.

Property: no secret of the run reaches ``holodesk.log``, whole or in part, in any form.

This predates issue 23 (the old filter formatted, then masked, the same way); the run's
secrets object is where it is now fixed.

Fixed: the filter masks each text argument before the line is formatted, so a precision
(``%.500s``) cuts the mask, never the secret.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from app.logs import watch
from model.run_secrets import RunSecrets
from tests.support.leaks import holodesk_log


def test_a_secret_cut_by_a_rejected_answers_length_limit_is_not_written(
        tmp_path: Path) -> None:
    secret = f"Hunter2!x9{uuid.uuid4().hex[:10]}"  # new each run: the mask outlives the test
    secrets = RunSecrets()
    watch(secrets)
    secrets.add_typed(secret)  # typed as a secret by an earlier step
    # The model's answer, not a step: the secret starts a few characters before the cut.
    answer = "x" * PAD + f"I typed {secret} into the field" + "y" * 40
    log_path = tmp_path / "holodesk.log"
    with holodesk_log(log_path):
        # What model/client.py HolotronClient.next_step writes for a rejected answer.
        logging.getLogger("model.client").debug("rejected answer: %.500s", answer)
    written = log_path.read_text(encoding="utf-8")
    assert "rejected answer" in written
    start = secret[:MIN_SHOWN]
    assert start not in written, "the start of the secret is in holodesk.log"


#: Characters before "I typed " in the answer.
PAD = 480
#: How much of the secret's start the cut line would hold (of its 20 characters).
MIN_SHOWN = 500 - PAD - len("I typed ")
