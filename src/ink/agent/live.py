"""The live output of a running tool call: a bounded tail, emitted as ``tool_update`` at most every
``interval`` seconds, so a command that floods its output costs one small event per interval.

The last output is never lost to the throttle: a flush is scheduled for the end of the interval. After
``close`` (the call settled or was abandoned) nothing more is emitted. Call ``feed`` from the event
loop's thread (a tool working in a thread hands its output over with ``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
import time

from ink.agent.events import Emit, ToolUpdate

UPDATE_INTERVAL = 0.1  # seconds between two updates of one call
UPDATE_TAIL_CHARS = 4096  # characters of output an update carries: the end of what the call printed


class LiveOutput:
    def __init__(
        self,
        tool_call_id: str,
        emit: Emit,
        *,
        interval: float = UPDATE_INTERVAL,
        tail_chars: int = UPDATE_TAIL_CHARS,
    ) -> None:
        self._id = tool_call_id
        self._emit = emit
        self._interval = interval
        self._tail_chars = tail_chars
        self._tail = ""
        self._last = 0.0
        self._pending: asyncio.TimerHandle | None = None
        self._closed = False

    def feed(self, text: str) -> None:
        """More output of the call. Never raises: a broken listener must not break the tool."""
        if self._closed or not text:
            return
        self._tail = (self._tail + text)[-self._tail_chars :]
        if self._pending is not None:
            return  # the scheduled flush will carry it
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            self._flush()
        else:
            self._pending = asyncio.get_running_loop().call_later(wait, self._flush)

    def close(self) -> None:
        self._closed = True
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _flush(self) -> None:
        self._pending = None
        if self._closed:
            return
        self._last = time.monotonic()
        try:
            self._emit(ToolUpdate(self._id, self._tail))
        except Exception:
            self._closed = True  # a listener that fails once is not fed again
