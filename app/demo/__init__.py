"""`holodesk demo`: the real loop on a practice window, without a GPU.

The parts: the practice window's look, shared by the window that draws it (ui/practice) and the
model that reads it (:mod:`app.demo.look`); the demo model, which plans each step from the
screenshot it is sent (:mod:`app.demo.model`); the loopback server that speaks vLLM's protocol
for it, so the real client path runs (:mod:`app.demo.server`); the practice window's process
(:mod:`app.demo.practice`); and the use case that ties them to a real run (:mod:`app.demo.run`),
which the CLI and the desktop app both call. `holodesk eval`'s other windows: the rows window
(:mod:`app.demo.rows`) and the Tk task windows (:mod:`app.demo.task_windows`, their look in
:mod:`app.demo.task_look`, text the demo model reads in :mod:`app.demo.dots`, its planners in
:mod:`app.demo.plans`).
"""
