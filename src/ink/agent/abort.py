"""Abort signals: one per run (R17), idempotent, carrying a reason.

Modelled on Trio/AnyIO cancel scopes: ``abort`` is a plain non-blocking call that may be made any number
of times (only the first reason is kept); code that must stop soon either polls ``aborted`` or registers a
callback with ``on_abort``; ``run_unless_aborted`` races an awaitable against the signal and absorbs only
the cancellation it caused itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from ink.agent.tasks import cancel_and_wait

T = TypeVar("T")
AbortCallback = Callable[[str], object]


class AbortSignal:
    def __init__(self) -> None:
        self._reason: str | None = None
        self._message: str | None = None
        self._callbacks: list[AbortCallback] = []
        self._event = asyncio.Event()

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    @property
    def message(self) -> str | None:
        """What whoever stopped the run said, for the user (a hook's ``stopReason``); None: nothing."""
        return self._message

    def abort(self, reason: str = "user", message: str | None = None) -> bool:
        """Request the abort. Returns True only for the first call; later calls change nothing."""
        if self._reason is not None:
            return False
        self._reason, self._message = reason, message
        self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(reason)
        return True

    def on_abort(self, callback: AbortCallback) -> Callable[[], None]:
        """Call ``callback(reason)`` at abort (at once if already aborted). Returns a remover."""
        if self._reason is not None:
            callback(self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait_aborted(self) -> str:
        await self._event.wait()
        assert self._reason is not None
        return self._reason


class Outcome(Generic[T]):
    """What ``run_unless_aborted`` got: the value, or ``aborted`` set when the signal won the race."""

    __slots__ = ("aborted", "value")

    def __init__(self, value: T | None, aborted: bool) -> None:
        self.value = value
        self.aborted = aborted


async def run_unless_aborted(awaitable: Awaitable[T], signal: AbortSignal) -> Outcome[T]:
    """Run ``awaitable`` as a task; when ``signal`` aborts first, cancel it and wait for its clean-up.

    Exceptions of the awaitable propagate. Cancellation of the caller propagates too, after the inner
    task has been cancelled: only the cancellation caused by the signal is absorbed here.
    """
    task = asyncio.ensure_future(awaitable)
    remove = signal.on_abort(lambda _reason: task.cancel())
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        await cancel_and_wait(task)  # the caller's cancellation: the inner task has ended when it goes on
        raise
    finally:
        remove()
    if task.cancelled():
        return Outcome(None, aborted=True)
    return Outcome(task.result(), aborted=False)
