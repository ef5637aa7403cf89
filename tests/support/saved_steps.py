"""Saved steps (a trajectory and its pictures) made up for tests that move them around without
replaying them: the sharing tests. Real PNGs of noise, valid actions, one typed secret (kept as
``secret: true`` without its text, as the recorder keeps it)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from app.trajectory import Anchor, Trajectory, TrajectoryStep

SHARED_TASK = "log in as {user} with {password} and file {hours} hours"


def png(seed: int, size: tuple[int, int] = (96, 96)) -> bytes:
    """A PNG of noise: every seed its own picture."""
    pixels = np.random.default_rng(seed).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


def saved_steps(task: str = SHARED_TASK, typed: str = "ann"
                ) -> tuple[Trajectory, dict[str, bytes]]:
    """Four steps (click, type, click, a typed secret) with 2 crops and 4 state pictures."""
    pictures = {f"r1-s{n:02d}-state.png": png(n, (80, 50)) for n in (1, 2, 3, 4)}
    pictures["r1-s01-p1.png"] = png(11)
    pictures["r1-s03-p1.png"] = png(13)
    steps = (
        TrajectoryStep(action={"action": "click", "element": "Log in", "x": 100, "y": 200},
                       state="r1-s01-state.png",
                       anchors=(Anchor(crop="r1-s01-p1.png", x=50, y=60, crop_x=48, crop_y=48),)),
        TrajectoryStep(action={"action": "type", "text": typed}, state="r1-s02-state.png"),
        TrajectoryStep(action={"action": "click", "element": "Save", "x": 300,
                                               "y": 400}, state="r1-s03-state.png",
                       anchors=(Anchor(crop="r1-s03-p1.png", x=150, y=160, crop_x=48,
                                       crop_y=48),)),
        TrajectoryStep(action={"action": "type", "text": ""}, secret=True,
                       state="r1-s04-state.png"),
    )
    geometry = {"sent_width": 1280, "sent_height": 800, "scale": 1.0,
                "monitor": {"left": 0, "top": 0, "width": 1280, "height": 800}}
    return Trajectory(automation="Timesheet", task=task, run_id="run-1", recorded_at=1.0,
                      geometry=geometry, steps=steps), pictures
