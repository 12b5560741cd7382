"""The MCP servers as an app part (docs/mcp.md): started in parallel when the app opens, their tools
offered once ready, ended when it closes. ``ink.mcp`` (and the SDK) is imported only when a server is
configured: this module is imported by ``default_parts`` only then."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ink.agent.abort import AbortSignal
from ink.agent.events import Notice
from ink.agent.tool import Tool
from ink.wiring.parts import AppPart

if TYPE_CHECKING:
    from ink.mcp.catalogue import McpCatalogue
    from ink.mcp.manager import McpManager
    from ink.mcp.tool import McpTool
    from ink.wiring.app import App


class McpPart(AppPart):
    name = "the MCP servers"

    def __init__(self) -> None:
        self.manager: McpManager | None = None
        self.starting: asyncio.Task[None] | None = None  # the servers' start, running or done
        self.catalogue: McpCatalogue | None = None  # every MCP tool, and which are offered
        self._app: App | None = None

    async def start(self, app: App) -> None:
        """Start the servers, in parallel, as a command occupying the controller: input that arrives
        meanwhile is queued and runs once the servers are ready or failed (R8, R26), so the first prompt
        already sees their tools. An abort stops the wait, not the start: tools of servers that finish
        later are added then. Returns at once."""
        from ink.agent.abort import run_unless_aborted
        from ink.mcp.manager import McpManager
        from ink.mcp.trust import McpApprovals

        settings = app.settings
        approvals = McpApprovals(settings.ink_home)
        manager = McpManager(settings.mcp_servers, settings.env, settings.cwd, app.processes, approvals)
        self.manager, self._app = manager, app
        app.spared.append(manager.spared)  # the servers live as long as the app, not a run
        starting = self.starting = app.tasks.spawn(self._start_all(manager, app), "MCP servers start")

        async def wait_started(signal: AbortSignal) -> None:
            await run_unless_aborted(asyncio.shield(starting), signal)

        app.controller.run_command(wait_started)

    async def _start_all(self, manager: McpManager, app: App) -> None:
        await manager.start()
        self._add_tools(app, manager.tools())
        statuses = manager.statuses()
        summary = "; ".join(
            f"{s.name}: {len(s.tools)} tools" if s.state == "ready" else f"{s.name}: {s.state}: {s.error}"
            for s in statuses
        )
        failed = any(s.state == "failed" for s in statuses)
        app.controller.emit(Notice(f"MCP servers: {summary}", "warning" if failed else "info"))

    def approve(self, name: str) -> str | None:
        """Remember the user's approval of the project's server ``name`` and start it in the background
        (its tools join from the next run). The problem, in words, when there is no such server waiting."""
        from ink.mcp.trust import McpApprovals

        manager, app = self.manager, self._app
        spec = next((s for s in manager.specs if s.name == name), None) if manager is not None else None
        if manager is None or app is None or spec is None:
            return f"no MCP server named {name!r} is configured"
        if spec.origin != "project":
            return f"{name} is in your own config: it needs no approval"
        try:
            McpApprovals(app.settings.ink_home).approve(spec)
        except OSError as exc:
            return f"cannot remember the approval: {exc}"

        async def start_one() -> None:
            await manager.start_server(spec)
            self._add_tools(app, manager.tools(spec.name))

        app.tasks.spawn(start_one(), f"MCP server {name} start")
        return None

    def _add_tools(self, app: App, tools: Sequence[McpTool]) -> None:
        """MCP tools join the app's; past ``DEFER_ABOVE`` of them, their schemas are loaded on demand
        through ``mcp_tool_search`` instead of being sent with every request (``ink.mcp.catalogue``)."""
        from ink.mcp.catalogue import McpCatalogue, ToolSearch

        if not tools:
            return
        catalogue = self.catalogue
        extra: list[Tool] = list(tools)
        if catalogue is None:
            catalogue = self.catalogue = McpCatalogue(tools)
            extra += [ToolSearch(catalogue)] if catalogue.deferred else []
        else:
            catalogue.add(tools)
        app.add_tools(extra, offer=catalogue.offer if catalogue.deferred else None)

    async def aclose(self) -> None:
        """End every server (bounded by the kill delay; survivors are logged)."""
        if self.manager is not None and self._app is not None:
            await self.manager.aclose(self._app.settings.kill_delay)


def mcp_of(app: App) -> McpPart | None:
    """The app's MCP part, when servers are configured."""
    return app.part(McpPart)
