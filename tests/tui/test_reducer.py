"""The frontends' event reader (ink.frontends.reducer) takes every run event there is."""

from __future__ import annotations

import typing

from msgspec.structs import fields

from ink.frontends.reducer import EventReducer
from ink.frontends.tui.view import EventView
from ink.run.events import RewindEnd, RunEvent


def test_every_run_event_type_has_its_method() -> None:
    """``on_event`` calls the method named like the event's type: one missing is an AttributeError in
    every frontend's listener (the TUI printed 'event listener failed on rewind_end' after each /rewind)."""
    events = typing.get_args(RunEvent)
    types = {field.default for cls in events for field in fields(cls) if field.name == "type"}
    assert "rewind_end" in types and "run_end" in types
    missing = sorted(name for name in types if not callable(getattr(EventReducer, name, None)))
    assert missing == []


def test_the_tui_view_takes_a_rewind_end() -> None:
    """R30: a rewind's end reaches the TUI's view like any other event (what it put back comes in its
    input_restored); nothing fails on the way."""
    view = EventView()
    view.on_event(RewindEnd("in-1", ok=True, files=True, conversation=True, written=("a.txt",)))
    view.on_event(RewindEnd("in-2", ok=False, files=True, conversation=False, error="changed outside"))
