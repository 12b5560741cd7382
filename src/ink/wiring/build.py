"""Settings in, an ``App`` out, every object built once with what it needs (``build_app``), and the
pieces it is made of. ``open_app`` (``ink.wiring.lifetime``) wraps this with the parts' start and end.

The order is the order of need: the permission broker and hook, the hooks and the command limit exist
before the loop set-up; the provider is wrapped for redaction once, and the set-up and the compactor
share it; the controller is made last, with the set-up complete. What needs the controller or the app
before they exist (the broker's events, the task tool's set-up, the hooks' session) reaches them through
a closure that runs only once they exist.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.events import Notice
from ink.agent.history import History
from ink.agent.loop import PromptHook, StopHook
from ink.agent.tasks import Tasks
from ink.agent.tool import AfterToolHook, BeforeToolStep, Tool
from ink.ai.provider import Provider
from ink.app.setup import RunHooks, RunSetups, ToolRegistry, settings_for
from ink.config import Settings
from ink.config.commands import load_commands
from ink.extend.command_limit import CommandToolLimit
from ink.extend.task import SubAgents
from ink.run.controller import BangOutput, Modes, RunController
from ink.run.events import RunEvent, Survivor
from ink.run.hub import EventHub
from ink.run.permissions import PermissionBroker
from ink.run.usage import UsageTotals
from ink.sandbox import Sandbox
from ink.store.current import CurrentSession
from ink.tools.jobs import JobRegistry
from ink.tools.processes import ProcessEntry, ProcessRegistry
from ink.wiring.app import App
from ink.wiring.chain import PromptSteps, before_tool_chain
from ink.wiring.sandboxing import build_sandbox

if TYPE_CHECKING:
    from ink.extend.hooks import HookSet
    from ink.rewind import SessionCheckpoints
    from ink.store import LoadedSession, SessionHandle, SessionInfo, SessionStore
    from ink.wiring.parts import AppPart

log = logging.getLogger(__name__)


class ToolMaker(Protocol):
    """Makes an app's tools (``build_tools``: ink's own), working in its folder, its process registry
    and its sandbox; a tool that starts background jobs starts them in ``jobs`` (R43)."""

    def __call__(
        self, settings: Settings, processes: ProcessRegistry, sandbox: Sandbox, *, jobs: JobRegistry | None
    ) -> Sequence[Tool]: ...


class SessionChoice(msgspec.Struct, frozen=True):
    """Which history to start from: a new session (default), the latest (``--continue``) or one by id."""

    continue_latest: bool = False
    resume_id: str | None = None


NEW_SESSION = SessionChoice()


class AppChoices(TypedDict, total=False):
    """What a frontend chooses for its app besides the settings, passed on unchanged by ``open_app`` and
    ``start_app`` to ``build_app`` (whose parameters say what each means)."""

    session: SessionChoice
    before_tool: BeforeToolStep | None
    force_exit: Callable[[int], None] | None
    can_ask: bool
    checkpoints: bool
    tools: ToolMaker | None
    provider: Provider | None


def build_app(
    settings: Settings,
    *,
    session: SessionChoice = NEW_SESSION,
    before_tool: BeforeToolStep | None = None,
    force_exit: Callable[[int], None] | None = None,
    can_ask: bool = True,
    checkpoints: bool = True,
    tools: ToolMaker | None = None,
    provider: Provider | None = None,
    parts: Sequence[AppPart] = (),
) -> App:
    """Build the app for ``settings`` (its ``parts`` are held, not started: ``open_app`` starts them).
    Call it with the event loop running (the controller creates asyncio primitives). Raises
    ``SessionError`` (a clear one-line message) when the session asked for cannot be found or opened;
    nothing else for valid ``Settings``.

    Permissions: unless ``before_tool`` replaces it (and the pre_tool hooks with it), the permission
    step (last of the before-tool chain, ``ink.wiring.chain``) is built from the settings (mode, rules,
    remembered answers; the pre_tool hooks just before it) and asks through ``controller.permissions``,
    whose events the frontend answers.
    ``can_ask=False`` (print mode): nobody answers, so a call that needs a question is refused.
    ``checkpoints``: snapshot the workspace before each input, for rewind (``ink.rewind``): taken as
    each input enters the history, kept with the open session, waited for by every tool call that may
    change files, and asked for the files an aborted run changed (its receipt); a part of the app.
    ``tools``: what makes the tools besides the ``task`` tool (default ``build_tools``: ink's own).
    ``provider``: the model's provider, when not the one the settings name (a scripted one in tests)."""
    events = EventHub()  # first: everything below may tell the user something through it
    tasks = Tasks(on_error=failure_notices(events.emit))
    notify = warnings_to(events.emit)
    sessions, handle, history, settings = open_session(settings, session)
    current = CurrentSession(handle)
    processes = ProcessRegistry()
    jobs = JobRegistry(kill_delay=settings.kill_delay, emit=events.emit)  # R43: no run's reaper ends them
    spared: list[Callable[[], Sequence[ProcessEntry]]] = []  # processes a part keeps for the app's life
    sandbox = build_sandbox(settings)
    timeout = settings.permission_timeout
    broker = PermissionBroker(events.emit, timeout if timeout > 0 else None)
    asker = broker if can_ask else None
    hooks = build_hooks(settings, processes, asker, notify, current, sandbox) if settings.hooks else None
    permission = before_tool or permission_hook(settings, asker, notify)
    limit = CommandToolLimit()
    kept = _session_checkpoints(settings, events, tasks) if checkpoints else None
    chain = before_tool_chain(kept, limit, hooks if before_tool is None else None, permission)
    agents, task = build_task_tool(settings, current)
    offered = (*(tools or build_tools)(settings, processes, sandbox, jobs=jobs), task)
    run_hooks = RunHooks(chain, *hook_seams(hooks, parts), tasks=tasks, notes=jobs.take_notes)
    setups = RunSetups(settings, ToolRegistry(offered), run_hooks, _usage_totals(handle), provider)
    controller = RunController(
        setups,
        history,
        modes=Modes(settings.steering_mode, settings.follow_up_mode),
        run_bang=bang_runner(settings, processes),
        reaper=RegistryReaper(processes, settings.kill_delay, spared),
        force_exit=force_exit or hard_exit(processes),
        permissions=broker,
        tasks=tasks,
        changed_files=kept.changed_files if kept is not None else None,
        events=events,
        running_jobs=jobs.running,
    )
    commands = load_commands(settings.cwd, settings.ink_home)
    for warning in commands.warnings:
        log.warning("%s", warning)
    return App(
        setups,
        processes,
        controller,
        tasks=tasks,
        events=events,
        sessions=sessions,
        current_session=current,
        before_tool=permission,
        commands=commands,
        command_limit=limit,
        agents=agents,
        parts=(kept, *parts) if kept is not None else parts,
        checkpoints=kept,
        sandbox=sandbox,
        spared=spared,
        jobs=jobs,
    )


def hook_seams(
    hooks: HookSet | None, parts: Sequence[AppPart]
) -> tuple[AfterToolHook | None, PromptHook | None, StopHook | None]:
    """The after-tool, prompt and stop seams of every run: the hooks', and the parts' prompt steps."""
    prompt = PromptSteps.of(parts, hooks)
    if hooks is None:
        return None, prompt, None
    return hooks.after_tool, prompt, hooks.on_stop


def warnings_to(emit: Callable[[RunEvent], None]) -> Callable[[str], None]:
    """What tells the user of a problem that is not a run's (a hook's, a question nobody can answer)."""
    return lambda text: emit(Notice(text, "warning"))


def failure_notices(emit: Callable[[RunEvent], None]) -> Callable[[str, BaseException], None]:
    """The app's task group's report of a background task that failed: a warning notice."""
    return lambda name, error: emit(
        Notice(f"internal error in {name}: {type(error).__name__}: {error}", "warning")
    )


def _session_checkpoints(settings: Settings, events: EventHub, tasks: Tasks) -> SessionCheckpoints:
    from ink.rewind import SessionCheckpoints  # with its git machinery: only when checkpoints are on

    return SessionCheckpoints(events.emit, tasks, settings.ink_home, settings.cwd)


def build_task_tool(settings: Settings, session: CurrentSession) -> tuple[SubAgents, Tool]:
    """The ``task`` tool (docs/subagents.md): sub-agents start from their run's set-up and emit through
    it; transcripts go next to the open session's file."""
    from ink.config.agents import load_agent_types
    from ink.extend.task import TaskTool

    types, warnings = load_agent_types(settings.cwd, settings.ink_home)
    for warning in warnings:
        log.warning("%s", warning)

    agents = SubAgents()
    return agents, TaskTool(types, agents, session.transcripts)


def build_hooks(
    settings: Settings,
    processes: ProcessRegistry,
    asker: PermissionBroker | None,
    notify: Callable[[str], None],
    session: CurrentSession,
    sandbox: Sandbox | None = None,
) -> HookSet:
    """The configured hooks (docs/hooks.md) for the loop's seams. They run in the app's process registry
    (an abort kills them, R35) and report problems as warning notices."""
    from ink.extend.hook_approval import ProjectHookApproval
    from ink.extend.hooks import HookContext, HookSet

    context = HookContext(settings.cwd, processes, settings.kill_delay, notify, session.described, sandbox)
    approval = ProjectHookApproval(settings.hooks, settings.ink_home, asker, notify, settings.cwd)
    return HookSet(settings.hooks, context, approval)


def permission_hook(
    settings: Settings, asker: PermissionBroker | None, notify: Callable[[str], None]
) -> BeforeToolStep:
    """The settings' permission policy, judging a call by what its tool (among its run's tools) says of
    itself and what the pre_tool hooks answered (the step before it), in the one precedence (R37),
    asking through ``asker`` (None: nobody can answer; R4: a refusal is the call's error result). Its
    notes to the user (print mode's refusals) go to ``notify``."""
    from ink.permissions import build_permission_hook

    return build_permission_hook(settings, asker, notify=notify)


def open_session(
    settings: Settings, choice: SessionChoice
) -> tuple[SessionStore | None, SessionHandle | None, History, Settings]:
    """The session store, the open session (None with ``--no-session``), the history to start from, and
    the settings to go on with: a resumed session goes on with its own model (the last ``model_change``
    it recorded, a ``set_model``'s), unless this invocation named a model or provider on its command
    line. With ``--no-session``, ``--continue``/``--resume`` still load the history but write nothing."""
    if settings.no_session and choice == NEW_SESSION:
        return None, None, History(), settings  # nothing to read or write: the store is not even imported
    from ink.store import SessionStore

    store = SessionStore(settings.session_dir, secrets=settings.secrets, on_error=_session_write_failed)
    target = _chosen(store, settings, choice)
    if settings.no_session:
        loaded = store.load(target) if target is not None else None
        history = History(loaded.messages) if loaded is not None else History()
        return None, None, history, resumed_settings(settings, loaded)
    if target is None:
        handle = store.create(settings.cwd, settings.model, settings.provider)
        return store, handle, handle.history, settings
    handle = store.resume(target)
    settings = resumed_settings(settings, handle.loaded)
    loaded = handle.loaded
    if loaded is not None and (loaded.model, loaded.provider) != (settings.model, settings.provider):
        handle.record_model_change(settings.model, settings.provider)
    return store, handle, handle.history, settings


def resumed_settings(settings: Settings, loaded: LoadedSession | None) -> Settings:
    """``settings`` with the resumed session's model (and provider), unless the command line chose for
    this invocation (``--model``, or a ``--provider`` other than the session's) or the session's model
    cannot be had here (another provider without its key, the local model server: a warning says so)."""
    if loaded is None or (loaded.model, loaded.provider) == (settings.model, settings.provider):
        return settings
    named = settings.origins.get
    if named("model", "").startswith("--") or (
        named("provider", "").startswith("--") and settings.provider != loaded.provider
    ):
        return settings
    if "local" in (loaded.provider, settings.provider) and loaded.provider != settings.provider:
        return settings  # its address is the local server's, which only its own part knows
    try:
        return settings_for(settings, loaded.model, loaded.provider)
    except ValueError as exc:
        log.warning("going on with %s instead of the session's %s: %s", settings.model, loaded.model, exc)
        return settings


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


def build_tools(
    settings: Settings,
    processes: ProcessRegistry,
    sandbox: Sandbox | None = None,
    *,
    jobs: JobRegistry | None = None,
) -> list[Tool]:
    """ink's own tools (``read``, ``write``, ``edit``, ``bash``, ``grep``, ``glob``, ``ls``; with ``jobs``,
    bash's background jobs and ``job_output``, ``job_kill``)."""
    from ink.tools import default_tools

    return list(
        default_tools(settings.cwd, processes, kill_delay=settings.kill_delay, sandbox=sandbox, jobs=jobs)
    )


class RegistryReaper:
    """The controller's ``Reaper`` (R35): ends every process tree still registered after a run."""

    def __init__(
        self,
        processes: ProcessRegistry,
        kill_delay: float,
        spared: Sequence[Callable[[], Sequence[ProcessEntry]]] = (),
    ) -> None:
        self._processes = processes
        self._kill_delay = kill_delay
        self._spared = spared  # each part's processes that live as long as the app (MCP servers)

    async def reap(self) -> Sequence[Survivor]:
        spared = [entry for kept in self._spared for entry in kept()]
        if not spared:  # every registered tree, and the orphans that came back to ink
            return tuple(await self._processes.terminate_all(self._kill_delay))
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
