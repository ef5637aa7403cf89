"""The run's time limit inside one action: a long ``type``, a drag and a ``wait`` end at the
deadline as at a stop (nothing after it, nothing left held), on the dry-run backend."""

from __future__ import annotations

import time

import pytest

from control.input import Call, DryRunBackend, Executor, TimeLimitReached
from control.stop import StopLatch, StoppedError
from model.coords import Point
from model.schema import Drag, Type, Wait
from tests.support.fake_clock import FakeClock


def test_a_long_type_stops_at_the_deadline_and_never_presses_enter() -> None:
    clock = FakeClock()
    deadline = clock() + 5
    backend = DryRunBackend()
    # Every character costs a second: the deadline comes after the fifth.
    backend.hook = lambda call: clock.advance(1) if call.name == "write_char" else None
    executor = Executor(backend, StopLatch())
    with pytest.raises(TimeLimitReached):
        executor.execute(Type(text="a" * 200, press_enter=True),
                         time_left=lambda: deadline - clock())
    assert backend.typed() == "aaaaa"
    assert "key_down" not in backend.names()  # no Enter after the cut
    assert executor.held_keys == () and executor.held_buttons == ()


def test_keys_held_when_the_deadline_comes_are_released() -> None:
    clock = FakeClock()
    deadline = clock() + 1
    backend = DryRunBackend()
    # The deadline passes while ctrl is down for clear_first's select-all.
    backend.hook = lambda call: clock.advance(5) if call == Call("key_down", ("ctrl",)) else None
    executor = Executor(backend, StopLatch(), platform="linux")
    with pytest.raises(TimeLimitReached):
        executor.execute(Type(text="hello", clear_first=True),
                         time_left=lambda: deadline - clock())
    assert [str(c) for c in backend.calls] == ["key_down('ctrl')", "key_up('ctrl')"]
    assert executor.held_keys == ()


def test_a_drag_cut_at_the_deadline_releases_the_button() -> None:
    clock = FakeClock()
    deadline = clock() + 1
    backend = DryRunBackend()
    backend.hook = lambda call: clock.advance(5) if call.name == "mouse_down" else None
    executor = Executor(backend, StopLatch())
    drag = Drag(element="file", x=0, y=0, to_x=100, to_y=100)
    with pytest.raises(TimeLimitReached):
        executor.execute(drag, [Point(10, 10), Point(500, 500)],
                         time_left=lambda: deadline - clock())
    assert backend.names() == ["move_to", "mouse_down", "mouse_up"]
    assert backend.pointer == (10, 10)  # not one step further after the deadline
    assert executor.held_buttons == ()


def test_a_wait_longer_than_the_time_left_ends_at_the_deadline() -> None:
    executor = Executor(DryRunBackend(), StopLatch())
    t0 = time.monotonic()
    with pytest.raises(TimeLimitReached):
        executor.execute(Wait(seconds=10), time_left=lambda: 0.2)
    # It slept the 0.2 s left, not the 10 asked (loose: a busy machine is slow).
    assert time.monotonic() - t0 < 5


def test_a_wait_within_the_time_left_is_unchanged() -> None:
    executor = Executor(DryRunBackend(), StopLatch())
    executor.execute(Wait(seconds=0.05), time_left=lambda: 60)


def test_nothing_at_all_once_the_deadline_has_passed() -> None:
    backend = DryRunBackend()
    executor = Executor(backend, StopLatch())
    with pytest.raises(TimeLimitReached):
        executor.execute(Type(text="x"), time_left=lambda: -1)
    assert backend.calls == []


def test_a_stop_is_still_a_stop_when_the_deadline_has_passed_too() -> None:
    latch = StopLatch()
    latch.stop("hotkey")
    with pytest.raises(StoppedError):
        Executor(DryRunBackend(), latch).execute(Type(text="x"), time_left=lambda: -1)


def test_without_a_deadline_a_long_type_runs_to_its_end() -> None:
    backend = DryRunBackend()
    Executor(backend, StopLatch()).execute(Type(text="b" * 50, press_enter=True))
    assert backend.typed() == "b" * 50 + "\n"
