"""The ACP server: read JSON-RPC lines, answer each request once, keep one ``AcpSession`` per session.

Methods (ACP protocol version 1): ``initialize``, ``authenticate`` (nothing to do: keys come from ink's
settings), ``session/new``, ``session/load`` (resume an ink session by id and replay its history),
``session/prompt`` (answered when its turn ends), ``session/cancel`` (a notification). A line that is
not JSON, not JSON-RPC 2.0, names an unknown method or carries bad params gets the standard error
answer, and the server goes on; a notification never gets an answer, its errors are logged (stderr).

Ending (``serve`` returns the exit status):
    0    end of input: every run is aborted and settles, its prompts are answered ``cancelled``
    141  the editor closed our stdout: the same clean-up, answers dropped
    143  SIGTERM: the same clean-up
    130  a second SIGINT while an abort settles (R21): a forced exit
SIGINT aborts the runs going on (R17); while nothing runs it is ignored with a note on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ink import __version__
from ink.config import Settings
from ink.frontends.acp.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    Call,
    Peer,
    Reply,
    RpcError,
    parse_message,
)
from ink.frontends.acp.prompt import InvalidPrompt, prompt_text
from ink.frontends.acp.session import AcpSession
from ink.frontends.acp.wire import MAX_LINE_BYTES, LineWriter, Overlong, read_lines

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
EXIT_OK, EXIT_PIPE_CLOSED, EXIT_TERMINATED = 0, 141, 143
END_OF_INPUT, TERMINATED, STDOUT_CLOSED = "end of input", "terminated", "stdout closed"
DEFERRED = object()  # a handler's result: the answer is sent later (session/prompt)

Handler = Callable[[Call], Any]


class AcpServer:
    """Serves ACP for one editor connection. Create it with the event loop running."""

    def __init__(self, settings: Settings, out_fd: int, *, line_limit: int = MAX_LINE_BYTES) -> None:
        self.settings = settings
        self.line_limit = line_limit
        self.writer = LineWriter(out_fd, on_closed=lambda: self._stop(EXIT_PIPE_CLOSED, STDOUT_CLOSED))
        self.peer = Peer(self.writer)
        self.sessions: dict[str, AcpSession] = {}
        self.methods: dict[str, Handler] = {
            "initialize": self.initialize,
            "authenticate": lambda call: {},
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/prompt": self.prompt,
            "session/cancel": self.cancel,
        }
        self._stopped = asyncio.Event()
        self._status = EXIT_OK
        self._reason = END_OF_INPUT

    async def serve(self, in_fd: int, *, signals: bool = True) -> int:
        """Serve until end of input, SIGTERM or a closed stdout; then close every session (abort, settle,
        answer) and write the last lines. Returns the exit status."""
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
            await self._close_sessions()
            self.peer.close()
            if signals:
                self._remove_signals()
            await self.writer.aclose()
        return self._status

    async def _read(self, in_fd: int) -> None:
        async for line in read_lines(in_fd, self.line_limit):
            self.dispatch(line)

    async def _close_sessions(self) -> None:
        results = await asyncio.gather(
            *(s.aclose(self._reason) for s in self.sessions.values()), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                log.error("closing a session failed", exc_info=result)

    # -- one line ----------------------------------------------------------------------------------

    def dispatch(self, line: bytes | Overlong) -> None:
        """Handle one input line: a request gets exactly one answer (now, or later for a prompt)."""
        if isinstance(line, Overlong):
            error = RpcError(PARSE_ERROR, f"Parse error: the line is longer than {self.line_limit} bytes")
            self.peer.fail(None, error)
            return
        if not line.strip():
            return
        try:
            message = parse_message(line)
        except RpcError as exc:
            if exc.notification:
                log.warning("ignoring a notification: %s", exc.message)
            else:
                self.peer.fail(exc.request_id, exc)
            return
        if isinstance(message, Reply):
            self.peer.receive(message)
        else:
            self._call(message)

    def _call(self, call: Call) -> None:
        handler = self.methods.get(call.method)
        try:
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {call.method}", {"method": call.method})
            result = handler(call)
        except RpcError as exc:
            error = exc
        except Exception as exc:  # a bug in one request must not end the process
            log.exception("%s failed", call.method)
            error = RpcError(INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")
        else:
            if not call.is_notification and result is not DEFERRED:
                self.peer.respond(call.id, result)
            return
        if call.is_notification:
            log.warning("notification %s failed: %s", call.method, error.message)
        else:
            self.peer.fail(call.id, error)

    # -- methods -----------------------------------------------------------------------------------

    def initialize(self, call: Call) -> dict[str, Any]:
        version = call.params.get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            raise _invalid("protocolVersion must be an integer")
        return {
            "protocolVersion": PROTOCOL_VERSION,  # the only one ink speaks; the editor decides
            "agentCapabilities": {
                "loadSession": not self.settings.no_session,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": False, "sse": False},
            },
            "authMethods": [],
            "agentInfo": {"name": "ink", "title": "ink", "version": __version__},
        }

    def new_session(self, call: Call) -> dict[str, Any]:
        from ink.wiring import build_app

        settings = self._session_settings(call.params)
        app = build_app(settings)
        session_id = app.session_id or uuid.uuid4().hex  # --no-session: an id for this process only
        self.sessions[session_id] = AcpSession(session_id, app, self.peer)
        return {"sessionId": session_id}

    def load_session(self, call: Call) -> dict[str, Any]:
        """Go on with an ink session (by id, or an unambiguous id prefix) and replay its history as
        updates before answering. A session already open in this process is replayed as it is."""
        session_id = _text_param(call.params, "sessionId")
        settings = self._session_settings(call.params)
        session = self.sessions.get(session_id) or self._live(session_id)
        if session is None:
            if settings.no_session:
                raise RpcError(INVALID_REQUEST, "sessions are off (--no-session): there is nothing to load")
            session = AcpSession(session_id, _resumed_app(settings, session_id), self.peer)
            self.sessions[session_id] = session
        session.replay()
        return {}

    def prompt(self, call: Call) -> object:
        if call.is_notification:
            log.warning("ignoring session/prompt sent as a notification: it needs an id to be answered")
            return DEFERRED
        session = self._session(call.params)
        try:
            text = prompt_text(call.params.get("prompt"))
        except InvalidPrompt as exc:
            raise _invalid(str(exc)) from None
        session.prompt(call.id, text)
        return DEFERRED

    def cancel(self, call: Call) -> None:
        """A notification; some editors send it as a request, which is answered with null."""
        self._session(call.params).cancel()

    # -- helpers -----------------------------------------------------------------------------------

    def _session(self, params: Mapping[str, Any]) -> AcpSession:
        session_id = _text_param(params, "sessionId")
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"no session {session_id!r} in this process: create one with session/new or session/load",
                {"sessionId": session_id},
            )
        return session

    def _live(self, session_id: str) -> AcpSession | None:
        """A session of this process by its ink id (it may have been opened under an id prefix)."""
        return next((s for s in self.sessions.values() if s.app.session_id == session_id), None)

    def _session_settings(self, params: Mapping[str, Any]) -> Settings:
        """The process's settings with the session's working directory (``cwd``, absolute). MCP servers
        are accepted and not connected: ink has no MCP client (its capabilities say so)."""
        cwd = Path(_text_param(params, "cwd"))
        if not cwd.is_absolute():
            raise _invalid(f"cwd must be an absolute path (got {str(cwd)!r})")
        if not cwd.is_dir():
            raise _invalid(f"cwd {str(cwd)!r} is not a directory")
        servers = params.get("mcpServers", [])
        if not isinstance(servers, list):
            raise _invalid("mcpServers must be a list")
        if servers:
            log.warning("ink does not connect to MCP servers yet: ignoring %d of them", len(servers))
        return replace(self.settings, cwd=cwd.resolve())

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
        running = [s for s in self.sessions.values() if s.controller.state == "running"]
        for session in running:
            session.controller.interrupt()  # R21: a second one while the abort settles exits 130
        if not running:
            with contextlib.suppress(OSError, ValueError):
                print("ink: SIGINT: nothing to interrupt (end the input to quit)", file=sys.stderr)


def _resumed_app(settings: Settings, session_id: str) -> Any:
    from ink.store import AmbiguousSession, SessionError, SessionNotFound
    from ink.wiring import SessionChoice, build_app

    try:
        return build_app(settings, session=SessionChoice(resume_id=session_id))
    except (SessionNotFound, AmbiguousSession) as exc:
        raise RpcError(RESOURCE_NOT_FOUND, str(exc), {"sessionId": session_id}) from None
    except SessionError as exc:  # damaged, or open in another ink process
        raise RpcError(INTERNAL_ERROR, str(exc), {"sessionId": session_id}) from None


def _text_param(params: Mapping[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise _invalid(f"{name} must be a non-empty string")
    return value


def _invalid(problem: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {problem}")
