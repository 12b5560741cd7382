"""One MCP server: its connection through the official SDK, its state, its tools, its calls.

The SDK's ``Client`` is an async context manager whose cancel scopes belong to the task that entered it,
so each server gets one task of its own (``_serve``) that connects, lists the tools, reports ready and
then holds the connection open until ``aclose``. Calls are made from the run's tasks; cancelling one
makes the SDK send ``notifications/cancelled`` for it (MCP cancellation) before the cancel propagates.

States: ``starting`` -> ``ready`` -> ``closed``, or ``failed`` (did not start within its timeout, could
not be spawned or reached, or stopped later: its calls then fail at once with that reason). A stdio
server runs in its own process group with ink's process token, registered in the ``ProcessRegistry``
given (R35), so no server outlives ink; its stderr goes to a temporary file whose tail explains a crash.

This module imports the MCP SDK: import it only when a server is configured (``ink.mcp.manager`` does).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, Any

import anyio
import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from ink.config.errors import ConfigError
from ink.config.mcp import McpServerSpec, expand
from ink.mcp.model import RemoteTool, ServerState
from ink.tools.processes import TOKEN_ENV, ProcessEntry, ProcessRegistry

log = logging.getLogger(__name__)

MAX_TOOL_PAGES = 50  # a server whose tools/list never ends cannot hang the start-up
STDERR_TAIL = 600  # characters of a crashed server's stderr quoted in its error


class ServerUnavailable(Exception):
    """The server is not ready (still starting, failed, stopped): ``str`` says why, for the model."""


class CallFailed(Exception):
    """The server answered the call with a protocol error (unknown tool, invalid arguments, ...)."""


class ServerConnection:
    def __init__(
        self, spec: McpServerSpec, env: Mapping[str, str], cwd: str, processes: ProcessRegistry
    ) -> None:
        self.spec = spec
        self.state: ServerState = "starting"
        self.error: str | None = None
        self.tools: tuple[RemoteTool, ...] = ()
        self._env = env
        self._cwd = cwd
        self._processes = processes
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr: IO[str] | None = None
        self.process: ProcessEntry | None = None  # the stdio server's, once spawned
        self._scope: anyio.CancelScope | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    async def start(self) -> None:
        """Connect and list the tools, within the spec's start-up timeout. Never raises: a failure is
        the state ``failed`` with ``error`` saying why."""
        self._task = asyncio.create_task(self._serve(), name=f"mcp server {self.name}")
        await self._settled.wait()

    async def _serve(self) -> None:
        try:
            # One cancel scope around the whole connection, so the SDK's own scopes nest inside it; its
            # deadline is the start-up timeout, lifted once the server is ready.
            with anyio.CancelScope(deadline=anyio.current_time() + self.spec.startup_timeout) as scope:
                self._scope = scope
                async with AsyncExitStack() as stack:
                    client = await stack.enter_async_context(Client(await self._transport(stack)))
                    self.tools = await self._list_tools(client)
                    scope.deadline = math.inf
                    self._client, self.state = client, "ready"
                    self._settled.set()
                    await self._stop.wait()
            if scope.cancelled_caught and self.state == "starting":
                self._fail(f"did not start within {self.spec.startup_timeout:g} s (startup_timeout)")
        except (Exception, asyncio.CancelledError) as exc:  # every failure is this server's alone
            self._fail(self._describe(exc))
        finally:
            self._client = None
            if self.state == "ready":
                self.state = "closed"
            self._settled.set()
            if self._stderr is not None:
                self._stderr.close()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        spec = self.spec
        if spec.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=self._expand(spec.headers)))
            return streamable_http_client(spec.url, http_client=http)
        token = ProcessRegistry.new_token()
        env = {**self._expand(spec.env), TOKEN_ENV: token}
        cwd = os.path.join(self._cwd, spec.cwd) if spec.cwd else self._cwd
        assert spec.command is not None
        params = StdioServerParameters(command=spec.command, args=list(spec.args), env=env, cwd=cwd)
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        return self._registered(stdio_client(params, errlog=self._stderr), token)

    @asynccontextmanager
    async def _registered(self, transport: Any, token: str) -> AsyncIterator[Any]:
        """The SDK's stdio transport, with its server process registered once spawned (R35): the SDK
        does not expose the pid, so it is found among ink's children by the token only it carries."""
        async with transport as streams:
            pid = _child_with_token(token)
            if pid is not None:
                self.process = self._processes.register(pid, self.spec.target(), token)
            yield streams

    def _expand(self, values: Mapping[str, str]) -> dict[str, str]:
        if self.spec.origin == "client":  # the editor's values are literal
            return dict(values)
        try:
            return expand(values, self._env)
        except ConfigError as exc:
            raise ServerUnavailable(f"{self.spec.where}: {exc}") from None

    async def _list_tools(self, client: Client) -> tuple[RemoteTool, ...]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        return tuple(_remote(self.name, tool) for tool in tools)

    async def call(
        self, tool: str, args: Mapping[str, Any], progress: ProgressFnT
    ) -> mcp_types.CallToolResult:
        """Call ``tool``. Raises ``ServerUnavailable`` (not ready, or it stopped during the call: the
        server is then ``failed``) or ``CallFailed`` (a protocol error answer). Cancelling the awaiting
        task sends MCP cancellation for the call."""
        client = self._client
        if client is None or self.state != "ready":
            raise ServerUnavailable(self.problem())
        try:
            return await client.call_tool(tool, dict(args), progress_callback=progress)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self._fail(self._describe(exc))
                raise ServerUnavailable(self.problem()) from None
            raise CallFailed(f"the MCP server {self.name} answered: {exc.message}") from None

    def problem(self) -> str:
        """Why this server's tools cannot be called now, in one sentence for the model and the user."""
        if self.state == "starting":
            return f"the MCP server {self.name} is still starting"
        if self.state == "closed":
            return f"the MCP server {self.name} was closed"
        return f"the MCP server {self.name} is not available: {self.error or 'it stopped'}"

    def _fail(self, error: str) -> None:
        if self.state in ("starting", "ready"):
            self.state, self.error = "failed", error
            log.warning("MCP server %s: %s", self.name, error)
        self._settled.set()

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
            text = "the server closed the connection"
        elif isinstance(exc, asyncio.CancelledError):
            text = "its start was cancelled"
        elif isinstance(exc, FileNotFoundError):
            text = f"cannot run {self.spec.command!r}: no such program (check command in {self.spec.where})"
        elif isinstance(exc, ServerUnavailable):
            text = str(exc)
        else:
            text = _exception_text(exc)
        tail = self._stderr_tail()
        return f"{text}; its stderr ends: {tail}" if tail else text

    def _stderr_tail(self) -> str:
        stream = self._stderr
        if stream is None or stream.closed:
            return ""
        try:
            stream.flush()
            stream.seek(0)
            text = stream.read()[-STDERR_TAIL:]
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        return " | ".join(lines[-2:])

    async def aclose(self) -> None:
        """End the connection (the SDK closes stdin, then ends the process group). Idempotent; bounded by
        the SDK's own shutdown limits, and ``ProcessRegistry.terminate_all`` ends what is left."""
        self._stop.set()
        if self.state == "starting" and self._scope is not None:
            self._scope.cancel()  # closing while it starts: no wait for the start-up timeout
            self.state, self.error = "closed", "closed while starting"
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task})


def _exception_text(exc: BaseException) -> str:
    """The innermost useful message of ``exc`` (anyio groups wrap the real failure)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
        return "the server closed the connection"
    return text.splitlines()[0][:300]


def _remote(server: str, tool: mcp_types.Tool) -> RemoteTool:
    hints = tool.annotations
    return RemoteTool(
        server=server,
        name=tool.name,
        description=tool.description or tool.title or "",
        schema=dict(tool.input_schema),
        read_only=bool(hints and hints.read_only_hint),
        destructive=hints.destructive_hint if hints else None,
        title=tool.title or (hints.title if hints else None),
        open_world=hints.open_world_hint if hints else None,
    )


def _child_with_token(token: str) -> int | None:
    import psutil

    for child in psutil.Process().children():
        try:
            if child.environ().get(TOKEN_ENV) == token:
                return child.pid
        except (psutil.Error, OSError):
            continue
    return None
