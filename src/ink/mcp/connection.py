"""One MCP server: its connection, its state, its lists, its calls, on ink's own JSON-RPC client.

    conn = ServerConnection(spec, env, cwd, processes, host)
    await conn.start()                 # never raises: ``state`` is ready or failed, ``error`` says why
    result = await conn.call("search", {"q": "x"}, on_progress)
    await conn.aclose()

Start-up is the MCP handshake (``initialize`` with ink's name, version and capabilities, then
``notifications/initialized``) and the lists, within ``startup_timeout``. ink declares what it does:
``roots`` (the workspace, ``host.roots``) and ``elicitation`` (form questions to the user,
``host.elicit``, declined where nobody can answer). A ``list_changed`` notification makes it read that
list again and tell the host, so the next model request sees the new tools.

States: ``starting`` -> ``ready`` -> ``closed``, or ``failed``: did not start in time, could not be
spawned or reached, exited, or sent a message that belongs to no call it could name. A failed server's
calls fail at once with the reason (and the tail of its stderr). A bad message that names its call
fails that call alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ink import __version__
from ink.agent.tasks import Tasks
from ink.ai.printable import printable
from ink.config.errors import ConfigError
from ink.config.mcp import McpServerSpec, expand
from ink.mcp.listing import read_prompts, read_resources, read_tools
from ink.mcp.model import RemotePrompt, RemoteResource, RemoteTool, ServerState
from ink.mcp.rpc import ConnectionLost, Progress, RemoteError, RequestTimeout, RpcSession, SendFailed
from ink.mcp.stdio import INHERITED_ENV, StdioTransport
from ink.mcp.wire import BadMessage
from ink.tools.processes import ProcessEntry, ProcessRegistry

if TYPE_CHECKING:
    from ink.mcp.http import HttpTransport
    from ink.sandbox import Confinement

log = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-11-25"
KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MAX_PAGES = 50  # a list whose pages never end cannot hang the start-up
LIST_TIMEOUT = 30.0  # seconds for one page of a list read again after list_changed
CLOSE_BOUND = 2.0


class ServerUnavailable(Exception):
    """The server is not ready (still starting, failed, stopped): ``str`` says why, for the model."""


class CallFailed(Exception):
    """The call failed on its own (an error answer, a timeout, an unreadable answer); the server is fine."""


class McpHost(Protocol):
    """What a server may ask of ink, and who hears that its lists changed."""

    def roots(self) -> list[dict[str, str]]: ...

    async def elicit(self, server: str, message: str, schema: Mapping[str, Any]) -> dict[str, Any]: ...

    def changed(self, server: str) -> None: ...

    def confinement(self, spec: McpServerSpec) -> Confinement | None:
        """The sandbox a server ink starts runs in (None: none); raises ``ServerUnavailable`` when it
        asks for one there is not (R39)."""
        ...


class ServerConnection:
    def __init__(
        self,
        spec: McpServerSpec,
        env: Mapping[str, str],
        cwd: str,
        processes: ProcessRegistry,
        host: McpHost,
    ) -> None:
        self.spec = spec
        self.state: ServerState = "starting"
        self.error: str | None = None
        self.tools: tuple[RemoteTool, ...] = ()
        self.prompts: tuple[RemotePrompt, ...] = ()
        self.resources: tuple[RemoteResource, ...] = ()
        self.notes: dict[str, list[str]] = {}  # per list: what was left out and why
        self.capabilities: Mapping[str, Any] = {}
        self.instructions = ""
        self._env = env
        self._cwd = cwd
        self._processes = processes
        self._host = host
        self._tasks = Tasks()
        self._transport: StdioTransport | HttpTransport | None = None
        self._rpc = RpcSession(self._send, self._answer, self._notified, self._tasks)
        self._relisting: dict[str, asyncio.Task[None]] = {}
        self._stale: set[str] = set()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def process(self) -> ProcessEntry | None:
        return self._transport.process if isinstance(self._transport, StdioTransport) else None

    async def start(self) -> None:
        """Connect, introduce ink and read the lists, within the start-up timeout. Never raises."""
        try:
            async with asyncio.timeout(self.spec.startup_timeout):
                await self._connect()
        except TimeoutError:
            self._fail(f"did not start within {self.spec.startup_timeout:g} s (startup_timeout)")
        except asyncio.CancelledError:
            self._fail("its start was cancelled")
            raise
        except Exception as exc:  # every failure is this server's alone
            self._fail(self._describe(exc))
        else:
            if self.state == "starting":
                self.state = "ready"

    async def _connect(self) -> None:
        transport = self._transport = self._make_transport()
        await transport.open(self._rpc.receive, self._unreadable, self._lost)
        answer = await self._rpc.request("initialize", self._introduction())
        if not isinstance(answer, Mapping):
            raise ConnectionError("its answer to initialize is not an object")
        version = answer.get("protocolVersion")
        if version not in KNOWN_VERSIONS:
            raise ConnectionError(
                f"it speaks MCP version {version!r}, which ink does not (ink: {PROTOCOL_VERSION})"
            )
        capabilities = answer.get("capabilities")
        self.capabilities = capabilities if isinstance(capabilities, Mapping) else {}
        instructions = answer.get("instructions")
        self.instructions = instructions[:4000] if isinstance(instructions, str) else ""
        if not isinstance(transport, StdioTransport):
            transport.protocol_version = version
        await self._rpc.notify("notifications/initialized")
        if not isinstance(transport, StdioTransport):
            transport.listen()
        for kind in ("tools", "prompts", "resources"):
            if kind in self.capabilities:
                await self._read_list(kind, self.spec.startup_timeout)

    def _introduction(self) -> dict[str, Any]:
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"roots": {"listChanged": False}, "elicitation": {"form": {}}},
            "clientInfo": {"name": "ink", "title": "ink", "version": __version__},
        }

    def _make_transport(self) -> StdioTransport | HttpTransport:
        spec = self.spec
        if spec.url is not None:
            from ink.mcp.http import HttpTransport  # the HTTP client, only for an HTTP server

            return HttpTransport(spec.url, self._expand(spec.headers), self._env)
        assert spec.command is not None
        env = {key: self._env[key] for key in INHERITED_ENV if key in self._env}
        env.update(self._expand(spec.env))
        cwd = os.path.join(self._cwd, spec.cwd) if spec.cwd else self._cwd
        confined = self._host.confinement(spec)
        return StdioTransport(spec.command, spec.args, env, cwd, self._processes, spec.target(), confined)

    def _expand(self, values: Mapping[str, str]) -> dict[str, str]:
        if self.spec.origin == "client":  # the editor's values are literal
            return dict(values)
        try:
            return expand(values, self._env)
        except ConfigError as exc:
            raise ServerUnavailable(f"{self.spec.where}: {exc}") from None

    async def _read_list(self, kind: str, timeout: float) -> None:
        entries: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._rpc.request(
                f"{kind}/list", {"cursor": cursor} if cursor else {}, timeout=timeout
            )
            found = page.get(kind) if isinstance(page, Mapping) else None
            entries += found if isinstance(found, list) else []
            cursor = page.get("nextCursor") if isinstance(page, Mapping) else None
            if not isinstance(cursor, str) or not cursor:
                break
        notes: list[str] = []
        if kind == "tools":
            self.tools = read_tools(self.name, entries, notes)
        elif kind == "prompts":
            self.prompts = read_prompts(self.name, entries, notes)
        else:
            self.resources = read_resources(self.name, entries, notes)
        self.notes[kind] = notes
        for note in notes:
            log.info("MCP server %s: %s", self.name, note)  # shown in /mcp, ink mcp list and a notice

    async def call(self, tool: str, args: Mapping[str, Any], progress: Progress) -> Mapping[str, Any]:
        """Call ``tool``; its result object. Raises ``ServerUnavailable`` (not ready, or it stopped during
        the call: the server is then ``failed``) or ``CallFailed``. Cancelling sends MCP cancellation."""
        params = {"name": tool, "arguments": dict(args)}
        result = await self.request("tools/call", params, self.spec.call_timeout, progress)
        if not isinstance(result, Mapping) or not isinstance(result.get("content", []), list):
            raise CallFailed(f"the MCP server {self.name} answered with something that is not a tool result")
        await self._tools_listed()
        return result

    async def _tools_listed(self) -> None:
        """A tool list the server announced as changed (before its answer: a call that adds a tool says so
        first) is read before the call's result is handed on, so the model's next request offers it.
        Bounded by the reading's own timeout; a failed reading is logged by it."""
        reading = self._relisting.get("tools")
        if reading is not None and not reading.done():
            await asyncio.wait((reading,))

    async def request(
        self, method: str, params: Mapping[str, Any], timeout: float, progress: Progress | None = None
    ) -> Any:
        """One request to a ready server, its failures in the two kinds above."""
        if self.state != "ready":
            raise ServerUnavailable(self.problem())
        try:
            return await self._rpc.request(method, params, timeout=timeout, progress=progress)
        except RemoteError as exc:
            said = printable(exc.message[:2000])
            raise CallFailed(f"the MCP server {self.name} answered: {said}") from None
        except SendFailed as exc:
            raise CallFailed(f"the call to the MCP server {self.name} failed: {exc}") from None
        except RequestTimeout:
            raise CallFailed(
                f"the MCP server {self.name} neither answered nor reported progress within {timeout:g} s "
                "(call_timeout); it was told to cancel"
            ) from None
        except (ConnectionLost, ConnectionError, OSError):
            raise ServerUnavailable(self.problem()) from None

    def problem(self) -> str:
        """Why this server's tools cannot be called now, in one sentence for the model and the user."""
        if self.state == "starting":
            return f"the MCP server {self.name} is still starting"
        if self.state == "closed":
            return f"the MCP server {self.name} was closed"
        return f"the MCP server {self.name} is not available: {self.error or 'it stopped'}"

    # -- what the server sends -------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        transport = self._transport
        if transport is None:
            raise ConnectionLost("not connected")
        await transport.send(message)

    def _unreadable(self, bad: BadMessage) -> None:
        if self._rpc.receive_bad(bad):
            log.warning("MCP server %s: a call failed: %s", self.name, bad.problem)
            return
        self._lost(f"{bad.problem}, for no call ink could tell")

    def _lost(self, reason: str) -> None:
        if self.state in ("starting", "ready"):
            self._fail(self._with_stderr(reason))
        self._rpc.close(self.error or reason)

    def _notified(self, method: str, params: Mapping[str, Any]) -> None:
        kind = method.removeprefix("notifications/").removesuffix("/list_changed")
        if method.endswith("/list_changed") and kind in ("tools", "prompts", "resources"):
            self._relist(kind)
        elif method == "notifications/message":
            log.info("MCP server %s says: %s", self.name, str(params.get("data"))[:500])

    def _relist(self, kind: str) -> None:
        """Read ``kind`` again; a change announced while reading is read once more afterwards."""
        running = self._relisting.get(kind)
        if running is not None and not running.done():
            self._stale.add(kind)
            return
        self._relisting[kind] = self._tasks.spawn(self._read_again(kind), f"MCP {self.name} {kind}/list")

    async def _read_again(self, kind: str) -> None:
        while True:
            self._stale.discard(kind)
            try:
                await self._read_list(kind, LIST_TIMEOUT)
            except (RemoteError, RequestTimeout, ConnectionLost, SendFailed, OSError) as exc:
                log.warning("MCP server %s: reading its %s again failed: %s", self.name, kind, exc)
                return
            self._host.changed(self.name)
            if kind not in self._stale:
                return

    async def _answer(self, method: str, params: Mapping[str, Any]) -> Any:
        if method == "roots/list":
            return {"roots": self._host.roots()}
        if method == "elicitation/create":
            return await self._elicit(params)
        raise RemoteError(-32601, f"ink does not offer {method}")

    async def _elicit(self, params: Mapping[str, Any]) -> dict[str, Any]:
        mode = params.get("mode", "form")
        message, schema = params.get("message"), params.get("requestedSchema")
        if mode != "form":
            raise RemoteError(-32602, f"ink answers form elicitations only, not {mode!r}")
        if not isinstance(message, str) or not isinstance(schema, Mapping):
            raise RemoteError(-32602, "an elicitation needs a message and a requestedSchema")
        return await self._host.elicit(self.name, message, schema)

    # -- failures and the end --------------------------------------------------------------------

    def _fail(self, error: str) -> None:
        if self.state in ("starting", "ready"):
            self.state, self.error = "failed", error
            log.warning("MCP server %s: %s", self.name, error)

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, FileNotFoundError):
            text = f"cannot run {self.spec.command!r}: no such program (check command in {self.spec.where})"
        elif isinstance(exc, PermissionError):
            text = f"cannot run {self.spec.command!r}: permission denied"
        elif isinstance(exc, ConnectionLost | ServerUnavailable):
            return self.error or str(exc)
        elif isinstance(exc, RemoteError):
            text = f"it refused to start: {printable(exc.message[:500])}"
        elif isinstance(exc, OSError) and exc.strerror:
            text = f"{type(exc).__name__}: {exc.strerror}"
        else:
            text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        return self._with_stderr(text)

    def _with_stderr(self, text: str) -> str:
        tail = self._transport.stderr_tail() if self._transport is not None else ""
        return f"{text}; its stderr ends: {printable(tail)}" if tail else text

    async def aclose(self) -> None:
        """End the connection: a stdio server's stdin is closed (the process registry ends what is
        left), an HTTP session is deleted. Idempotent, bounded."""
        if self.state in ("starting", "ready"):
            self.error = "closed while starting" if self.state == "starting" else None
            self.state = "closed"
        self._rpc.close(f"the MCP server {self.name} was closed")
        await self._tasks.aclose(CLOSE_BOUND)
        if self._transport is not None:
            await self._transport.aclose()
