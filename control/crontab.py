"""The user's crontab, as the tripwire protects it: read with ``crontab -l``, put back with
``crontab -`` (or ``crontab -r`` when there was none).

Its file lives in a spool only root can read or watch, so it is compared by reading it through
the ``crontab`` command, never watched. That command is the system's, never one found on
``PATH`` (:mod:`control.system_programs`): a ``crontab`` put in a folder the person can write
would run inside holodesk and answer that nothing changed. No ``crontab`` command means no cron
to start anything: nothing to protect (:func:`find_crontab` returns None).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from control.system_programs import find_system_program

#: How long one ``crontab`` call may take (it reads a small file).
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Crontab:
    """The crontab of the user running ``program`` (a path to ``crontab``)."""

    program: str
    name: str = "crontab"

    def read(self) -> bytes | None:
        """What ``crontab -l`` prints; None when the user has none."""
        done = self._run("-l")
        if done.returncode == 0:
            return done.stdout
        said = done.stderr.decode(errors="replace").strip()
        if "no crontab" in said.lower():
            return None
        raise OSError(f"`crontab -l` failed: {said or f'exit {done.returncode}'}")

    def write(self, data: bytes | None) -> None:
        """Install ``data`` as the crontab (``crontab -``); None removes it (``crontab -r``)."""
        done = self._run("-r") if data is None else self._run("-", data)
        said = done.stderr.decode(errors="replace").strip()
        if done.returncode != 0 and not (data is None and "no crontab" in said.lower()):
            raise OSError(f"`crontab` failed: {said or f'exit {done.returncode}'}")

    def _run(self, arg: str, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run([self.program, arg], input=data, capture_output=True,
                                  timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as e:
            raise OSError(f"`crontab {arg}` did not answer in {TIMEOUT_S:g} s") from e


def find_crontab() -> Crontab | None:
    """The user's crontab, or None where the system has no ``crontab`` command."""
    program = find_system_program("crontab")
    return Crontab(str(program)) if program is not None else None
