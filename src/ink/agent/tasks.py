"""Background tasks with an owner: ``Tasks`` holds every task it spawned until it ended, observes how
each one ended (an exception is logged and reported, never lost), and on ``aclose`` cancels what is
left, waits a bounded time and names the stragglers, the way process clean-up names its survivors.

    tasks = Tasks(on_error=report)
    drain = tasks.spawn(read_rest(stream), "reply drain")
    ...
    await cancel_and_wait(drain)            # a cancelled task has ended once this returns
    stragglers = await tasks.aclose(2.0)    # everything cancelled; what did not end in 2 s is named

The event loop keeps only weak references to tasks: a task nobody holds may vanish mid-flight, and the
exception of a task nobody awaits is reported only at garbage collection, if at all. Every background
task of ink is spawned here instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import msgspec

log = logging.getLogger(__name__)

T = TypeVar("T")
TaskError = Callable[[str, BaseException], None]
"""Told the name of a task that ended with an exception, and the exception."""


class Straggler(msgspec.Struct, frozen=True):
    """A task that had not ended when ``Tasks.aclose`` stopped waiting for it."""

    name: str


async def cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and return once it has ended (its own exception, if any, is not raised here: the
    task's owner observes it). Cancelling the caller meanwhile still cancels the caller."""
    task.cancel()
    await asyncio.wait((task,))


class Tasks:
    """A task group that lives as long as its owner (the app). Use it on the event loop's thread."""

    def __init__(self, on_error: TaskError | None = None) -> None:
        self.on_error = on_error  # besides the log: e.g. a notice to the user
        self._running: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._running)

    def spawn(self, work: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Run ``work`` as a task held here until it ends."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._running.add(task)
        task.add_done_callback(self._ended)
        return task

    async def cancel_and_wait(self, task: asyncio.Future[Any]) -> None:
        await cancel_and_wait(task)

    async def aclose(self, bound: float) -> Sequence[Straggler]:
        """Cancel every task, wait at most ``bound`` seconds for them to end, and name those that did
        not (they stay held: they may still end, and their exception is still observed)."""
        running = tuple(self._running)
        for task in running:
            task.cancel()
        if not running:
            return ()
        _done, pending = await asyncio.wait(running, timeout=bound)
        return tuple(Straggler(task.get_name()) for task in running if task in pending)

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if task.cancelled():
            return
        error = task.exception()  # retrieved: never "exception was never retrieved" at GC
        if error is None:
            return
        log.error("background task %s failed", task.get_name(), exc_info=error)
        if self.on_error is not None:
            try:
                self.on_error(task.get_name(), error)
            except Exception:  # the reporter must not break the event loop's callback
                log.exception("reporting the failure of %s failed", task.get_name())
