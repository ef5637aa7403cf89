"""A run in a terminal asking the open desktop app to make way (app/way.py RemoteWay): what it
sends over the app's socket, and that a missing or failing app never holds the run up."""

from __future__ import annotations

from typing import Any

from app.way import RemoteWay, WorkArea, area_from_message, area_message
from model.coords import Point, Rect

AREA = WorkArea(Rect(-1280, 0, 2560, 1440), (Rect(10, 20, 300, 200), Rect(-5, 0, 8, 8)),
                (Point(-3, 7), Point(100, 200)), 4, 'type "Ada"')


class App:
    """The app's end of the socket: what it was sent, what it answers (None: not running)."""

    def __init__(self, answer: dict[str, Any] | None) -> None:
        self.answer = answer
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.sent.append(message)
        return self.answer


def test_a_work_area_crosses_the_socket_unchanged() -> None:
    assert area_from_message(area_message(AREA)) == AREA


def test_no_app_no_way() -> None:
    app = App(None)
    assert RemoteWay.if_app_runs("task", app.send) is None
    assert app.sent == [{"cmd": "ping"}]


def test_the_run_asks_and_says_it_is_over() -> None:
    app = App({"ok": True, "changed": True})
    way = RemoteWay.if_app_runs("tidy up", app.send)
    assert way is not None
    assert way(AREA) is True
    sent = app.sent[-1]
    assert sent["cmd"] == "make_way" and sent["pid"] == way.pid and sent["task"] == "tidy up"
    assert area_from_message(sent) == AREA
    app.answer = {"ok": True, "changed": False}
    assert way(AREA) is False
    way.over()
    assert app.sent[-1] == {"cmd": "run_over", "pid": way.pid}


def test_an_app_that_quit_or_refuses_only_leaves_its_windows_where_they_are() -> None:
    app = App({"ok": True})
    way = RemoteWay.if_app_runs("x", app.send)
    assert way is not None
    app.answer = None  # quit meanwhile
    assert way(AREA) is False
    app.answer = {"ok": False, "error": "unknown command 'make_way'"}  # an older app
    assert way(AREA) is False
