"""Pause in the terminal UI (R44): Ctrl+S and ``/pause`` toggle the run's pause, ``/agents pause [N]``
and ``/agents resume [N]`` one sub-agent's; the status line says ``⏸ pausing`` until the run holds at a
safe point, then ``⏸ paused``; the scrollback says when a pause begins and ends.

The work is the controller's (``RunController.pause``/``resume``) and the app's ``SubAgents``: the same
calls RPC's ``pause``/``resume`` make.
"""

from __future__ import annotations

from typing import Protocol

from ink.frontends.tui.blocks import Block
from ink.run import events as ev
from ink.run.controller import QueueError

PAUSED_HINT = "ctrl+s resume · enter steer (taken when it resumes) · esc interrupt"
NOTHING_TO_PAUSE = "nothing is running: ctrl+s (or /pause) holds a run at its next safe point"


class Pausable(Protocol):
    """The run controller, as pausing uses it."""

    @property
    def paused(self) -> bool: ...

    @property
    def held(self) -> bool: ...

    def pause(self) -> bool: ...

    def resume(self) -> bool: ...


def toggle_pause(controller: Pausable) -> Block | None:
    """Ctrl+S, ``/pause``: pause a run going on, resume a paused one. The events print the news; a
    block only when there is nothing to pause."""
    if controller.paused:
        controller.resume()
        return None
    try:
        controller.pause()
    except QueueError:
        return Block("info", NOTHING_TO_PAUSE)
    return None


def status_state(controller: Pausable, state: str) -> str:
    """The status line's state: ``pausing`` (what started still finishes) or ``paused`` (held at a safe
    point) while the run is paused; else ``state`` as it was."""
    if state != "running" or not controller.paused:
        return state
    return "paused" if controller.held else "pausing"


def paused_block(event: ev.RunPaused) -> Block:
    return Block(
        "info",
        "⏸ paused: what streams or runs now finishes, nothing new starts · ctrl+s or /pause resumes, "
        "esc interrupts",
    )


def resumed_block(event: ev.RunResumed) -> Block | None:
    """Said only for a resume: an abort or the run's end says itself."""
    return Block("info", "▶ resumed", "dim") if event.reason == "resume" else None
