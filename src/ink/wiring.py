"""Settings in, a ready run controller out: the one place every frontend gets its parts from.

    app = build_app(settings)          # inside the running event loop
    app.controller.subscribe(render)
    app.controller.submit("fix the failing test")
    await app.controller.wait_idle()
    await app.aclose()                 # aborts what runs, reaps processes, closes the HTTP client

Frontends (print, rpc, acp, tui) call ``build_app``; a frontend that needs one part alone (the TUI's
``/model`` switch builds a new provider and ``LoopSetup``) calls the ``build_*`` function for it.
Nothing here reads the environment or the command line: ``Settings`` carries all of it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ink.agent.abort import AbortSignal
from ink.agent.history import History
from ink.agent.loop import ContextKeeper, LoopSetup
from ink.agent.scheduler import SchedulerSettings
from ink.agent.tool import BeforeToolHook, Tool, find_tool
from ink.ai.provider import Provider, ToolSpec
from ink.config import Settings
from ink.config.commands import CommandBook, load_commands
from ink.extend.command_limit import CommandToolLimit
from ink.extend.task import SubAgents
from ink.permissions.redacting import redacting
from ink.run.compaction import Compactor
from ink.run.controller import BangOutput, Modes, QueueError, RunController, Submitted
from ink.run.events import Survivor
from ink.run.usage import UsageTotals
from ink.system_prompt import Environment, build_system_prompt
from ink.tools.processes import ProcessEntry, ProcessRegistry
from ink.vocabulary import InputMode

if TYPE_CHECKING:
    from ink.ai.messages import ToolImage
    from ink.mcp.catalogue import McpCatalogue
    from ink.mcp.manager import McpManager
    from ink.mcp.tool import McpTool
    from ink.rewind import SessionCheckpoints
    from ink.store import SessionHandle, SessionInfo, SessionStore

log = logging.getLogger(__name__)


@dataclass
class App:
    """Everything one ink session runs on. ``aclose`` is the one clean-up call."""

    settings: Settings
    provider: Provider
    processes: ProcessRegistry
    tools: Sequence[Tool]
    controller: RunController
    compactor: Compactor
    usage: UsageTotals
    sessions: SessionStore | None = None
    session: SessionHandle | None = None
    before_tool: BeforeToolHook | None = None  # the permission hook, last of the controller's checks
    commands: CommandBook = field(default_factory=CommandBook)  # custom slash commands (docs/commands.md)
    command_limit: CommandToolLimit | None = None  # the controller's before_tool: the checks, in order
    agents: SubAgents = field(default_factory=SubAgents)  # running sub-agents, for per-agent control
    mcp: McpManager | None = None  # the MCP servers, when any is configured (docs/mcp.md)
    mcp_start: asyncio.Future[None] | None = None  # their start, running or done
    background: set[asyncio.Future[None]] = field(default_factory=set)  # held: the loop keeps weak refs
    mcp_catalogue: McpCatalogue | None = None  # every MCP tool, and which are offered (many: on demand)
    checkpoints: SessionCheckpoints | None = None  # of the workspace, for rewind (docs/rewind.md)

    def __post_init__(self) -> None:
        self.controller.subscribe(self.usage.on_event)
        self._unsubscribe_session = (
            self.controller.subscribe(self.session.on_event) if self.session is not None else lambda: None
        )

    def submit(
        self,
        text: str,
        mode: InputMode = "steer",
        *,
        reserved: Iterable[str] = (),
        images: tuple[ToolImage, ...] = (),
    ) -> Submitted:
        """``controller.submit`` after expanding a custom command (``/name args``; the names in
        ``reserved`` are the frontend's own and stay as they are). A command's ``allowed-tools`` hold
        while its prompt is the latest one in the history. ``images`` go with the text."""
        expansion = self.commands.expand(text, reserved)
        if expansion is None:
            return self.controller.submit(text, mode, images)
        submitted = self.controller.submit(expansion.text, mode, images)
        allowed = expansion.command.allowed_tools
        if allowed is not None and self.command_limit is not None:
            self.command_limit.limit(submitted.input_id, expansion.command.name, allowed)
        return submitted

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def new_session(self) -> None:
        """A fresh, empty history (and session file). Raises ``QueueError`` unless idle."""
        self._require_idle("a new session")
        if self.sessions is None:  # --no-session: a fresh history, still nothing written
            self.controller.new_session(History())
            self.usage.new_session()
            if self.checkpoints is not None:
                self.checkpoints.open(None)
            return
        settings = self.settings
        self._swap_session(self.sessions.create(settings.cwd, settings.model, settings.provider))

    def resume_session(self, info: SessionInfo) -> None:
        """``/resume``: go on with another session in place of this one. Raises ``QueueError`` unless idle,
        ``SessionError`` when it cannot be loaded or opened (the current session then stays as it was)."""
        self._require_idle("resuming a session")
        if self.sessions is None:
            from ink.store import SessionError

            raise SessionError("sessions are off (--no-session)")
        handle = self.sessions.resume(info)
        loaded = handle.loaded
        now = (self.settings.model, self.settings.provider)
        if loaded is not None and (loaded.model, loaded.provider) != now:
            handle.record_model_change(*now)
        self._swap_session(handle)
        if loaded is not None:
            self.usage.session = replace(loaded.usage, cost_usd=loaded.cost)

    def _require_idle(self, what: str) -> None:
        if self.controller.state != "idle":
            raise QueueError(f"{what} can only start while idle")

    def _swap_session(self, handle: SessionHandle) -> None:
        """Close the current session file, and give the controller ``handle``'s history."""
        if self.session is not None:
            self.session.close()
        self._unsubscribe_session()
        self.session = handle
        self._unsubscribe_session = self.controller.subscribe(handle.on_event)
        self.controller.new_session(handle.history)
        self.usage.new_session()
        if self.checkpoints is not None:
            self.checkpoints.open(handle.id)

    def compact(self, instructions: str = "") -> bool:
        """``/compact``: summarise the older history now, as a command occupying the controller.
        False when a run is going on (compaction then happens by itself when needed)."""

        async def work(signal: AbortSignal) -> None:
            history = self.controller.history
            await self.compactor.compact(
                history, signal, instructions=instructions, emit=self.controller.emit
            )

        return self.controller.run_command(work)

    async def aclose(self) -> None:
        """Abort any run, wait until it settled, end every process ink started, close the provider and
        the session file. Bounded: the grace period of a stuck tool plus the kill delay. Idempotent."""
        await self.controller.shutdown()
        if self.checkpoints is not None:
            await self.checkpoints.aclose()  # the last run's end snapshot
        if self.session is not None:
            self.session.close()
        if self.mcp is not None:
            await self.mcp.aclose(self.settings.kill_delay)
        survivors = await self.processes.terminate_all(self.settings.kill_delay)
        for survivor in survivors:
            log.warning(
                "process %s (%s) is still running: %s", survivor.pid, survivor.command, survivor.reason
            )
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()


@dataclass(frozen=True, slots=True)
class SessionChoice:
    """Which history to start from: a new session (default), the latest (``--continue``) or one by id."""

    continue_latest: bool = False
    resume_id: str | None = None


NEW_SESSION = SessionChoice()


def build_app(
    settings: Settings,
    *,
    session: SessionChoice = NEW_SESSION,
    before_tool: BeforeToolHook | None = None,
    force_exit: Callable[[int], None] | None = None,
    can_ask: bool = True,
    checkpoints: bool = True,
) -> App:
    """Build provider, tools, loop set-up, session and controller. Call it with the event loop running
    (the controller creates asyncio primitives). Raises ``SessionError`` (a clear one-line message) when
    the session asked for cannot be found or opened; nothing else for valid ``Settings``.

    Permissions: unless ``before_tool`` replaces it, the hook is built from the settings (mode, rules,
    remembered answers) and asks through ``controller.permissions``, whose events the frontend answers.
    ``can_ask=False`` (print mode): nobody answers, so a call that needs a question is refused.
    ``checkpoints``: snapshot the workspace before each input, for rewind (``install_checkpoints``)."""
    sessions, handle, history = open_session(settings, session)
    processes = ProcessRegistry()
    provider = build_provider(settings)
    late: list[App] = []  # the task tool reaches the controller it is part of once that exists
    agents, task = build_task_tool(settings, late)
    tools = [*build_tools(settings, processes), task]
    usage = _usage_totals(handle)
    setup = build_loop_setup(settings, provider, tools, before_tool=before_tool)
    compactor = build_compactor(settings, provider, setup, usage)
    mcp = build_mcp(settings, processes)
    controller = RunController(
        replace(setup, context=compactor),
        history,
        modes=Modes(settings.steering_mode, settings.follow_up_mode),
        run_bang=bang_runner(settings, processes),
        reaper=RegistryReaper(processes, settings.kill_delay, spare=mcp.spared if mcp else None),
        force_exit=force_exit or hard_exit(processes),
    )
    permission = before_tool or permission_hook(settings, controller, can_ask=can_ask)
    limit = CommandToolLimit(lambda: controller.history, permission)
    controller.setup = replace(controller.setup, before_tool=limit)
    commands = load_commands(settings.cwd, settings.ink_home)
    for warning in commands.warnings:
        log.warning("%s", warning)
    app = App(
        settings,
        provider,
        processes,
        tools,
        controller,
        compactor,
        usage,
        sessions,
        handle,
        permission,
        commands,
        limit,
        agents,
        mcp=mcp,
    )
    late.append(app)
    if settings.hooks:
        install_hooks(app, can_ask=can_ask)
    if checkpoints:
        install_checkpoints(app)
    if mcp is not None:
        start_mcp(app, mcp)
    return app


def install_checkpoints(app: App) -> None:
    """Workspace checkpoints for rewind (docs/rewind.md): taken as each input enters the history, kept
    with the open session (re-opened when it changes), waited for by every tool call (the gate goes
    first in the ``before_tool`` chain), and asked for the files an aborted run changed (its receipt)."""
    from ink.rewind import SessionCheckpoints

    controller, settings = app.controller, app.settings
    part = SessionCheckpoints(controller, settings.ink_home, settings.cwd)
    part.open(app.session_id)
    app.checkpoints = part
    controller.subscribe(part.on_event)
    controller.setup = replace(controller.setup, before_tool=part.gate(controller.setup.before_tool))
    controller.changed_files = part.changed_files


def build_task_tool(settings: Settings, late: list[App]) -> tuple[SubAgents, Tool]:
    """The ``task`` tool (docs/subagents.md). ``late`` holds the app once built: the sub-agents run on
    its controller's current set-up and emit through it; transcripts go next to the session file."""
    from ink.config.agents import load_agent_types
    from ink.extend.task import TaskTool

    types, warnings = load_agent_types(settings.cwd, settings.ink_home)
    for warning in warnings:
        log.warning("%s", warning)

    def transcripts() -> Path | None:
        session = late[0].session if late else None
        return session.path.with_suffix(".subagents") if session is not None else None

    agents = SubAgents()
    tool = TaskTool(
        types,
        lambda: late[0].controller.setup,
        lambda event: late[0].controller.emit(event),
        agents,
        transcripts,
    )
    return agents, tool


def install_hooks(app: App, *, can_ask: bool) -> None:
    """The configured hooks (docs/hooks.md) on the controller's loop seams. They run in the app's process
    registry (an abort kills them, R35) and report problems as warning notices."""
    from ink.agent.events import Notice
    from ink.extend.hook_approval import ProjectHookApproval
    from ink.extend.hooks import HookContext, HookSet

    controller, settings = app.controller, app.settings

    def session() -> tuple[str | None, Path | None]:
        return app.session_id, app.session.path if app.session is not None else None

    def hand_back(input_ids: Sequence[str], reason: str) -> None:
        controller.emit(Notice(f"a user_prompt hook refused the input: {reason}", "warning"))
        controller.hand_back(input_ids)

    def notify(text: str) -> None:
        controller.emit(Notice(text, "warning"))

    context = HookContext(settings.cwd, app.processes, settings.kill_delay, notify, session, hand_back)
    asker = controller.permissions if can_ask else None
    approval = ProjectHookApproval(settings.hooks, settings.ink_home, asker, notify)
    hooks = HookSet(settings.hooks, context, approval)
    if app.command_limit is not None:
        app.command_limit.inner = hooks.before_tool(app.before_tool)
    controller.setup = replace(
        controller.setup, after_tool=hooks.after_tool, on_prompt=hooks.on_prompt, on_stop=hooks.on_stop
    )


def build_mcp(settings: Settings, processes: ProcessRegistry) -> McpManager | None:
    """The MCP servers of the settings, not started yet; None (and nothing imported) without any."""
    if not settings.mcp_servers:
        return None
    from ink.mcp.manager import McpManager
    from ink.mcp.trust import McpApprovals

    approvals = McpApprovals(settings.ink_home)
    return McpManager(settings.mcp_servers, settings.env, settings.cwd, processes, approvals)


def start_mcp(app: App, mcp: McpManager) -> None:
    """Start the servers, in parallel, as a command occupying the controller: input that arrives
    meanwhile is queued and runs once the servers are ready or failed (R8, R26), so the first prompt
    already sees their tools. An abort stops the wait, not the start: tools of servers that finish
    later are added then."""
    from ink.agent.abort import run_unless_aborted

    starting = asyncio.ensure_future(mcp.start())
    starting.add_done_callback(lambda _task: mcp_started(app, mcp))

    async def wait_started(signal: AbortSignal) -> None:
        await run_unless_aborted(asyncio.shield(starting), signal)

    app.mcp_start = starting
    app.controller.run_command(wait_started)


def mcp_started(app: App, mcp: McpManager) -> None:
    """Offer the ready servers' tools, and tell the user (a ``notice``) what started and what did not."""
    from ink.agent.events import Notice

    add_mcp_tools(app, mcp.tools())
    statuses = mcp.statuses()
    summary = "; ".join(
        f"{s.name}: {len(s.tools)} tools" if s.state == "ready" else f"{s.name}: {s.state}: {s.error}"
        for s in statuses
    )
    failed = any(s.state == "failed" for s in statuses)
    app.controller.emit(Notice(f"MCP servers: {summary}", "warning" if failed else "info"))


def approve_mcp_server(app: App, name: str) -> str | None:
    """Remember the user's approval of the project's server ``name`` and start it in the background (its
    tools join from the next run). The problem, in words, when there is no such server waiting."""
    from ink.mcp.trust import McpApprovals

    mcp = app.mcp
    spec = next((s for s in mcp.specs if s.name == name), None) if mcp is not None else None
    if mcp is None or spec is None:
        return f"no MCP server named {name!r} is configured"
    if spec.origin != "project":
        return f"{name} is in your own config: it needs no approval"
    try:
        McpApprovals(app.settings.ink_home).approve(spec)
    except OSError as exc:
        return f"cannot remember the approval: {exc}"
    started = asyncio.ensure_future(mcp.start_server(spec))
    started.add_done_callback(lambda _task: add_mcp_tools(app, mcp.tools(spec.name)))
    app.background.add(started)
    started.add_done_callback(app.background.discard)
    return None


def add_mcp_tools(app: App, tools: Sequence[McpTool]) -> None:
    """MCP tools join the app's; past ``DEFER_ABOVE`` of them, their schemas are loaded on demand through
    ``mcp_tool_search`` instead of being sent with every request (``ink.mcp.catalogue``)."""
    from ink.mcp.catalogue import McpCatalogue, ToolSearch

    if not tools:
        return
    catalogue = app.mcp_catalogue
    extra: list[Tool] = list(tools)
    if catalogue is None:
        catalogue = app.mcp_catalogue = McpCatalogue(tools)
        extra += [ToolSearch(catalogue)] if catalogue.deferred else []
    else:
        catalogue.add(tools)
    add_tools(app, extra, offer=catalogue.offer if catalogue.deferred else None)


def add_tools(
    app: App, extra: Sequence[Tool], offer: Callable[[Sequence[Tool]], Sequence[ToolSpec]] | None = None
) -> None:
    """Offer ``extra`` tools from the next run on (the setup is read at the start of each run)."""
    if not extra:
        return
    app.tools = [*app.tools, *extra]
    setup = app.controller.setup
    offer = offer or setup.offer
    specs = offer(app.tools) if offer else [t.spec for t in app.tools]
    prompt = build_system_prompt(specs, Environment.detect(app.settings.cwd))
    app.controller.setup = replace(setup, tools=tuple(app.tools), system_prompt=prompt, offer=offer)


def permission_hook(settings: Settings, controller: RunController, *, can_ask: bool) -> BeforeToolHook:
    """The settings' permission policy, asking through the controller's broker (R4: a refusal is the
    call's error result). Its notes to the user (print mode's refusals) are warning notices."""
    from ink.agent.events import Notice
    from ink.permissions import build_permission_hook

    timeout = settings.permission_timeout
    controller.permissions.timeout_seconds = timeout if timeout > 0 else None
    return build_permission_hook(
        settings,
        lambda name: find_tool(controller.setup.tools, name),  # the tools of the run being checked
        controller.permissions if can_ask else None,
        notify=lambda text: controller.emit(Notice(text, "warning")),
    )


def open_session(
    settings: Settings, choice: SessionChoice
) -> tuple[SessionStore | None, SessionHandle | None, History]:
    """The session store, the open session (None with ``--no-session``) and the history to start from.
    With ``--no-session``, ``--continue``/``--resume`` still load the history but write nothing."""
    if settings.no_session and choice == NEW_SESSION:
        return None, None, History()  # nothing to read or write: the store is not even imported
    from ink.store import SessionStore

    store = SessionStore(settings.session_dir, secrets=settings.secrets, on_error=_session_write_failed)
    if settings.no_session:
        target = _chosen(store, settings, choice)
        history = History(store.load(target).messages) if target is not None else History()
        return None, None, history
    target = _chosen(store, settings, choice)
    if target is None:
        handle = store.create(settings.cwd, settings.model, settings.provider)
    else:
        handle = store.resume(target)
        loaded = handle.loaded
        if loaded is not None and (loaded.model, loaded.provider) != (settings.model, settings.provider):
            handle.record_model_change(settings.model, settings.provider)
    return store, handle, handle.history


def _chosen(store: SessionStore, settings: Settings, choice: SessionChoice) -> SessionInfo | None:
    from ink.store import SessionNotFound

    if choice.resume_id is not None:
        return store.resolve(settings.cwd, choice.resume_id)
    if choice.continue_latest:
        info = store.latest(settings.cwd)
        if info is None:
            raise SessionNotFound(
                f"no session to continue in {settings.cwd}; start one with `ink`, "
                "or list them with `ink sessions`"
            )
        return info
    return None


def _session_write_failed(problem: str) -> None:
    log.warning("the session can no longer be saved: %s", problem)


def _usage_totals(handle: SessionHandle | None) -> UsageTotals:
    loaded = handle.loaded if handle is not None else None
    return UsageTotals(loaded.usage, loaded.cost) if loaded is not None else UsageTotals()


def build_compactor(
    settings: Settings, provider: Provider, setup: LoopSetup, usage: UsageTotals
) -> Compactor:
    """The context keeper for ``settings.model``: compacts before a request would overflow (R-sessions)."""
    import json

    from ink.ai.models import lookup

    specs = json.dumps(
        [{"name": t.name, "d": t.description, "p": t.parameters} for t in (x.spec for x in setup.tools)]
    )
    overhead = (len(setup.system_prompt) + len(specs)) // 4
    provider = redacting(provider, settings.secrets)
    info = lookup(settings.model)
    if settings.context_window is not None:  # what the server itself reports (a local llama.cpp)
        info = replace(info, context_window=settings.context_window)
    return Compactor(provider, settings.model, info, overhead_tokens=overhead, usage=usage)


def build_provider(settings: Settings) -> Provider:
    """The provider for ``settings.provider``; its module (and httpx) is imported only here."""
    from ink.ai.http import RequestTimeouts
    from ink.config.catalogue import protocol_for

    info = settings.provider_info
    protocol = protocol_for(info, settings.model)
    timeouts = RequestTimeouts(settings.connect_timeout, settings.first_byte_timeout, settings.idle_timeout)
    if protocol == "anthropic":
        from ink.ai.anthropic import AnthropicProvider

        return AnthropicProvider(
            api_key=settings.api_key, base_url=settings.base_url, name=info.name, timeouts=timeouts
        )
    if protocol == "openai-responses":
        from ink.ai.openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(
            api_key=settings.api_key, base_url=settings.base_url, name=info.name, timeouts=timeouts
        )
    from ink.ai.openai import OpenAIProvider

    return OpenAIProvider(
        api_key=settings.api_key, base_url=settings.base_url, name=info.name, timeouts=timeouts
    )


def build_tools(settings: Settings, processes: ProcessRegistry) -> list[Tool]:
    from ink.tools import default_tools

    return list(default_tools(settings.cwd, processes, kill_delay=settings.kill_delay))


def build_loop_setup(
    settings: Settings,
    provider: Provider,
    tools: Sequence[Tool],
    *,
    before_tool: BeforeToolHook | None = None,
    context: ContextKeeper | None = None,
) -> LoopSetup:
    return LoopSetup(
        provider=redacting(provider, settings.secrets),  # errors and retry notes carry no key
        model=settings.model,
        system_prompt=build_system_prompt([t.spec for t in tools], Environment.detect(settings.cwd)),
        tools=tuple(tools),
        max_iterations=settings.max_iterations,
        max_tokens=settings.max_tokens,
        scheduler=SchedulerSettings(grace_seconds=settings.grace_seconds),
        before_tool=before_tool,
        context=context,
        options=request_options(settings),
    )


THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 24576}  # Anthropic budget_tokens per level


def request_options(settings: Settings) -> dict[str, Any]:
    """Provider-specific request fields the settings ask for: reasoning effort / thinking budget."""
    level = settings.thinking
    if level == "off":
        return {}
    from ink.config.catalogue import protocol_for

    protocol = protocol_for(settings.provider_info, settings.model)
    if protocol == "openai":
        return {"reasoning_effort": level}
    if protocol == "openai-responses":  # summaries: the reasoning shown dimmed
        return {"reasoning": {"effort": level, "summary": "auto"}}
    # Anthropic: 1024 <= budget_tokens < max_tokens.
    budget = min(THINKING_BUDGETS[level], settings.max_tokens - 1)
    if budget < 1024:
        log.warning(
            "thinking needs max_tokens above 1024 (it is %d): thinking stays off", settings.max_tokens
        )
        return {}
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}


class RegistryReaper:
    """The controller's ``Reaper`` (R35): ends every process tree still registered after a run."""

    def __init__(
        self,
        processes: ProcessRegistry,
        kill_delay: float,
        spare: Callable[[], Sequence[ProcessEntry]] | None = None,
    ) -> None:
        self._processes = processes
        self._kill_delay = kill_delay
        self._spare = spare  # processes that live as long as the app (MCP servers), not a run

    async def reap(self) -> Sequence[Survivor]:
        if self._spare is None:
            return tuple(await self._processes.terminate_all(self._kill_delay))
        spared = self._spare()
        doomed = [e for e in self._processes.entries if all(e is not s for s in spared)]
        return (await self._processes.terminate(doomed, self._kill_delay)).survivors


def bang_runner(settings: Settings, processes: ProcessRegistry) -> Callable[[str, AbortSignal], Any]:
    """R14: ``!command`` runs in the shell in the working directory; its output goes to the user only."""
    from ink.tools.shell import run_shell

    async def run_bang(command: str, signal: AbortSignal) -> BangOutput:
        try:
            result = await run_shell(command, settings.cwd, signal, processes, kill_delay=settings.kill_delay)
        except OSError as exc:
            return BangOutput(f"cannot run the command: {exc.strerror or exc}", None)
        return BangOutput(result.output, result.exit_code, result.interrupted)

    return run_bang


def hard_exit(processes: ProcessRegistry) -> Callable[[int], None]:
    """The second interrupt (R21) for one app: see ``hard_exit_processes``."""
    return lambda status: hard_exit_processes([processes], status)


def hard_exit_processes(registries: Sequence[ProcessRegistry], status: int) -> None:
    """No more waiting: SIGKILL every registered process tree at once, flush what can be flushed, and
    leave with ``status``."""
    for processes in registries:
        processes.kill_all_now()  # only processes proven to be ours: a stale group id may be reused
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
