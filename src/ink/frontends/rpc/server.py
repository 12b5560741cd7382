"""The RPC server loop: read command lines, answer each once, write every run event as it happens.

Order on stdout: a command's response comes before the events the command itself caused (the
``queue_update`` of a queued prompt follows the response that names its ``inputId``); all other events
are written in the order the controller emitted them, interleaved with responses.

Ending (``serve`` returns the exit status):
    0    end of input: a running run is aborted (reason ``end of input``), settles, and its ``run_end``
         is written before the process exits
    1    reading stdin failed (a bug, logged on stderr): ended like end of input
    130  a second SIGINT while an abort settles (R21): a forced exit, nothing more is written
    141  the client closed stdout: the run is aborted and settles, output is dropped
    143  SIGTERM: like end of input, with the abort reason ``terminated``
SIGINT while a run (or bang line) goes on aborts it; while idle it is ignored (a note on stderr), so a
client racing the end of a run never kills the process by accident.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from typing import TYPE_CHECKING, Any

from ink.frontends.rpc.handlers import CommandFailed, Handlers
from ink.frontends.rpc.lines import MAX_LINE_BYTES, LineSplitter, Overlong, read_chunks
from ink.frontends.rpc.protocol import (
    Command,
    Rejection,
    overlong_rejection,
    parse_line,
    rejection_response,
    response,
)
from ink.frontends.rpc.writer import LineWriter
from ink.run.events import RunEvent, event_to_json

if TYPE_CHECKING:
    from ink.wiring import App

log = logging.getLogger(__name__)

EXIT_OK, EXIT_BUG, EXIT_INTERRUPTED, EXIT_PIPE_CLOSED, EXIT_TERMINATED = 0, 1, 130, 141, 143
END_OF_INPUT, TERMINATED, STDOUT_CLOSED = "end of input", "terminated", "stdout closed"


class RpcServer:
    """Serves one app over a pair of descriptors. ``serve`` owns the app's shutdown (``aclose``)."""

    def __init__(self, app: App, out_fd: int, *, line_limit: int = MAX_LINE_BYTES) -> None:
        self.app = app
        self.controller = app.controller
        self.writer = LineWriter(out_fd, on_closed=lambda: self._stop(EXIT_PIPE_CLOSED, STDOUT_CLOSED))
        self.handlers = Handlers(app)
        self.line_limit = line_limit
        self._held: list[RunEvent] | None = None
        self._stopped = asyncio.Event()
        self._status = EXIT_OK
        self._reason = END_OF_INPUT

    async def serve(self, in_fd: int, *, signals: bool = True) -> int:
        """Serve until end of input, SIGTERM or a closed stdout; then abort what runs, wait until it has
        settled, close the app and write the last lines. Returns the exit status."""
        unsubscribe = self.controller.subscribe(self.on_event)
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
                self._stop(EXIT_BUG, "internal error")
            self.controller.abort(self._reason)
            await self.app.aclose()  # settles the run: its run_end is still written
            if signals:
                self._remove_signals()
            unsubscribe()
            await self.writer.aclose()
        return self._status

    # -- output ------------------------------------------------------------------------------------

    def on_event(self, event: RunEvent) -> None:
        if self._held is not None:
            self._held.append(event)
        else:
            self.writer.write(event_to_json(event))

    def dispatch(self, line: bytes | Overlong) -> None:
        """Answer one input line (exactly one response), then write the events the command caused."""
        if isinstance(line, Overlong):
            parsed: Command | Rejection = overlong_rejection(line.head, self.line_limit)
        elif not line.strip():
            return  # blank lines are allowed between commands and get no response
        else:
            parsed = parse_line(line)
        if isinstance(parsed, Rejection):
            self.writer.write(rejection_response(parsed))
            return
        self._held = []
        try:
            answer = self._run(parsed)
        finally:
            held, self._held = self._held, None
        self.writer.write(answer)
        for event in held:
            self.writer.write(event_to_json(event))

    def _run(self, command: Command) -> dict[str, Any]:
        try:
            data = self.handlers.handle(command)
        except CommandFailed as exc:
            return response(command.type, command.id, command.has_id, ok=False, error=str(exc))
        except Exception as exc:  # a bug in one command must not end the process
            log.exception("command %s failed", command.type)
            error = f"internal error: {type(exc).__name__}: {exc}"
            return response(command.type, command.id, command.has_id, ok=False, error=error)
        return response(command.type, command.id, command.has_id, ok=True, data=data)

    # -- input -------------------------------------------------------------------------------------

    async def _read(self, in_fd: int) -> None:
        splitter = LineSplitter(self.line_limit)
        async for chunk in read_chunks(in_fd):
            for line in splitter.feed(chunk):
                self.dispatch(line)
        for line in splitter.finish():
            self.dispatch(line)

    def _stop(self, status: int, reason: str) -> None:
        if not self._stopped.is_set():
            self._status, self._reason = status, reason
            self._stopped.set()

    # -- signals -----------------------------------------------------------------------------------

    def _install_signals(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        loop.add_signal_handler(signal.SIGTERM, self._stop, EXIT_TERMINATED, TERMINATED)

    def _remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(signum)

    def _on_sigint(self) -> None:
        if self.controller.state == "running":
            self.controller.interrupt()  # R21: a second one while the abort settles exits 130
        else:
            _note("SIGINT: nothing to interrupt (end the input to quit)")


def _note(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"ink: {text}", file=sys.stderr, flush=True)
