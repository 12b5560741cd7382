"""The RPC server: answer each command line once, write every run event as it happens.

Order on stdout: a command's response comes before the events the command itself caused (the
``queue_update`` of a queued prompt follows the response that names its ``inputId``); all other events
are written in the order the controller emitted them, interleaved with responses.

Ending (``serve`` returns the exit status; reading, signals and stopping are ``StdioServer``'s):
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

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ink.app.jobs import resume_note
from ink.frontends.rpc.handlers import CommandFailed, Handlers
from ink.frontends.rpc.protocol import (
    Command,
    Rejection,
    overlong_rejection,
    parse_line,
    rejection_response,
    response,
)
from ink.frontends.stdio import Overlong, StdioServer
from ink.frontends.stdio.writer import text_line
from ink.run.events import Notice, RunEvent, TextDeltaEvent, event_to_json

if TYPE_CHECKING:
    from ink.app import App

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 1 << 20  # 1 MiB per command line, newline excluded


class RpcServer(StdioServer):
    """Serves one app over a pair of descriptors. ``serve`` owns the app's shutdown (``aclose``)."""

    def __init__(self, app: App, out_fd: int, *, line_limit: int = MAX_LINE_BYTES) -> None:
        super().__init__(out_fd, line_limit=line_limit)  # the end waits for the client to read run_end
        self.app = app
        self.controller = app.controller
        self.handlers = Handlers(app)
        self._held: list[RunEvent] | None = None
        self._unsubscribe: Callable[[], None] = lambda: None

    async def serve(self, in_fd: int, *, signals: bool = True) -> int:
        """Serve until end of input, SIGTERM or a closed stdout; then abort what runs, wait until it has
        settled, close the app and write the last lines. Returns the exit status."""
        self._unsubscribe = self.controller.subscribe(self.on_event)
        ended = resume_note(self.app.jobs, "list_jobs")  # R43: what the last ink process ended
        if ended is not None:
            self.on_event(Notice(ended))
        return await super().serve(in_fd, signals=signals)

    async def shut_down(self, reason: str) -> None:
        self.controller.abort(reason)
        await self.app.aclose()  # settles the run: its run_end is still written
        self._unsubscribe()

    def interrupt(self) -> bool:
        if self.controller.state != "running":
            return False
        self.controller.interrupt()  # R21: a second one while the abort settles exits 130
        return True

    # -- output ------------------------------------------------------------------------------------

    def on_event(self, event: RunEvent) -> None:
        if self._held is not None:
            self._held.append(event)
        elif type(event) is TextDeltaEvent and event.source is None:  # a line per streamed chunk
            self.writer.write_line(text_line(event.text, "text_delta"))
        else:
            self.writer.write(event_to_json(event))

    def dispatch(self, line: bytes | Overlong) -> None:
        """Answer one input line (exactly one response), then write the events the command caused."""
        if isinstance(line, Overlong):
            parsed: Command | Rejection = overlong_rejection(line.head, self.line_limit)
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
