"""Stored runs for people and other tools: a JSONL export with images, and terminal text.

Export layout (``holodesk log export RUN -o DEST``)::

    DEST/holodesk-run-<run_id>/
        run.jsonl               line 1: {"type": "run", ...}; then one {"type": "step", ...} each
        step-001.jpg            the screenshot sent at step 1 (names as in the action log)
        step-001-thumb.jpg      its thumbnail, when one was stored

A run logged with ``log_screenshots`` off has thumbnails only: its steps' ``screenshot`` is
null.

Times are ISO 8601 in UTC; image fields are file names relative to the export folder (null
when the image is missing). The export is written into a temporary folder and renamed, so a
folder with the final name is always complete. No secret is exported: settings snapshots are
scrubbed again, and the run's secrets (:mod:`model.run_secrets`, every form) are masked.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.secrets import scrub_settings
from app.store import ActionLog, RunRecord, StepRecord, StoreError
from app.visible import visible_line
from model.run_secrets import RunSecrets

_log = logging.getLogger(__name__)

EXPORT_FORMAT = "holodesk-run/1"
JSONL_NAME = "run.jsonl"


def export_run(log: ActionLog, run_id: str, dest: Path,
               secrets: RunSecrets | None = None) -> Path:
    """Export run ``run_id`` (id or unique prefix) into ``dest``; returns the new folder.

    ``dest`` is created if missing. An existing export of the same run is never overwritten.
    ``secrets`` are masked in every form (default: those of the run ``log`` was opened for).
    """
    run = log.get_run(run_id)
    steps = log.steps(run.id)
    secrets = log.secrets() if secrets is None else secrets
    dest.mkdir(parents=True, exist_ok=True)
    final = dest / f"holodesk-run-{run.id}"
    if final.exists():
        raise StoreError(f"{final} exists already; remove it or export to another folder")
    tmp = Path(tempfile.mkdtemp(prefix=f".holodesk-run-{run.id}.", dir=dest))
    try:
        lines = [_run_line(run)]
        for step in steps:
            shot = _copy_image(step.screenshot_path, tmp)
            thumb = _copy_image(step.thumbnail_path, tmp)
            lines.append(_step_line(step, shot, thumb))
        text = "".join(
            secrets.mask(json.dumps(line, ensure_ascii=False)) + "\n" for line in lines
        )
        (tmp / JSONL_NAME).write_text(text, encoding="utf-8")
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _log.info("run %s exported to %s", run.id, final)
    return final


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="milliseconds")


def _run_line(run: RunRecord) -> dict[str, Any]:
    return {
        "type": "run",
        "format": EXPORT_FORMAT,
        "id": run.id,
        "task": run.task,
        "started_at": _iso(run.started_at),
        "finished_at": _iso(run.finished_at),
        "outcome": run.outcome,
        "result": run.result.value if run.result is not None else None,
        "reason": run.reason,
        "endpoint": run.endpoint,
        "model": run.model,
        "steps": run.steps,
        "settings": scrub_settings(run.settings),
    }


def _step_line(step: StepRecord, shot: str | None, thumb: str | None) -> dict[str, Any]:
    return {
        "type": "step",
        "run_id": step.run_id,
        "step_no": step.step_no,
        "started_at": _iso(step.started_at),
        "finished_at": _iso(step.finished_at),
        "screenshot": shot,
        "thumbnail": thumb,
        "geometry": step.geometry,
        "raw_output": step.raw_output,
        "action": step.action,
        "thought": step.thought,
        "note": step.note,
        "element": step.element,
        "screen_point": step.screen_point,
        "decision": step.decision,
        "reason_for_confirm": step.reason_for_confirm,
        "target": step.target,
        "source": step.source.value,
        "source_note": step.source_note,
        "result": step.result,
        "error": step.error,
        "timings": step.timings,
        "prompt_tokens": step.prompt_tokens,
        "completion_tokens": step.completion_tokens,
        "reasoning_tokens": step.reasoning_tokens,
        "reasoning_estimated": step.reasoning_estimated,
    }


def _copy_image(source: str | None, folder: Path) -> str | None:
    if source is None:
        return None
    src = Path(source)
    try:
        shutil.copyfile(src, folder / src.name)
    except OSError as exc:
        _log.warning("export: image %s not copied (%s)", src, exc)
        return None
    return src.name


# --- text for the terminal ------------------------------------------------------------


def format_run_list(runs: Sequence[RunRecord]) -> str:
    """A table of runs for ``holodesk log list``."""
    if not runs:
        return "no runs yet"
    lines = [f"{'RUN':<20}  {'STARTED':<16}  {'STEPS':>5}  {'RESULT':<11}  TASK"]
    for run in runs:
        lines.append(
            f"{run.id:<20}  {_local(run.started_at, '%Y-%m-%d %H:%M'):<16}  {run.steps:>5}  "
            f"{run.headline:<11}  {visible_line(run.task, 60)}"
        )
    return "\n".join(lines)


def format_run(run: RunRecord, steps: Sequence[StepRecord]) -> str:
    """One run and its steps for ``holodesk log show``; model text is made terminal-safe
    (app/visible.py: controls, escapes and invisible characters shown as symbols)."""
    lines = [
        # What it came to first, then why (the reason keeps how it ended).
        f"run {run.id}: {run.headline}"
        + (f": {visible_line(run.reason, 300)}" if run.reason else ""),
        f"task: {visible_line(run.task, 500)}",
        f"started {_local(run.started_at, '%Y-%m-%d %H:%M:%S')}"
        + (
            f", finished {_local(run.finished_at, '%H:%M:%S')}"
            f" ({_duration(run.finished_at - run.started_at)})"
            if run.finished_at is not None
            else ""
        )
        + f", {run.steps} step{'s' if run.steps != 1 else ''}",
        f"server: {run.endpoint}, model {visible_line(run.model, 80) or '(unknown)'}",
    ]
    for step in steps:
        lines.append("")
        lines.append(
            f"step {step.step_no}  {_local(step.started_at, '%H:%M:%S')}  {_action_text(step)}"
            f"  [{step.decision or '-'} / {step.result or '-'}]  {step.source.value}"
        )
        for label, text in (
            (step.source.value, step.source_note),
            ("thought", step.thought),
            ("note", step.note),
            ("in", step.target),
            ("confirm because", step.reason_for_confirm),
            ("error", step.error),
            # A step with no parsed action failed on the model's output: show what it said.
            ("model said", step.raw_output if not step.action else None),
        ):
            if text:
                lines.append(f"    {label}: {visible_line(text, 300)}")
        timing = _timing_text(step.timings)
        if timing:
            lines.append(f"    time: {timing}")
        if step.screenshot_path:
            lines.append(f"    screenshot: {step.screenshot_path}")
        elif step.thumbnail_path:
            lines.append(f"    thumbnail only: {step.thumbnail_path}")
    return "\n".join(lines)


def _action_text(step: StepRecord) -> str:
    action = step.action or {}
    kind = str(action.get("action", "")) or "(no action)"
    where = f" at {step.screen_point}" if step.screen_point else ""
    if "element" in action:
        return f'{kind} "{visible_line(str(action["element"]), 60)}"{where}'
    if kind == "type":
        enter = " + Enter" if action.get("press_enter") else ""
        return f'type "{visible_line(str(action.get("text", "")), 60)}"{enter}'
    if kind == "hotkey":
        keys = action.get("keys") or []
        return "hotkey " + "+".join(visible_line(str(k), 20) for k in keys)
    if kind == "wait":
        return f"wait {action.get('seconds', '')} s"
    if kind == "ask_user":
        return f'ask "{visible_line(str(action.get("question", "")), 100)}"'
    if kind == "answer":
        return f'answer "{visible_line(str(action.get("text", "")), 100)}"'
    return kind


def _timing_text(timings: Mapping[str, float]) -> str:
    order = ("capture_ms", "model_ms", "ttft_ms", "confirm_ms", "exec_ms", "settle_ms")
    parts = [
        f"{key.removesuffix('_ms')} {timings[key] / 1000:.2f} s"
        for key in order
        if isinstance(timings.get(key), int | float)
    ]
    return ", ".join(parts)


def _local(epoch: float, fmt: str) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime(fmt)


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
