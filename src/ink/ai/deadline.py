"""How long a model server may take to say something, once it has the request (docs/config.md).

``first_byte`` bounds the wait from sending the request to the reply's first content, ``idle`` each
silence after it. Only content counts as saying something: text, thinking, a tool call's name or
arguments, a signature, usage, a stop reason. Keep-alives (SSE comments, Anthropic ``ping``) and events
that add nothing (OpenAI chunks with empty ``choices``, a role-only or ``""`` delta; an empty text block;
``response.in_progress``) prove the connection lives, not that the model answers: a server sending only
them forever would otherwise hold a reply open forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import msgspec

from ink.ai.errors import Silent

T = TypeVar("T")


class RequestTimeouts(msgspec.Struct, frozen=True):
    """Seconds. ``connect``: to open the connection; ``first_byte``: from sending the request to the
    reply's first content; ``idle``: between two events that add to the reply. Keep-alives and events
    without content do not count."""

    connect: float = 15.0
    first_byte: float = 300.0
    idle: float = 300.0


DEFAULT_TIMEOUTS = RequestTimeouts()


class Deadline:
    """The time by which the server must say something: ``first_byte`` after the request was sent (the
    connection and the upload are bounded by the client's own connect and write timeouts), then ``idle``
    after each ``restart`` (an event that added to the reply), counted from when the consumer asks for the
    next one, so its own pauses are not the server's silence. ``bound`` runs one await under it and raises
    ``Silent`` when it passes; the deadline never runs out while the generator is suspended at a ``yield``.

    A reply streams thousands of events: moving a timer for each (``asyncio.timeout``: a new timer handle
    per enter and per move, ~10 us) costs more than parsing the event. So ``restart`` only moves ``at``;
    one watchdog timer, armed while something is awaited, looks at ``at`` when it fires and either sleeps
    on until it or cancels the waiting task, as ``asyncio.timeout`` would; it is moved only when ``at``
    comes earlier than it (``idle`` shorter than ``first_byte``) (a cancellation of its own is
    told from one from outside by the task's cancel count, and only its own becomes ``Silent``)."""

    def __init__(self, timeouts: RequestTimeouts, url: str, provider: str) -> None:
        self.timeouts, self.url, self.provider = timeouts, url, provider
        self.first = True
        self.at: float | None = None  # none yet: the request is still being sent
        self._loop = asyncio.get_running_loop()
        self._now = self._loop.time  # read once per event
        self._timer: asyncio.TimerHandle | None = None  # fires at ``_timer_at``, at or before ``at``
        self._timer_at = 0.0
        self._waiting: asyncio.Task[Any] | None = None  # the task in ``bound``, while it awaits
        self._expired = False

    def sent(self) -> None:
        """The request is out (the client calls this once its body is handed to the network)."""
        if self.at is None:
            self._set(self.timeouts.first_byte)

    def restart(self) -> None:
        self.first = False
        self._set(self.timeouts.idle)

    def _set(self, seconds: float) -> None:
        self.at = self._now() + seconds
        if self._timer is not None and self._timer_at > self.at:  # ``idle`` may be the shorter one
            self.stop()
        if self._waiting is not None and self._timer is None:  # set while awaiting (``sent``)
            self._arm(self.at)

    def _arm(self, when: float) -> None:
        self._timer, self._timer_at = self._loop.call_at(when, self._check), when

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self._waiting is None or self.at is None:
            return  # not awaiting the server: the next ``bound`` arms the timer again
        if self._loop.time() < self.at:  # the deadline moved on since the timer was set
            self._arm(self.at)
            return
        self._expired = True
        self._waiting.cancel()

    async def bound(self, awaitable: Awaitable[T]) -> T:
        task = asyncio.current_task(self._loop)
        assert task is not None
        cancelling = task.cancelling()
        self._waiting = task
        if self._timer is None and self.at is not None:
            self._arm(self.at)
        try:
            return await awaitable
        except asyncio.CancelledError:
            if self._expired:
                self._expired = False
                if task.uncancel() <= cancelling:  # no cancel from outside came as well
                    raise self._silent() from None
            raise
        finally:
            self._waiting = None
            if self._expired:  # it ran out as the await ended anyway: take back the cancel it sent
                self._expired = False
                task.uncancel()

    def _silent(self) -> Silent:
        if self.first:
            what = f"no answer from {self.url} within first_byte_timeout = {self.timeouts.first_byte:g} s"
        else:
            what = f"{self.url} went silent mid-reply for idle_timeout = {self.timeouts.idle:g} s"
        silence = "keep-alives and events without content count as silence"
        return Silent(f"{what} ({silence}); not retried", provider=self.provider)
