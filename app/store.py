"""The action log: every run and every step, in SQLite next to the screenshots they name.

Layout under the data directory (``paths.data_dir()`` unless a path is given)::

    holodesk.db                       runs + steps (WAL mode)
    runs/<run_id>/step-001.jpg        the screenshot sent to the model at step 1
    runs/<run_id>/step-001-thumb.jpg  its thumbnail, when one was given

Opened with ``keep_screenshots=False`` (the ``log_screenshots`` setting off), the log keeps the
thumbnails and the text only: a step's full screenshot is never written, and its record names
none.

Durability: WAL with ``synchronous=NORMAL`` makes every committed transaction survive the
process being killed (SIGKILL included); only an OS crash or power loss may lose the last few.
:meth:`ActionLog.add_step` commits at once, and screenshots are written (and renamed into
place) before the row naming them, so a finished step is never lost and never names a missing
file. A run whose process died keeps outcome ``running`` until the next :meth:`ActionLog.open`
finds its pid gone and marks it ``interrupted`` (its result: failed, it never finished).

Each finished run keeps two words: its ``outcome`` (how it ended: the model answered, a limit,
a stop) and its ``result`` (what it came to for the person: done, not done, stopped, failed;
app/result.py), which every front end shows as the headline. Runs stored before schema
version 5 have their result derived from their outcome.

Schema versions live in ``PRAGMA user_version`` and move forward through :data:`_MIGRATIONS`;
a database from a newer holodesk is refused before anything is written to it.

Threads: one connection, opened with ``check_same_thread=False`` and guarded by a lock, so a
single :class:`ActionLog` may be shared by the agent worker and a UI thread. Open it on the
main thread, hand it to the worker, close it after the worker has joined.

Secrets: nothing here receives the API key. ``settings`` snapshots are scrubbed of anything
named like a key or token anyway, and the run's secrets given to :meth:`ActionLog.open` (a
:class:`~model.run_secrets.RunSecrets`: the key, secret parameters, typed secrets) are masked in
every text stored (defense in depth against an error message quoting a header).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any

from app import paths
from app.result import OUTCOME_RESULTS, RunResult
from app.secrets import scrub_settings
from control.tripwire import own_write
from model.coords import FrameGeometry, Point
from model.problem import HolodeskError
from model.run_secrets import RunSecrets

__all__ = [
    "DECISIONS",
    "OUTCOMES",
    "RESULTS",
    "SCHEMA_VERSION",
    "ActionLog",
    "AmbiguousRun",
    "RunNotFound",
    "RunRecord",
    "SchemaTooNew",
    "Source",
    "StepRecord",
    "StepResult",
    "StoreError",
    "geometry_from_dict",
    "parse_points",
    "points_text",
]

_log = logging.getLogger(__name__)

SCHEMA_VERSION = 5

OUTCOMES = frozenset(
    {"answered", "asked_user", "stopped", "limit", "loop", "error", "running", "interrupted"}
)
DECISIONS = frozenset({"auto", "approved", "skipped", "edited", "forbidden", "stopped"})


class StepResult(StrEnum):
    """How a stored step ended; the values are the ``steps.result`` column's text."""

    OK = "ok"  # the action was done (or the run ended on an answer or a question)
    FAILED = "failed"  # the model or the machine failed; ``error`` says how
    STOPPED = "stopped"  # the emergency stop or the person's Stop ended the step
    SKIPPED = "skipped"  # not executed: skipped, refused, a loop, a limit or a pause


RESULTS = frozenset(StepResult)


class Source(StrEnum):
    """Where a stored step's action came from; the values are the ``steps.source`` column's
    text (steps stored before schema version 3 read as ``model``)."""

    MODEL = "model"  # the model proposed it
    REPLAYED = "replayed"  # a saved trajectory of the automation, found again on the screen

_RUN_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{4,}$")
_POINT = re.compile(r"\((-?\d+),\s*(-?\d+)\)")
_POINT_SEPARATOR = " -> "
_MIME_EXT = {"image/jpeg": ".jpg", "image/jpg": ".jpg", "image/png": ".png", "image/webp": ".webp"}


class StoreError(HolodeskError):
    """The action log cannot do what was asked; the message says why."""


class SchemaTooNew(StoreError):
    """The database was written by a newer holodesk; it was left untouched."""


class RunNotFound(StoreError, LookupError):
    """No run matches the id or prefix given."""


class AmbiguousRun(RunNotFound):
    """More than one run starts with the prefix given; the message lists them."""


@dataclass(frozen=True)
class RunRecord:
    """One run as stored. Times are Unix epoch seconds."""

    id: str
    task: str
    started_at: float
    finished_at: float | None
    outcome: str
    reason: str | None
    endpoint: str
    model: str | None
    settings: dict[str, Any]
    steps: int
    pid: int | None = None
    host: str | None = None
    #: What the run came to (app/result.py); None while it is running.
    result: RunResult | None = None

    @property
    def headline(self) -> str:
        """The result in words ("not done"), or the outcome while there is none (running)."""
        return self.result.words if self.result is not None else self.outcome


@dataclass
class StepRecord:
    """One step, filled in by the agent as the step goes, then saved by :meth:`ActionLog.add_step`.

    Times are Unix epoch seconds. Paths are as returned by :meth:`ActionLog.save_screenshot`
    (absolute when read back). ``screen_point`` is display text such as ``"(932, 880)"`` or
    ``"(10, 20) -> (30, 40)"`` for a drag. ``timings`` holds milliseconds under the keys
    ``capture_ms``, ``model_ms``, ``ttft_ms``, ``confirm_ms``, ``exec_ms``, ``settle_ms``.
    """

    run_id: str
    step_no: int
    started_at: float
    finished_at: float | None = None
    screenshot_path: str | None = None
    thumbnail_path: str | None = None
    geometry: dict[str, Any] | None = None  # sent size, monitor rectangle, scale
    raw_output: str | None = None
    action: dict[str, Any] | None = None
    thought: str | None = None
    note: str | None = None
    element: str | None = None
    screen_point: str | None = None
    decision: str | None = None  # one of DECISIONS, None when no decision was reached
    reason_for_confirm: str | None = None
    result: StepResult | None = None
    error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    #: Of ``completion_tokens``, those the model reasoned with; None: not known (a log from
    #: before schema 4, a server that neither reports them nor streams reasoning apart).
    reasoning_tokens: int | None = None
    #: True: ``reasoning_tokens`` is holodesk's count of streamed reasoning deltas, not the
    #: server's figure (model.client.reasoning_count; docs/eval.md).
    reasoning_estimated: bool = False
    target: str | None = None  # the application the action went to, in words
    source: Source = Source.MODEL
    #: Why the action came from there, in words: where a replayed target was found again, or
    #: why the replay handed over to the model at this step.
    source_note: str | None = None

    @property
    def frame_geometry(self) -> FrameGeometry | None:
        """``geometry`` as a :class:`FrameGeometry`; None when absent or unreadable."""
        return geometry_from_dict(self.geometry)

    @property
    def points(self) -> tuple[Point, ...]:
        """The screen point(s) that ``screen_point`` names (two for a drag)."""
        return parse_points(self.screen_point)


def points_text(points: Sequence[Point]) -> str | None:
    """The stored ``screen_point`` text of ``points``: ``(x, y)``, ``(a, b) -> (c, d)``, or None."""
    return _POINT_SEPARATOR.join(f"({p.x}, {p.y})" for p in points) or None


def parse_points(text: str | None) -> tuple[Point, ...]:
    """The points of a stored ``screen_point`` text (the inverse of :func:`points_text`)."""
    return tuple(Point(int(x), int(y)) for x, y in _POINT.findall(text or ""))


def geometry_from_dict(data: Mapping[str, Any] | None) -> FrameGeometry | None:
    """The :class:`FrameGeometry` stored with a step (``geometry_json``), or None.

    None too for a damaged value: a step stays readable without its point markers.
    """
    if not data:
        return None
    try:
        return FrameGeometry.from_dict(data)
    except ValueError:
        return None


_V1 = [
    """
    CREATE TABLE runs (
        id            TEXT PRIMARY KEY,
        task          TEXT NOT NULL,
        started_at    REAL NOT NULL,
        finished_at   REAL,
        outcome       TEXT NOT NULL DEFAULT 'running',
        reason        TEXT,
        endpoint      TEXT NOT NULL,
        model         TEXT,
        settings_json TEXT NOT NULL DEFAULT '{}',
        steps         INTEGER NOT NULL DEFAULT 0,
        pid           INTEGER,
        host          TEXT,
        proc_start    TEXT
    )
    """,
    "CREATE INDEX runs_by_start ON runs (started_at)",
    "CREATE INDEX runs_by_outcome ON runs (outcome)",
    # Enumerated columns are checked in Python, not with CHECK constraints: SQLite cannot change
    # a CHECK without rebuilding the table, and new outcomes will come.
    """
    CREATE TABLE steps (
        run_id             TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_no            INTEGER NOT NULL,
        started_at         REAL NOT NULL,
        finished_at        REAL,
        screenshot_path    TEXT,
        thumbnail_path     TEXT,
        geometry_json      TEXT,
        raw_output         TEXT,
        action_json        TEXT,
        thought            TEXT,
        note               TEXT,
        element            TEXT,
        screen_point       TEXT,
        decision           TEXT,
        reason_for_confirm TEXT,
        result             TEXT,
        error              TEXT,
        timings_json       TEXT,
        prompt_tokens      INTEGER,
        completion_tokens  INTEGER,
        PRIMARY KEY (run_id, step_no)
    )
    """,
]

# Version N is reached by running _MIGRATIONS[N] on a database at version N - 1.
# 2: the application each step went to ("xterm — bash"), from control.target.
# 3: where each step's action came from (the model, or a replayed trajectory) and why.
# 4: each step's reasoning tokens, and whether that figure is an estimate (NULL before).
# 5: each run's result (done, not done, ...), derived from the outcome for the runs before.
_MIGRATIONS: dict[int, list[str]] = {
    1: _V1,
    2: ["ALTER TABLE steps ADD COLUMN target TEXT"],
    3: ["ALTER TABLE steps ADD COLUMN source TEXT",
        "ALTER TABLE steps ADD COLUMN source_note TEXT"],
    4: ["ALTER TABLE steps ADD COLUMN reasoning_tokens INTEGER",
        "ALTER TABLE steps ADD COLUMN reasoning_estimated INTEGER"],
    5: ["ALTER TABLE runs ADD COLUMN result TEXT",
        # Nothing better is known of a run stored before: what its outcome means.
        "UPDATE runs SET result = CASE outcome "
        + " ".join(f"WHEN '{outcome}' THEN '{result.value}'"
                   for outcome, result in OUTCOME_RESULTS.items())
        + " END"],
}

_STEP_COLUMNS = (
    "run_id", "step_no", "started_at", "finished_at", "screenshot_path", "thumbnail_path",
    "geometry_json", "raw_output", "action_json", "thought", "note", "element", "screen_point",
    "decision", "reason_for_confirm", "result", "error", "timings_json", "prompt_tokens",
    "completion_tokens", "target", "source", "source_note", "reasoning_tokens",
    "reasoning_estimated",
)  # fmt: skip
_RUN_COLUMNS = (
    "id, task, started_at, finished_at, outcome, reason, endpoint, model, settings_json, steps, "
    "pid, host, result"
)


class ActionLog:
    """The action log database. Create with :meth:`open`; use as a context manager or close()."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *,
                 keep_screenshots: bool = True, secrets: RunSecrets | None = None) -> None:
        self._conn = conn
        self._lock = threading.RLock()
        self._secrets = secrets if secrets is not None else RunSecrets()
        self.path = path
        #: Where ``runs/<run_id>/`` folders go: next to the database.
        self.root = path.parent
        #: False: :meth:`save_screenshot` writes the thumbnail only, never the full screenshot.
        self.keep_screenshots = keep_screenshots

    # --- opening and closing --------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | None = None,
        *,
        secrets: RunSecrets | None = None,
        mark_interrupted: bool = True,
        keep_screenshots: bool = True,
    ) -> ActionLog:
        """Open (creating or migrating) the log at ``path`` (default ``paths.db_path()``).

        ``secrets`` (the run's, :mod:`model.run_secrets`) are masked in everything stored, in
        every form, those the run learns later too. Runs left ``running`` by a dead process
        are marked ``interrupted`` unless ``mark_interrupted`` is False. ``keep_screenshots``
        False keeps thumbnails and text only (see the module doc).
        Raises :class:`SchemaTooNew` for a database from a newer holodesk, :class:`StoreError`
        for a file that is not a usable database.
        """
        path = paths.db_path() if path is None else path
        try:
            paths.ensure_private_dir(path.parent)
            if not path.exists():
                # Typed text and what was on screen: owner-only. Created before SQLite opens it,
                # because SQLite gives the -wal and -shm files the database file's permissions.
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise StoreError(f"cannot create the action log {path}: {exc}") from exc
        try:
            conn = sqlite3.connect(
                path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the action log {path}: {exc}") from exc
        try:
            _check_not_newer(conn, path)
            _configure(conn, path)
            _migrate(conn, path)
        except BaseException:
            conn.close()
            raise
        log = cls(conn, path, keep_screenshots=keep_screenshots, secrets=secrets)
        if mark_interrupted:
            log.mark_interrupted()
        return log

    def close(self) -> None:
        """Close the connection; further calls fail. Safe to call twice."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ActionLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


    # --- writing --------------------------------------------------------------------------

    def start_run(
        self, task: str, endpoint: str, model: str | None, settings: Mapping[str, Any]
    ) -> RunRecord:
        """Record a new run (outcome ``running``, this process's pid) and return it.

        ``settings`` is a JSON-able snapshot, e.g. ``Settings.model_dump(mode="json")``; keys
        that look like secrets are dropped with a warning.
        """
        snapshot = scrub_settings(settings)
        settings_json = self._text(json.dumps(snapshot, sort_keys=True)) or "{}"
        started = time.time()
        pid = os.getpid()
        host = socket.gethostname()
        proc_start = _process_start(pid)
        task_text = self._text(task) or ""
        with self._lock:
            for _attempt in range(20):
                run_id = _new_run_id(started)
                try:
                    with self._transaction():
                        self._conn.execute(
                            "INSERT INTO runs (id, task, started_at, outcome, endpoint, model, "
                            "settings_json, steps, pid, host, proc_start) "
                            "VALUES (?, ?, ?, 'running', ?, ?, ?, 0, ?, ?, ?)",
                            (
                                run_id,
                                task_text,
                                started,
                                endpoint,
                                model,
                                settings_json,
                                pid,
                                host,
                                proc_start,
                            ),
                        )
                except sqlite3.IntegrityError:
                    continue  # the same second and random suffix: try another suffix
                break
            else:
                raise StoreError("could not allocate a run id")
        _log.info("run %s started", run_id)
        return RunRecord(
            id=run_id, task=task_text, started_at=started, finished_at=None, outcome="running",
            reason=None, endpoint=endpoint, model=model, settings=snapshot, steps=0, pid=pid,
            host=host,
        )  # fmt: skip

    def save_screenshot(
        self,
        run_id: str,
        step_no: int,
        data: bytes,
        mime: str,
        thumbnail: bytes | None = None,
    ) -> tuple[Path | None, Path | None]:
        """Write a step's screenshot (and thumbnail) to ``runs/<run_id>/``; returns their paths.

        The screenshot's path is None when the log keeps no screenshots (``keep_screenshots``
        False): only the thumbnail is written then. Files are written under a temporary name
        and renamed, so a name never points at half an image. Call before :meth:`add_step`,
        which records the paths.
        """
        ext = _MIME_EXT.get(mime.lower())
        if ext is None:
            raise StoreError(f"unsupported screenshot type {mime!r}")
        folder = paths.ensure_private_dir(self.run_dir(run_id))
        shot: Path | None = None
        if self.keep_screenshots:
            shot = folder / f"step-{step_no:03d}{ext}"
            _write_file(shot, data)
        thumb: Path | None = None
        if thumbnail is not None:
            thumb = folder / f"step-{step_no:03d}-thumb{_sniff_ext(thumbnail) or ext}"
            _write_file(thumb, thumbnail)
        return shot, thumb

    def run_dir(self, run_id: str) -> Path:
        """The folder of a run's screenshots (not created here)."""
        if not _RUN_ID.match(run_id):
            # Run ids become folder names: refuse anything that could escape runs/.
            raise StoreError(f"not a run id: {run_id!r}")
        return self.root / paths.RUNS_DIR / run_id

    def add_step(self, record: StepRecord) -> None:
        """Store a finished step and commit at once (it must survive a kill right after)."""
        if record.decision is not None and record.decision not in DECISIONS:
            raise StoreError(f"unknown decision {record.decision!r}")
        if record.result is not None and record.result not in RESULTS:
            raise StoreError(f"unknown result {record.result!r}")
        values = (
            record.run_id,
            record.step_no,
            record.started_at,
            record.finished_at,
            self._relative(record.screenshot_path),
            self._relative(record.thumbnail_path),
            _json_or_none(record.geometry),
            self._text(record.raw_output),
            self._text(_json_or_none(record.action)),
            self._text(record.thought),
            self._text(record.note),
            self._text(record.element),
            record.screen_point,
            record.decision,
            self._text(record.reason_for_confirm),
            record.result,
            self._text(record.error),
            _json_or_none(record.timings),
            record.prompt_tokens,
            record.completion_tokens,
            self._text(record.target),
            record.source.value,
            self._text(record.source_note),
            record.reasoning_tokens,
            None if record.reasoning_tokens is None else int(record.reasoning_estimated),
        )
        placeholders = ", ".join("?" for _ in _STEP_COLUMNS)
        with self._lock:
            try:
                with self._transaction():
                    self._conn.execute(
                        f"INSERT INTO steps ({', '.join(_STEP_COLUMNS)}) VALUES ({placeholders})",
                        values,
                    )
                    self._conn.execute(
                        "UPDATE runs SET steps = (SELECT count(*) FROM steps WHERE run_id = ?) "
                        "WHERE id = ?",
                        (record.run_id, record.run_id),
                    )
            except sqlite3.IntegrityError as exc:
                raise StoreError(
                    f"cannot store step {record.step_no} of run {record.run_id}: {exc} "
                    "(unknown run, or that step was stored already)"
                ) from exc

    def finish_run(self, run_id: str, outcome: str, reason: str | None = None,
                   result: RunResult | None = None) -> None:
        """Record how a run ended (one of :data:`OUTCOMES` except ``running``) and what it came
        to (``result``; None: what the outcome means, app/result.py) and commit."""
        if outcome not in OUTCOMES or outcome == "running":
            raise StoreError(f"not a final outcome: {outcome!r}")
        try:
            final = OUTCOME_RESULTS[outcome] if result is None else RunResult(result)
        except ValueError as exc:
            raise StoreError(f"unknown result {result!r}") from exc
        with self._lock, self._transaction():
            cur = self._conn.execute(
                "UPDATE runs SET outcome = ?, result = ?, reason = ?, finished_at = ? "
                "WHERE id = ?",
                (outcome, final.value, self._text(reason), time.time(), run_id),
            )
            if cur.rowcount == 0:
                raise RunNotFound(f"no run {run_id!r}")
        _log.info("run %s finished: %s (%s)", run_id, final.words, outcome)

    def mark_interrupted(self) -> list[str]:
        """Mark runs left ``running`` by a process that is gone as ``interrupted``; their ids.

        Runs started on another host (a shared data folder) are left alone: their pid says
        nothing here. A pid reused by an unrelated process is told apart by its start time
        where the OS reports one (Linux).
        """
        here = socket.gethostname()
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, pid, host, proc_start FROM runs WHERE outcome = 'running'"
            ).fetchall()
            dead = [
                (run_id, pid)
                for run_id, pid, host, proc_start in rows
                if host == here and (pid is None or not _process_alive(pid, proc_start))
            ]
            if not dead:
                return []
            with self._transaction():
                for run_id, pid in dead:
                    self._conn.execute(
                        "UPDATE runs SET outcome = 'interrupted', result = ?, reason = ?, "
                        "finished_at = "
                        "coalesce((SELECT max(coalesce(finished_at, started_at)) FROM steps "
                        "WHERE run_id = runs.id), started_at) WHERE id = ? AND outcome = 'running'",
                        (OUTCOME_RESULTS["interrupted"].value,
                         f"the holodesk process (pid {pid}) ended before the run finished",
                         run_id),
                    )  # fmt: skip
        for run_id, _pid in dead:
            _log.warning("run %s was interrupted (its process is gone)", run_id)
        return [run_id for run_id, _pid in dead]

    def delete_run(self, run_id: str) -> None:
        """Delete a run: its rows, then its screenshot folder. Raises :class:`RunNotFound`.

        A run still ``running`` in a live process is refused (:class:`StoreError`): its agent
        would go on writing steps of a run that no longer exists.
        """
        folder = self.run_dir(run_id)
        with self._lock:
            row = self._conn.execute(
                "SELECT outcome, pid, host, proc_start FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            if row is None:
                raise RunNotFound(f"no run {run_id!r}")
            outcome, pid, host, proc_start = row
            if outcome == "running" and _still_running(pid, host, proc_start):
                raise StoreError(f"run {run_id} is still running; stop it before deleting it")
            with self._transaction():
                self._conn.execute("DELETE FROM steps WHERE run_id = ?", (run_id,))
                self._conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        # Rows first: a crash in between leaves an orphan folder (harmless, pruned by hand),
        # never a row naming deleted screenshots.
        _remove_tree(folder)
        _log.info("run %s deleted", run_id)

    def prune(self, retention_days: float, *, now: float | None = None) -> list[str]:
        """Delete runs that started more than ``retention_days`` days ago; their ids.

        ``retention_days`` 0 (or less) keeps everything. Runs still ``running`` in a live
        process are kept whatever their age.
        """
        if retention_days <= 0:
            return []
        cutoff = (time.time() if now is None else now) - retention_days * 86_400
        with self._lock:
            rows = self._conn.execute(
                "SELECT id FROM runs WHERE started_at < ? ORDER BY started_at", (cutoff,)
            ).fetchall()
        deleted: list[str] = []
        for (run_id,) in rows:
            try:
                self.delete_run(run_id)
            except RunNotFound:
                continue  # deleted meanwhile by another window or process
            except StoreError as exc:
                _log.info("kept run %s: %s", run_id, exc)
                continue
            deleted.append(run_id)
        if deleted:
            _log.info("pruned %d run(s) older than %g days", len(deleted), retention_days)
        return deleted

    # --- reading --------------------------------------------------------------------------

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        """The most recent runs, newest first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY started_at DESC, id DESC LIMIT ?",
                (max(0, limit),),
            ).fetchall()
        return [_run_from_row(row) for row in rows]

    def get_run(self, ref: str) -> RunRecord:
        """The run whose id is ``ref`` or uniquely starts with it; ``last`` is the newest run.

        Raises :class:`RunNotFound` (or its subclass :class:`AmbiguousRun`, listing matches).
        """
        ref = ref.strip()
        with self._lock:
            if ref in ("last", "latest"):
                rows = self._conn.execute(
                    f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"
                ).fetchall()
            else:
                rows = self._conn.execute(
                    f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (ref,)
                ).fetchall()
                if not rows and ref:
                    rows = self._conn.execute(
                        f"SELECT {_RUN_COLUMNS} FROM runs WHERE substr(id, 1, ?) = ? "
                        "ORDER BY started_at DESC, id DESC LIMIT 11",
                        (len(ref), ref),
                    ).fetchall()
        if not rows:
            raise RunNotFound(f"no run matches {ref!r}; `holodesk log list` shows recent runs")
        if len(rows) > 1:
            ids = [str(row[0]) for row in rows[:10]]
            more = ", ..." if len(rows) > 10 else ""
            raise AmbiguousRun(
                f"{ref!r} matches several runs: {', '.join(ids)}{more}; give more of the id"
            )
        return _run_from_row(rows[0])

    def steps(self, run_id: str) -> list[StepRecord]:
        """The stored steps of a run, in order (empty for an unknown run)."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {', '.join(_STEP_COLUMNS)} FROM steps WHERE run_id = ? ORDER BY step_no",
                (run_id,),
            ).fetchall()
        return [self._step_from_row(row) for row in rows]

    def secrets(self) -> RunSecrets:
        """The run's secrets this log masks in stored text (the agent masks its prompt and
        events with them; an export of this log's runs masks with them)."""
        return self._secrets

    # --- internals ------------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock up front, so a concurrent writer waits (busy_timeout)
        # instead of failing half-way through the transaction.
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _text(self, text: str | None) -> str | None:
        if text is None or not self._secrets:
            return text
        return self._secrets.mask(text)

    def _relative(self, path: str | None) -> str | None:
        # Relative to the data folder, so moving the folder keeps the log readable.
        if path is None:
            return None
        candidate = Path(path)
        try:
            return candidate.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(candidate)

    def _absolute(self, stored: str | None) -> str | None:
        if stored is None:
            return None
        candidate = Path(stored)
        return str(candidate if candidate.is_absolute() else self.root / candidate)

    def _step_from_row(self, row: Sequence[Any]) -> StepRecord:
        data = dict(zip(_STEP_COLUMNS, row, strict=True))
        return StepRecord(
            run_id=data["run_id"],
            step_no=data["step_no"],
            started_at=data["started_at"],
            finished_at=data["finished_at"],
            screenshot_path=self._absolute(data["screenshot_path"]),
            thumbnail_path=self._absolute(data["thumbnail_path"]),
            geometry=_json_load(data["geometry_json"]),
            raw_output=data["raw_output"],
            action=_json_load(data["action_json"]),
            thought=data["thought"],
            note=data["note"],
            element=data["element"],
            screen_point=data["screen_point"],
            decision=data["decision"],
            reason_for_confirm=data["reason_for_confirm"],
            result=_result(data["result"]),
            error=data["error"],
            timings=_json_load(data["timings_json"]) or {},
            prompt_tokens=data["prompt_tokens"],
            completion_tokens=data["completion_tokens"],
            target=data["target"],
            source=_source(data["source"]),
            source_note=data["source_note"],
            reasoning_tokens=data["reasoning_tokens"],
            reasoning_estimated=bool(data["reasoning_estimated"]),
        )


# --- opening helpers ---------------------------------------------------------------------


def _check_not_newer(conn: sqlite3.Connection, path: Path) -> None:
    # Reading user_version writes nothing: the check comes before any PRAGMA that would.
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not a holodesk action log ({exc})") from exc
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"{path} was written by a newer holodesk (schema version {version}; this one knows "
            f"up to {SCHEMA_VERSION}). Upgrade holodesk, or move the file away to start a new "
            "log. The file was not changed."
        )


def _configure(conn: sqlite3.Connection, path: Path) -> None:
    try:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot use the action log {path}: {exc}") from exc
    if str(mode).lower() != "wal":
        # E.g. a network file system: still correct, only slower and less concurrent.
        _log.warning("the action log %s is not in WAL mode (%s)", path, mode)


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version == SCHEMA_VERSION:
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the write lock.
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            _check_not_newer(conn, path)
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[target]:
                    conn.execute(statement)
                # Inside the transaction: the schema and its version change together or not at all.
                conn.execute(f"PRAGMA user_version = {int(target)}")
                _log.info("action log %s migrated to schema version %d", path, target)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot prepare the action log {path}: {exc}") from exc


# --- small helpers -----------------------------------------------------------------------


def _new_run_id(now: float) -> str:
    # Local time: people look runs up by the date and time they remember (`log show 20261202`).
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{stamp}-{os.urandom(2).hex()}"


def _json_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _json_load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _result(text: str | None) -> StepResult | None:
    if text is None:
        return None
    try:
        return StepResult(text)
    except ValueError:
        # Only possible in a hand-edited row (add_step refuses it): the rest of the step and
        # of its run stay readable.
        _log.warning("action log: unknown step result %r read as none", text)
        return None


def _source(text: str | None) -> Source:
    try:
        return Source(text) if text is not None else Source.MODEL
    except ValueError:
        _log.warning("action log: unknown step source %r read as model", text)
        return Source.MODEL


def _run_from_row(row: Sequence[Any]) -> RunRecord:
    (run_id, task, started_at, finished_at, outcome, reason, endpoint, model, settings_json,
     steps, pid, host, result) = row  # fmt: skip
    return RunRecord(
        id=run_id, task=task, started_at=started_at, finished_at=finished_at, outcome=outcome,
        reason=reason, endpoint=endpoint, model=model, settings=json.loads(settings_json or "{}"),
        steps=steps, pid=pid, host=host, result=_run_result(result, outcome),
    )  # fmt: skip


def _run_result(text: str | None, outcome: str) -> RunResult | None:
    if text is None:
        return None  # still running
    try:
        return RunResult(text)
    except ValueError:
        # Only possible in a hand-edited row (finish_run refuses it): its outcome says more.
        _log.warning("action log: unknown run result %r read from its outcome", text)
        return OUTCOME_RESULTS.get(outcome)


def _sniff_ext(data: bytes) -> str | None:
    if data.startswith(b"\xff\xd8\xff"):
        return ".jpg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ".png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return None


def _write_file(path: Path, data: bytes) -> None:
    # No fsync: a killed process loses nothing the OS already has, and fsync per frame would cost
    # tens of milliseconds on a busy disk for protection only against power loss.
    # The run folders are protected during a run (a screenshot removed trips it): holodesk's
    # own. Not paths.own_write: they are no part of the record kept between runs.
    with own_write(path):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _still_running(pid: int | None, host: str | None, proc_start: str | None) -> bool:
    """Whether a run marked ``running`` belongs to a live process (or to another host)."""
    if host != socket.gethostname():
        return True  # its pid says nothing here: assume it lives
    return pid is not None and _process_alive(pid, proc_start)


def _remove_tree(folder: Path) -> None:
    """Delete a run folder; what cannot be deleted is logged (the rows are gone already)."""

    def report(_func: object, path: str, exc_info: tuple[Any, BaseException, Any]) -> None:
        if not isinstance(exc_info[1], FileNotFoundError):
            _log.warning("could not delete %s: %s", path, exc_info[1])

    # onerror (not 3.12's onexc): holodesk supports Python 3.11. Holodesk's own deletion, which
    # a run's tripwire must not take for someone removing its screenshots.
    with own_write(folder):
        shutil.rmtree(folder, onerror=report)


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), to tell pid reuse apart."""
    stat = _proc_stat(pid)
    return stat[19] if stat is not None and len(stat) > 19 else None


def _proc_stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # Field 2 (the command name) may contain spaces and parentheses: split after the last ')'.
    return text.rpartition(")")[2].split()  # [0] is field 3 (state), [19] field 22 (start time)


def _process_alive(pid: int, proc_start: str | None) -> bool:
    if sys.platform == "win32":
        return _windows_process_alive(pid)
    if Path("/proc/self/stat").exists():
        stat = _proc_stat(pid)
        if stat is None or not stat or stat[0] in ("Z", "X"):  # gone, or a zombie not reaped yet
            return False
        return proc_start is None or len(stat) <= 19 or stat[19] == proc_start
    try:
        os.kill(pid, 0)  # signal 0 only checks existence (never used on Windows, where it kills)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _windows_process_alive(pid: int) -> bool:
    if sys.platform != "win32":
        return False
    import ctypes

    kernel32 = ctypes.windll.kernel32
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return False
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
