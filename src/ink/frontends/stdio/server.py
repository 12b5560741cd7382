"""``StdioServer``: the life of a protocol server on stdin and stdout, the same for every headless frontend.

A subclass says what a line means (``dispatch``), what SIGINT interrupts (``interrupt``) and how its work
ends (``shut_down``); this base reads, stops and closes. Each non-blank input line (or ``Overlong``
marker) goes to ``dispatch`` in order; blank lines are skipped. Output goes through ``self.writer``.

Ending (``serve`` returns the exit status; the first cause wins and is the ``reason`` given on):
    0    end of input (reason ``end of input``)
    1    reading stdin failed (a bug, logged on stderr): ended like end of input
    141  the client closed stdout (``stdout closed``): later output is dropped
    143  SIGTERM (``terminated``)
then ``shut_down(reason)`` aborts and settles what runs, and the last lines are written. SIGINT calls
``interrupt``; with nothing to interrupt it is ignored with a note on stderr, so a client racing the end
of a run never kills the process by accident. (A second SIGINT while an abort settles is the run
controller's forced exit, R21: status 130.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Awaitable

from ink.frontends.stdio.lines import Overlong, read_lines
from ink.frontends.stdio.writer import Encode, LineWriter, encode_line

log = logging.getLogger(__name__)

EXIT_OK, EXIT_BUG, EXIT_PIPE_CLOSED, EXIT_TERMINATED = 0, 1, 141, 143
END_OF_INPUT, TERMINATED, STDOUT_CLOSED = "end of input", "terminated", "stdout closed"
IDLE_SIGINT = "nothing to interrupt (end the input to quit)"


class StdioServer(ABC):
    """Serves one protocol over a pair of descriptors. Create it with the event loop running."""

    def __init__(
        self,
        out_fd: int,
        *,
        line_limit: int,
        encode: Encode = encode_line,
        close_timeout: float | None = None,
    ) -> None:
        """``line_limit``: bytes per input line. ``encode``: an object as one output line.
        ``close_timeout``: how long the last lines may wait for a client that does not read (None: as
        long as it takes)."""
        self.line_limit = line_limit
        self.close_timeout = close_timeout
        self.writer = LineWriter(out_fd, encode=encode, on_closed=self._stdout_closed)
        self.status = EXIT_OK
        self.reason = END_OF_INPUT
        self._stopped = asyncio.Event()

    async def serve(self, in_fd: int, *, signals: bool = True) -> int:
        """Serve until end of input, SIGTERM or a closed stdout; then ``shut_down``, write the last lines
        and return the exit status. ``signals``: handle SIGINT and SIGTERM meanwhile (needs the main
        thread's loop)."""
        if signals:
            self._install_signals()
        reading = asyncio.ensure_future(self._read(in_fd))
        stopped = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({reading, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reading, stopped):
                task.cancel()
            await asyncio.gather(reading, stopped, return_exceptions=True)
            if reading.done() and not reading.cancelled() and reading.exception() is not None:
                log.error("reading commands failed", exc_info=reading.exception())
                self.stop(EXIT_BUG, "internal error")
            await self.shut_down(self.reason)
            if signals:
                self._remove_signals()
            await self.writer.aclose(self.close_timeout)
        return self.status

    def stop(self, status: int, reason: str) -> None:
        """End serving with ``status``; the abort reason is ``reason``. Only the first call counts."""
        if not self._stopped.is_set():
            self.status, self.reason = status, reason
            self._stopped.set()

    # -- what the protocol does --------------------------------------------------------------------

    @abstractmethod
    def dispatch(self, line: bytes | Overlong) -> Awaitable[None] | None:
        """Answer one line that is not blank (an ``Overlong`` one was dropped). Must not block or raise for
        bad input: an exception here ends serving as a bug (status 1). What it returns to await (opening
        a session) is awaited before the next line is read."""

    @abstractmethod
    def interrupt(self) -> bool:
        """SIGINT: abort what runs (R17). False when nothing ran."""

    @abstractmethod
    async def shut_down(self, reason: str) -> None:
        """Serving ended: abort what runs with ``reason``, let it settle (its last lines are still written)
        and close. Called once, before the writer is closed."""

    # -- the mechanics -----------------------------------------------------------------------------

    async def _read(self, in_fd: int) -> None:
        async for line in read_lines(in_fd, self.line_limit):
            if isinstance(line, Overlong) or line.strip():
                pending = self.dispatch(line)
                if pending is not None:
                    await pending

    def _stdout_closed(self) -> None:
        self.stop(EXIT_PIPE_CLOSED, STDOUT_CLOSED)

    def _install_signals(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        loop.add_signal_handler(signal.SIGTERM, self.stop, EXIT_TERMINATED, TERMINATED)

    def _remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(signum)

    def _on_sigint(self) -> None:
        if not self.interrupt():
            with contextlib.suppress(OSError, ValueError):
                print(f"ink: SIGINT: {IDLE_SIGINT}", file=sys.stderr, flush=True)
