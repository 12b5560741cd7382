"""The MCP servers as an app part (docs/mcp.md): started in parallel when the app opens, their tools
offered once ready, ended when it closes. ``ink.mcp`` is imported only when a server is configured: this
module is imported by ``default_parts`` only then.

The app's tool registry holds every MCP tool of the session (and ``mcp_tool_search``); which of them a
model call is given is the catalogue's ``offer``, asked at every model call: a tool a server stopped
listing (``tools/list_changed``) is not offered from the next request on, and one it added joins the
registry at once and is offered from the next request on, a run going on included (``LoopSetup.joining``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ink.agent.abort import AbortSignal
from ink.agent.events import Notice
from ink.agent.tool import Tool
from ink.app.service import AppPart

if TYPE_CHECKING:
    from ink.agent.loop import PendingInput, PromptCheck
    from ink.app.service import App
    from ink.mcp.catalogue import McpCatalogue
    from ink.mcp.elicitation import ElicitationBroker
    from ink.mcp.manager import Elicitor, McpManager


class McpPart(AppPart):
    name = "the MCP servers"

    def __init__(self) -> None:
        self.manager: McpManager | None = None
        self.starting: asyncio.Task[None] | None = None  # the servers' start, running or done
        self.catalogue: McpCatalogue | None = None  # every MCP tool, and which are offered
        self._app: App | None = None
        self._elicitor: Elicitor | None = None
        self.questions: ElicitationBroker | None = None  # the servers' questions to the user
        self.listeners: list[Callable[[], None]] = []  # told when the servers' lists are read or change

    def ask_the_user(self) -> None:
        """A frontend that can put a server's question to the user and answer it (the TUI, RPC: the
        ``elicitation_request`` event, answered through ``questions.answer``) says so here; without it,
        every question is declined (print mode, batch, ACP)."""
        if self.questions is not None:
            self._elicitor = self.questions.ask
            if self.manager is not None:
                self.manager.elicitor = self._elicitor

    async def start(self, app: App) -> None:
        """Start the servers, in parallel, as a command occupying the controller: input that arrives
        meanwhile is queued and runs once the servers are ready or failed (R8, R26), so the first prompt
        already sees their tools. An abort stops the wait, not the start: tools of servers that finish
        later are added then. Returns at once."""
        from ink.agent.abort import run_unless_aborted
        from ink.mcp.elicitation import ElicitationBroker
        from ink.mcp.manager import McpManager
        from ink.mcp.trust import McpApprovals

        if self.questions is None:
            self.questions = ElicitationBroker(app.controller.emit)
            questions = self.questions
            # a question belongs to the call that asked it: once its run ended (an interrupt included),
            # nobody is waiting for the answer
            app.controller.subscribe(
                lambda event: questions.cancel_all() if event.type == "run_end" else None
            )
        settings = app.settings
        approvals = McpApprovals(settings.ink_home, settings.cwd)
        manager = McpManager(
            settings.mcp_servers, settings.env, settings.cwd, app.processes, approvals, app.sandbox
        )
        manager.elicitor = self._elicitor
        manager.on_change = self._changed
        self.manager, self._app = manager, app
        app.spared.append(manager.spared)  # the servers live as long as the app, not a run
        starting = self.starting = app.tasks.spawn(self._start_all(manager, app), "MCP servers start")

        async def wait_started(signal: AbortSignal) -> None:
            await run_unless_aborted(asyncio.shield(starting), signal)

        app.controller.run_command(wait_started)

    async def _start_all(self, manager: McpManager, app: App) -> None:
        await manager.start()
        self._register(app)
        statuses = manager.statuses()
        summary = "; ".join(
            f"{s.name}: {len(s.tools)} tools" if s.state == "ready" else f"{s.name}: {s.state}: {s.error}"
            for s in statuses
        )
        failed = any(s.state == "failed" for s in statuses)
        app.controller.emit(Notice(f"MCP servers: {summary}", "warning" if failed else "info"))
        for status in statuses:
            for note in status.notes:
                app.controller.emit(Notice(f"MCP server {status.name}: {note}", "info"))
        self._tell()

    def _tell(self) -> None:
        for listener in self.listeners:
            listener()

    async def on_prompt(self, inputs: Sequence[PendingInput], signal: AbortSignal) -> PromptCheck:
        """The part's prompt step (``ink.wiring.chain``): MCP prompts (``/mcp__SERVER__PROMPT``) and
        resource mentions (``@SERVER:URI``) are expanded when an input enters the history
        (``ink.mcp.prompts``), before the prompt hooks see it; an input whose prompt cannot be had goes
        back to the user with the reason."""
        from ink.agent.loop import PromptCheck
        from ink.mcp.prompts import expand_inputs

        manager, app = self.manager, self._app
        if manager is None or app is None:
            return PromptCheck(inputs)
        refused: list[str] = []

        def refuse(input_id: str, reason: str) -> None:
            app.events.emit(Notice(f"the MCP prompt was not sent: {reason}", "warning"))
            refused.append(input_id)

        def notify(text: str) -> None:
            app.events.emit(Notice(text, "warning"))

        expanded = await expand_inputs(manager, inputs, refuse, notify)
        return PromptCheck(expanded, refused=refused)

    def prompt_commands(self) -> list[tuple[str, str]]:
        """``(command name, what it does)`` of every MCP prompt: for completion and command lists."""
        from ink.mcp.names import tool_name
        from ink.mcp.prompts import usage

        if self.manager is None:
            return []
        return [(tool_name(p.server, p.name), p.description or usage(p)) for p in self.manager.prompts()]

    def names_prompt(self, line: str) -> bool:
        """Whether ``line`` is ``/mcp__SERVER__PROMPT ...`` of a prompt a ready server offers."""
        from ink.mcp.prompts import find_prompt

        return self.manager is not None and find_prompt(self.manager, line) is not None

    def resource_mentions(self) -> list[tuple[str, str]]:
        """``(SERVER:URI, what it is)`` of every resource the ready servers list: for ``@`` completion."""
        if self.manager is None:
            return []
        return [
            (f"{r.server}:{r.uri}", r.description or r.name or r.mime_type or "resource")
            for r in self.manager.resources()
        ]

    def _changed(self, server: str) -> None:
        """A server's list changed: new tools join the registry; the notice says what is offered now."""
        manager, app = self.manager, self._app
        if manager is None or app is None:
            return
        self._register(app)
        self._tell()
        count = len(manager.tools(server))
        text = f"MCP server {server} changed its lists: {count} tools offered now"
        app.controller.emit(Notice(text, "info"))

    def approve(self, name: str) -> str | None:
        """Remember the user's approval of the project's server ``name`` and start it in the background
        (its tools join at once, offered from the next request). The problem, in words, when there is no
        such server waiting."""
        from ink.mcp.trust import McpApprovals

        manager, app = self.manager, self._app
        spec = next((s for s in manager.specs if s.name == name), None) if manager is not None else None
        if manager is None or app is None or spec is None:
            return f"no MCP server named {name!r} is configured"
        if spec.origin != "project":
            return f"{name} is in your own config: it needs no approval"
        try:
            McpApprovals(app.settings.ink_home, app.settings.cwd).approve(spec)
        except OSError as exc:
            return f"cannot remember the approval: {exc}"

        async def start_one() -> None:
            await manager.start_server(spec)
            self._register(app)

        app.tasks.spawn(start_one(), f"MCP server {name} start")
        return None

    def _register(self, app: App) -> None:
        """MCP tools not yet in the app's registry join it; past ``DEFER_ABOVE`` of them, their schemas
        are loaded on demand through ``mcp_tool_search`` (``ink.mcp.catalogue``)."""
        from ink.mcp.catalogue import McpCatalogue, ToolSearch

        assert self.manager is not None
        every = self.manager.every_tool()
        extra: list[Tool] = []
        if self.catalogue is None:
            if not every:
                return
            self.catalogue = McpCatalogue([])
            extra.append(ToolSearch(self.catalogue))
        known = set(map(id, self.catalogue.every))
        fresh = [tool for tool in every if id(tool) not in known]
        self.catalogue.add(fresh)
        extra += fresh
        if extra:
            app.add_tools(extra, offer=self.catalogue.offer)

    async def aclose(self) -> None:
        """End every server (bounded by the kill delay; survivors are logged)."""
        if self.manager is not None and self._app is not None:
            await self.manager.aclose(self._app.settings.kill_delay)


def mcp_of(app: App) -> McpPart | None:
    """The app's MCP part, when servers are configured."""
    return app.part(McpPart)
