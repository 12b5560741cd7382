"""The MCP servers of one app: started together, listed, their tools offered, all ended on close.

    manager = McpManager(settings.mcp_servers, settings.env, settings.cwd, processes, approvals)
    await manager.start()              # every server in parallel, each within its start-up timeout
    tools = manager.tools()            # the ready servers' tools, as ink tools
    await manager.aclose(kill_delay)   # bounded; no server process outlives it (R35)

A server that is disabled, awaits approval, fails to start, crashes or hangs affects only its own tools:
``start`` never raises, and each server's state and error are in ``statuses``.

The manager is the servers' host (``connection.McpHost``): it gives them the workspace as their root,
passes their questions to ``elicitor`` (declined when nobody can answer), and when a server's list
changes it names the tools again and calls ``on_change``. Tool names are unique across servers: two tools
that would get the same ``mcp__SERVER__TOOL`` name are both refused, with a note naming both, so a
permission rule for one never covers the other. An ``McpTool`` keeps its identity for the session: a
tool the server lists again with a new schema is the same object with the new description.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from ink.config.mcp import McpServerSpec
from ink.mcp.connection import ServerConnection, ServerUnavailable
from ink.mcp.model import RemotePrompt, RemoteResource, RemoteTool, ServerStatus
from ink.mcp.names import tool_name
from ink.mcp.tool import McpTool
from ink.mcp.trust import McpApprovals
from ink.sandbox import Confinement, Sandbox
from ink.tools.processes import DEFAULT_KILL_DELAY, ProcessEntry, ProcessRegistry

log = logging.getLogger(__name__)

Elicitor = Callable[[str, str, Mapping[str, Any]], Awaitable[dict[str, Any]]]
"""Asks the user a server's question: ``(server, message, schema)`` -> ``{action, content?}``."""


class McpManager:
    def __init__(
        self,
        specs: Sequence[McpServerSpec],
        env: Mapping[str, str],
        cwd: str | os.PathLike[str],
        processes: ProcessRegistry,
        approvals: McpApprovals | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        """``sandbox``: what a server whose table says ``sandbox = true`` runs in (the app's, R41)."""
        self.specs = tuple(specs)
        self._sandbox = sandbox
        self.processes = processes
        self.elicitor: Elicitor | None = None
        self.on_change: Callable[[str], None] | None = None
        self._env = env
        self._cwd = os.fspath(cwd)
        self._approvals = approvals
        self._connections: dict[str, ServerConnection] = {}
        self._tools: dict[str, McpTool] = {}  # every MCP tool offered this session, by the model's name
        self._clashes: dict[str, list[str]] = {}  # per server: its tools refused for a clash of names
        self._started = False

    def _startable(self, spec: McpServerSpec) -> bool:
        return spec.enabled and (self._approvals is None or self._approvals.approved(spec))

    async def start(self) -> None:
        """Start every enabled, approved server at once; returns when each is ready or failed."""
        if self._started:
            return
        self._started = True
        for spec in self.specs:
            if self._startable(spec):
                self._connections[spec.name] = ServerConnection(
                    spec, self._env, self._cwd, self.processes, self
                )
        await asyncio.gather(*(conn.start() for conn in self._connections.values()))
        self._name_tools()

    async def start_server(self, spec: McpServerSpec) -> None:
        """Start one more server (one the user just approved); like ``start``, never raises."""
        if spec.name in self._connections or not self._startable(spec):
            return
        conn = self._connections[spec.name] = ServerConnection(
            spec, self._env, self._cwd, self.processes, self
        )
        await conn.start()
        self._name_tools()

    def _connect(self, spec: McpServerSpec) -> ServerConnection:
        return ServerConnection(spec, self._env, self._cwd, self.processes, self)

    # -- the host servers see --------------------------------------------------------------------

    def roots(self) -> list[dict[str, str]]:
        """The workspace: the one root a server may work in (``roots/list``)."""
        path = Path(self._cwd).resolve()
        return [{"uri": path.as_uri(), "name": path.name or str(path)}]

    async def elicit(self, server: str, message: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        if self.elicitor is None:  # print mode, batch: nobody to ask
            return {"action": "decline"}
        return await self.elicitor(server, message, schema)

    def changed(self, server: str) -> None:
        self._name_tools()
        if self.on_change is not None:
            self.on_change(server)

    def confinement(self, spec: McpServerSpec) -> Confinement | None:
        if not spec.sandbox:
            return None
        sandbox = self._sandbox
        if sandbox is None or (confinement := sandbox.confinement()) is None:
            raise ServerUnavailable(
                "not started: its table says sandbox = true and ink runs without a sandbox (--sandbox off, "
                "or it cannot start here: `ink sandbox check` says why)"
            )
        return confinement

    # -- tools, prompts, resources ---------------------------------------------------------------

    def _name_tools(self) -> None:
        """Give every ready server's tools their model names; refuse names that clash."""
        wanted: dict[str, list[tuple[ServerConnection, RemoteTool]]] = {}
        for conn in self._ready():
            for remote in conn.tools:
                wanted.setdefault(tool_name(conn.name, remote.name), []).append((conn, remote))
        self._clashes = {}
        live: set[str] = set()
        for name, owners in wanted.items():
            if len(owners) > 1:
                self._refuse(name, owners)
                continue
            conn, remote = owners[0]
            tool = self._tools.get(name)
            if tool is None:
                tool = self._tools[name] = McpTool(remote, conn, name=name)
            tool.remote, tool.server, tool.offered = remote, conn, True
            live.add(name)
        for name, tool in self._tools.items():
            tool.offered = name in live

    def _refuse(self, name: str, owners: list[tuple[ServerConnection, RemoteTool]]) -> None:
        named = " and ".join(f"{conn.name}'s tool {remote.name!r}" for conn, remote in owners)
        for conn, _remote in owners:
            note = f"tool name {name} left out: {named} would both be called so"
            self._clashes.setdefault(conn.name, []).append(note)
            log.warning("MCP server %s: %s", conn.name, note)

    def _ready(self) -> list[ServerConnection]:
        return [conn for conn in self._connections.values() if conn.state == "ready"]

    def tools(self, server: str | None = None) -> list[McpTool]:
        """The tools offered now (of ``server`` alone, when given), in configuration order."""
        order = {spec.name: index for index, spec in enumerate(self.specs)}
        offered = [t for t in self._tools.values() if t.offered and server in (None, t.remote.server)]
        return sorted(offered, key=lambda t: order.get(t.remote.server, len(order)))

    def every_tool(self) -> list[McpTool]:
        """Every MCP tool of the session, offered or not any more (a call of one no longer offered says
        so): the tool registry holds these, ``McpTool.offered`` says which the model is given."""
        return list(self._tools.values())

    def prompts(self) -> list[RemotePrompt]:
        return [prompt for conn in self._ready() for prompt in conn.prompts]

    def resources(self) -> list[RemoteResource]:
        return [resource for conn in self._ready() for resource in conn.resources]

    def connection(self, server: str) -> ServerConnection | None:
        return self._connections.get(server)

    def spared(self) -> list[ProcessEntry]:
        """The server processes: the run's reaper must leave them alone (they live as long as the app)."""
        return [conn.process for conn in self._connections.values() if conn.process is not None]

    # -- what /mcp shows -------------------------------------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        return [self._status(spec) for spec in self.specs]

    def _status(self, spec: McpServerSpec) -> ServerStatus:
        conn = self._connections.get(spec.name)
        status = ServerStatus(spec.name, "starting", spec.transport, spec.target(), spec.origin, None, ())
        if conn is None and not spec.enabled:
            return replace(status, state="disabled")
        if conn is None and not self._startable(spec):
            from ink.mcp.trust import pin

            error = f"declared by the project ({spec.where}); approve it with: ink mcp approve {spec.name}"
            return replace(
                status, state="needs_approval", error=error, pinned=tuple(pin(spec, Path(self._cwd)).lines())
            )
        if conn is None:
            return status
        tools = self.tools(spec.name) if conn.state == "ready" else []
        notes = [note for kind in ("tools", "prompts", "resources") for note in conn.notes.get(kind, [])]
        return replace(
            status,
            state=conn.state,
            error=conn.error,
            tools=tuple(t.name for t in tools),
            read_only=tuple(t.name for t in tools if t.remote.read_only),
            prompts=tuple(tool_name(spec.name, p.name) for p in conn.prompts),
            resources=len(conn.resources),
            notes=tuple(notes + self._clashes.get(spec.name, [])),
        )

    async def aclose(self, kill_delay: float = DEFAULT_KILL_DELAY) -> None:
        """Close every connection; a server process not gone after ``kill_delay`` is terminated (TERM,
        then KILL), and survivors are logged. Idempotent."""
        closing = [asyncio.ensure_future(conn.aclose()) for conn in self._connections.values()]
        if closing:
            await asyncio.wait(closing, timeout=kill_delay)
        left = [entry for entry in self.spared() if not self.processes.forget_ended(entry)]
        ended = await self.processes.terminate(left, kill_delay)
        for survivor in ended.survivors:
            pid, command, reason = survivor.pid, survivor.command, survivor.reason
            log.warning("MCP server process %s (%s) is still running: %s", pid, command, reason)
        if closing:
            await asyncio.wait(closing)
