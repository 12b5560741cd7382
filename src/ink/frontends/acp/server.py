"""The ACP server: read JSON-RPC lines, answer each request once, keep one ``AcpSession`` per session.

Methods (ACP protocol version 1): ``initialize``, ``authenticate`` (nothing to do: keys come from ink's
settings), ``session/new``, ``session/load`` (resume an ink session by id and replay its history),
``session/prompt`` (answered when its turn ends), ``session/cancel`` (a notification),
``session/set_config_option`` and ``session/set_mode`` (``options``), ``session/set_model`` (pre-schema).
A line that is not JSON, not JSON-RPC 2.0, names an unknown method or carries bad params gets the
standard error answer, and the server goes on; a notification never gets an answer, its errors are
logged (stderr).

Ending (``serve`` returns the exit status; reading, signals and stopping are ``StdioServer``'s):
    0    end of input: every run is aborted and settles, its prompts are answered ``cancelled``
    1    reading stdin failed (a bug, logged on stderr): the same clean-up
    141  the editor closed our stdout: the same clean-up, answers dropped
    143  SIGTERM: the same clean-up
    130  a second SIGINT while an abort settles (R21): a forced exit
SIGINT aborts the runs going on (R17); while nothing runs it is ignored with a note on stderr.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from ink import __version__
from ink.ai.models import lookup
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
    encode_message,
    parse_message,
)
from ink.frontends.acp.options import (
    MODE_OPTION,
    BadOption,
    config_options,
    session_state,
    set_mode,
    set_option,
)
from ink.frontends.acp.prompt import InvalidPrompt, read_prompt
from ink.frontends.acp.session import AcpSession
from ink.frontends.stdio import Overlong, StdioServer

if TYPE_CHECKING:
    from ink.app import App

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 64 << 20  # a prompt may embed whole files (ACP "resource" blocks)
CLOSE_TIMEOUT = 5.0  # how long the last messages wait for an editor that stopped reading
DEFERRED = object()  # a handler's result: the answer is sent later (session/prompt)

Handler = Callable[[Call], Any]


class AcpServer(StdioServer):
    """Serves ACP for one editor connection. Create it with the event loop running."""

    def __init__(self, settings: Settings, out_fd: int, *, line_limit: int = MAX_LINE_BYTES) -> None:
        super().__init__(out_fd, line_limit=line_limit, encode=encode_message, close_timeout=CLOSE_TIMEOUT)
        self.settings = settings
        self.peer = Peer(self.writer)
        self.sessions: dict[str, AcpSession] = {}  # by the session's full id
        self.names: dict[str, str] = {}  # every id an editor opened a session by -> its full id
        self.methods: dict[str, Handler] = {
            "initialize": self.initialize,
            "authenticate": lambda call: {},
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/prompt": self.prompt,
            "session/cancel": self.cancel,
            "session/set_model": self.set_model,
            "session/set_config_option": self.set_config_option,
            "session/set_mode": self.set_session_mode,
        }

    async def shut_down(self, reason: str) -> None:
        """Close every session (abort, settle, answer its prompts); then no answer to our requests can
        come any more."""
        results = await asyncio.gather(
            *(s.aclose(reason) for s in self.sessions.values()), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                log.error("closing a session failed", exc_info=result)
        self.peer.close()

    def interrupt(self) -> bool:
        running = [s for s in self.sessions.values() if s.controller.state == "running"]
        for session in running:
            session.controller.interrupt()  # R21: a second one while the abort settles exits 130
        return bool(running)

    # -- one line ----------------------------------------------------------------------------------

    def dispatch(self, line: bytes | Overlong) -> Awaitable[None] | None:
        """Handle one input line: a request gets exactly one answer (now, or later for a prompt)."""
        if isinstance(line, Overlong):
            error = RpcError(PARSE_ERROR, f"Parse error: the line is longer than {self.line_limit} bytes")
            self.peer.fail(None, error)
            return None
        try:
            message = parse_message(line)
        except RpcError as exc:
            if exc.notification:
                log.warning("ignoring a notification: %s", exc.message)
            else:
                self.peer.fail(exc.request_id, exc)
            return None
        if isinstance(message, Reply):
            self.peer.receive(message)
            return None
        return self._call(message)

    async def _call(self, call: Call) -> None:
        handler = self.methods.get(call.method)
        try:
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {call.method}", {"method": call.method})
            result = handler(call)
            if inspect.isawaitable(result):  # opening a session: answered before the next line is read
                result = await result
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
                "promptCapabilities": {"image": self._images(), "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": False},  # stdio is always supported
            },
            "authMethods": [],
            "agentInfo": {"name": "ink", "title": "ink", "version": __version__},
        }

    def _images(self) -> bool:
        """Prompts may hold images when the configured model takes them (the catalogue says)."""
        return lookup(self.settings.model).images

    def _force_exit(self, status: int) -> None:
        """R21: the second interrupt. Write what is pending, then end every process and leave."""
        from ink.wiring import hard_exit_processes

        self.writer.flush_now()
        hard_exit_processes([s.app.processes for s in self.sessions.values()], status)

    async def new_session(self, call: Call) -> dict[str, Any]:
        from ink.wiring import start_app

        settings = self._session_settings(call.params)
        app = await start_app(settings, force_exit=self._force_exit)
        session_id = app.session_id or uuid.uuid4().hex  # --no-session: an id for this process only
        self._open(session_id, session_id, app)
        return {"sessionId": session_id, **session_state(app)}

    async def load_session(self, call: Call) -> dict[str, Any]:
        """Go on with an ink session (by id, or an unambiguous id prefix) and replay its history as
        updates before answering. A session already open in this process is replayed as it is. The id
        the editor loaded it by keeps naming it (the schema's answer has no field for another one): its
        updates carry that id, and requests may name it so or by its full id."""
        requested = _text_param(call.params, "sessionId")
        settings = self._session_settings(call.params)
        full_id = self._full_id(requested, settings)
        session = self.sessions.get(full_id)
        if session is None:
            app = await _resumed_app(settings, full_id, self._force_exit)
            session = self._open(requested, full_id, app)
        self.names[requested] = full_id
        session.replay()
        return session_state(session.app)

    def _open(self, name: str, full_id: str, app: App) -> AcpSession:
        session = AcpSession(name, app, self.peer)
        self.sessions[full_id] = session
        self.names[name] = self.names[full_id] = full_id
        return session

    def prompt(self, call: Call) -> object:
        if call.is_notification:
            log.warning("ignoring session/prompt sent as a notification: it needs an id to be answered")
            return DEFERRED
        session = self._session(call.params)
        try:
            model = session.app.settings.model
            prompt = read_prompt(call.params.get("prompt"), model if lookup(model).images else None)
        except InvalidPrompt as exc:
            raise _invalid(str(exc)) from None
        session.prompt(call.id, prompt.text, prompt.images)
        return DEFERRED

    def cancel(self, call: Call) -> None:
        """A notification; some editors send it as a request, which is answered with null."""
        self._session(call.params).cancel()

    def set_model(self, call: Call) -> dict[str, Any]:
        """Later runs of the session use ``modelId`` (of its provider); a run going on keeps its model
        (R13). The app's own switch, as the TUI's ``/model`` and RPC's ``set_model``."""
        session = self._session(call.params)
        model = _text_param(call.params, "modelId").strip()
        if not model:
            raise _invalid("modelId must not be blank")
        try:
            session.app.switch_model(model)
        except ValueError as exc:  # a model without known prices under a cost limit (R45)
            raise _invalid(str(exc)) from None
        session.update_config(config_options(session.app))
        return {}

    def set_config_option(self, call: Call) -> dict[str, Any]:
        """``model``: later runs use it, a run going on keeps its own (R13); ``mode``: the permission mode
        of the next tool call. Answered with every option's value; a mode change is also announced as
        the session's current mode."""
        session = self._session(call.params)
        try:
            changed = set_option(session.app, call.params)
        except BadOption as exc:
            raise _invalid(str(exc)) from None
        if changed == MODE_OPTION:
            session.update_mode(session.app.settings.permission_mode)
        return {"configOptions": config_options(session.app)}

    def set_session_mode(self, call: Call) -> dict[str, Any]:
        """ACP session modes are ink's permission modes (Shift+Tab in the terminal UI)."""
        session = self._session(call.params)
        try:
            set_mode(session.app, call.params.get("modeId"))
        except BadOption as exc:
            raise _invalid(str(exc)) from None
        session.update_config(config_options(session.app))
        return {}

    # -- helpers -----------------------------------------------------------------------------------

    def _session(self, params: Mapping[str, Any]) -> AcpSession:
        session_id = _text_param(params, "sessionId")
        session = self.sessions.get(self.names.get(session_id, session_id))
        if session is None:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"no session {session_id!r} in this process: create one with session/new or session/load",
                {"sessionId": session_id},
            )
        return session

    def _full_id(self, requested: str, settings: Settings) -> str:
        """The full id ``requested`` names: a session of this process (exact id, else the one id it
        starts), else a session file (``--resume``'s rules). Raises ``RpcError`` (not found, ambiguous,
        or sessions off)."""
        if requested in self.names:
            return self.names[requested]
        live = [session_id for session_id in self.sessions if session_id.startswith(requested)]
        if len(live) == 1:
            return live[0]
        if len(live) > 1:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"session id prefix {requested!r} is ambiguous: {', '.join(sorted(live))}",
                {"sessionId": requested},
            )
        if settings.no_session:
            raise RpcError(INVALID_REQUEST, "sessions are off (--no-session): there is nothing to load")
        return _stored_id(settings, requested)

    def _session_settings(self, params: Mapping[str, Any]) -> Settings:
        """The process's settings with the session's working directory (``cwd``, absolute) and the
        editor's MCP servers (``ink.frontends.acp.mcp``) beside those of the config files."""
        cwd = Path(_text_param(params, "cwd"))
        if not cwd.is_absolute():
            raise _invalid(f"cwd must be an absolute path (got {str(cwd)!r})")
        if not cwd.is_dir():
            raise _invalid(f"cwd {str(cwd)!r} is not a directory")
        settings = replace(self.settings, cwd=cwd.resolve())
        raw = params.get("mcpServers", [])
        if raw == []:
            return settings
        from ink.config.mcp import referenced_secrets
        from ink.frontends.acp.mcp import BadServer, merged, servers_from_acp

        try:
            editor = servers_from_acp(raw)
        except BadServer as exc:
            raise _invalid(str(exc)) from None
        secrets = (*settings.secrets, *referenced_secrets(tuple(editor), {}))
        return replace(settings, mcp_servers=merged(settings.mcp_servers, editor), secrets=secrets)


def _stored_id(settings: Settings, requested: str) -> str:
    """The full id of the session file ``requested`` (an id or a prefix) names."""
    from ink.store import AmbiguousSession, SessionNotFound
    from ink.store.listing import resolve_session

    try:
        return resolve_session(settings.session_dir, settings.cwd, requested).id
    except (SessionNotFound, AmbiguousSession) as exc:
        raise RpcError(RESOURCE_NOT_FOUND, str(exc), {"sessionId": requested}) from None


async def _resumed_app(settings: Settings, session_id: str, force_exit: Callable[[int], None]) -> App:
    from ink.store import AmbiguousSession, SessionError, SessionNotFound
    from ink.wiring import SessionChoice, start_app

    try:
        return await start_app(settings, session=SessionChoice(resume_id=session_id), force_exit=force_exit)
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
