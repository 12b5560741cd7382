"""The MCP servers of one app: started together, listed, their tools offered, all ended on close.

    manager = McpManager(settings.mcp_servers, settings.env, settings.cwd, approvals)
    await manager.start()              # every server in parallel, each within its start-up timeout
    tools = manager.tools()            # the ready servers' tools, as ink tools
    await manager.aclose(kill_delay)   # bounded; no server process outlives it (R35)

A server that is disabled, awaits approval, fails to start, crashes or hangs affects only its own tools:
``start`` never raises, and each server's state and error are in ``statuses``. The MCP SDK is imported
only by ``start``, and only when at least one server is to be started.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ink.config.mcp import McpServerSpec
from ink.mcp.model import ServerStatus
from ink.mcp.names import tool_name
from ink.mcp.tool import McpTool
from ink.mcp.trust import McpApprovals
from ink.tools.processes import DEFAULT_KILL_DELAY, ProcessEntry, ProcessRegistry

if TYPE_CHECKING:
    from ink.mcp.connection import ServerConnection

log = logging.getLogger(__name__)


class McpManager:
    def __init__(
        self,
        specs: Sequence[McpServerSpec],
        env: Mapping[str, str],
        cwd: str | os.PathLike[str],
        processes: ProcessRegistry,
        approvals: McpApprovals | None = None,
    ) -> None:
        self.specs = tuple(specs)
        self.processes = processes
        self._env = env
        self._cwd = os.fspath(cwd)
        self._approvals = approvals
        self._connections: dict[str, ServerConnection] = {}
        self._started = False
        self._missing_sdk: str | None = None

    def _startable(self, spec: McpServerSpec) -> bool:
        return spec.enabled and (self._approvals is None or self._approvals.approved(spec))

    async def start(self) -> None:
        """Start every enabled, approved server at once; returns when each is ready or failed."""
        if self._started:
            return
        self._started = True
        wanted = [spec for spec in self.specs if self._startable(spec)]
        if not wanted:
            return
        try:
            from ink.mcp.connection import ServerConnection
        except ImportError as exc:  # the SDK is an optional extra
            self._missing_sdk = f"the MCP SDK is not installed ({exc.name}): pip install 'ink-agent[mcp]'"
            log.warning("MCP servers are configured, but %s", self._missing_sdk)
            return
        for spec in wanted:
            self._connections[spec.name] = ServerConnection(spec, self._env, self._cwd, self.processes)
        await asyncio.gather(*(conn.start() for conn in self._connections.values()))

    async def start_server(self, spec: McpServerSpec) -> None:
        """Start one more server (one the user just approved); like ``start``, never raises."""
        if spec.name in self._connections or not self._startable(spec):
            return
        from ink.mcp.connection import ServerConnection

        conn = self._connections[spec.name] = ServerConnection(spec, self._env, self._cwd, self.processes)
        await conn.start()

    def tools(self, server: str | None = None) -> list[McpTool]:
        """The tools of the servers that are ready (or of ``server`` alone), in configuration order."""
        found: list[McpTool] = []
        for conn in self._connections.values():
            if conn.state == "ready" and server in (None, conn.name):
                found += [McpTool(remote, conn) for remote in conn.tools]
        return found

    def spared(self) -> list[ProcessEntry]:
        """The server processes: the run's reaper must leave them alone (they live as long as the app)."""
        return [conn.process for conn in self._connections.values() if conn.process is not None]

    def statuses(self) -> list[ServerStatus]:
        return [self._status(spec) for spec in self.specs]

    def _status(self, spec: McpServerSpec) -> ServerStatus:
        conn = self._connections.get(spec.name)
        if conn is not None:
            state, error = conn.state, conn.error
            tools = tuple(tool_name(spec.name, remote.name) for remote in conn.tools)
        elif not spec.enabled:
            state, error, tools = "disabled", None, ()
        elif self._missing_sdk is not None and self._startable(spec):
            state, error, tools = "failed", self._missing_sdk, ()
        elif not self._startable(spec):
            state, tools = "needs_approval", ()
            error = f"declared by the project ({spec.where}); approve it with: ink mcp approve {spec.name}"
        else:
            state, error, tools = "starting", None, ()
        return ServerStatus(spec.name, state, spec.transport, spec.target(), spec.origin, error, tools)

    async def aclose(self, kill_delay: float = DEFAULT_KILL_DELAY) -> None:
        """Close every connection; a server process not gone after ``kill_delay`` is terminated (TERM,
        then KILL), and survivors are logged. Idempotent."""
        closing = [asyncio.ensure_future(conn.aclose()) for conn in self._connections.values()]
        if closing:
            await asyncio.wait(closing, timeout=kill_delay)
        ended = await self.processes.terminate(self.spared(), kill_delay)
        for survivor in ended.survivors:
            pid, command, reason = survivor.pid, survivor.command, survivor.reason
            log.warning("MCP server process %s (%s) is still running: %s", pid, command, reason)
        if closing:
            await asyncio.wait(closing)
