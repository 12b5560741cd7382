"""Where a paused run holds (R44): a gate the loop passes before each model call and the scheduler before
each tool call starts.

A pause stops nothing: the reply streaming and the calls already running finish; what has not started
waits at the gate, and goes on when the pause is lifted exactly as it would have without it (the same
requests, the same history). An abort wakes whatever waits, and the run ends as always (R17-R23).

Gates nest: a sub-agent's gate has its parent run's as ``parent``, so pausing the run holds its
sub-agents too, while pausing one sub-agent holds that one only. Passing an open gate costs one
attribute walk (``holding``); callers check it before awaiting ``hold``::

    if gate is not None and gate.holding:
        await gate.hold(signal, emit, "model_call")
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from ink.agent.abort import AbortSignal
from ink.agent.events import Emit, HoldPoint, RunHeld


class PauseGate:
    """One run's pause (or one sub-agent's). ``pause``/``resume`` are plain calls on the event loop's
    thread; ``hold`` is awaited at a safe point. ``held``: how many starts wait here now."""

    def __init__(self, parent: PauseGate | None = None) -> None:
        self.parent = parent
        self._paused = False
        self._wakers: set[asyncio.Future[None]] = set()
        self.held = 0

    @property
    def paused(self) -> bool:
        """This gate's own pause (a parent's pause does not show here)."""
        return self._paused

    @property
    def holding(self) -> bool:
        """Whether a start at this gate waits now: this gate or one above it is paused."""
        gate: PauseGate | None = self
        while gate is not None:
            if gate._paused:
                return True
            gate = gate.parent
        return False

    def pause(self) -> bool:
        """Hold what has not started yet. False when this gate was paused already."""
        if self._paused:
            return False
        self._paused = True
        return True

    def resume(self) -> bool:
        """Let what waits here (and below) go on, unless a gate above still holds it. False when this
        gate was not paused."""
        if not self._paused:
            return False
        self._paused = False
        for waker in tuple(self._wakers):
            _wake(waker)
        return True

    async def hold(self, signal: AbortSignal, emit: Emit, point: HoldPoint) -> None:
        """Wait while ``holding``, until resumed or ``signal`` aborts (the caller checks which). The first
        start to wait here announces ``run_held`` through ``emit`` (a sub-agent's carries its source)."""
        if not self.holding or signal.aborted:
            return
        self.held += 1
        if self.held == 1:
            emit(RunHeld(point))
        try:
            while self.holding and not signal.aborted:
                await self._wait_for_change(signal)
        finally:
            self.held -= 1

    async def _wait_for_change(self, signal: AbortSignal) -> None:
        waker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        chain = tuple(self._chain())
        for gate in chain:
            gate._wakers.add(waker)
        remove = signal.on_abort(lambda _reason: _wake(waker))
        try:
            await waker
        finally:
            remove()
            for gate in chain:
                gate._wakers.discard(waker)

    def _chain(self) -> Iterator[PauseGate]:
        gate: PauseGate | None = self
        while gate is not None:
            yield gate
            gate = gate.parent


def _wake(waker: asyncio.Future[None]) -> None:
    if not waker.done():
        waker.set_result(None)
