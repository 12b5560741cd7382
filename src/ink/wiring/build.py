"""The composition root: settings in, an ``App`` out (``build_app``), straight-line: the leaves first
(the event stream, the task group, the open session), then what uses them, each passed what it needs,
and last the controller and the app. Nothing is reached through a closure over an object not yet made.
``open_app`` (``ink.wiring.lifetime``) wraps this with the parts' start and end; the pieces are made in
``ink.wiring.pieces``, ``ink.wiring.session`` and ``ink.wiring.processes``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict, Unpack

from ink.agent.tasks import Tasks
from ink.agent.tool import BeforeToolStep
from ink.ai.provider import Provider
from ink.app.plan import PlanKeeper
from ink.app.service import App
from ink.app.setup import RunHooks, RunSetups, ToolRegistry
from ink.config import Settings
from ink.extend.command_limit import CommandToolLimit
from ink.run.controller import RunController
from ink.run.hub import EventHub
from ink.run.permissions import PermissionBroker
from ink.tools.jobs import JobRegistry
from ink.tools.processes import ProcessEntry, ProcessRegistry
from ink.wiring.chain import before_tool_chain
from ink.wiring.pieces import (
    ToolMaker,
    build_budget,
    build_hooks,
    build_task_tool,
    build_tools,
    custom_commands,
    failure_notices,
    hook_seams,
    permission_hook,
    session_checkpoints,
    warn_of_rules_for_no_tool,
    warnings_to,
)
from ink.wiring.processes import RegistryReaper, bang_runner, hard_exit
from ink.wiring.sandboxing import build_sandbox
from ink.wiring.session import NEW_SESSION, SessionChoice, open_session, usage_totals

if TYPE_CHECKING:
    from ink.app.service import AppPart

log = logging.getLogger(__name__)


class AppChoices(TypedDict, total=False):
    """What a frontend chooses for its app besides the settings and the parts, passed on unchanged by
    ``open_app`` and ``start_app`` to ``build_app``."""

    session: SessionChoice  # which history to start from (default: a new session)
    before_tool: BeforeToolStep | None  # replaces the permission step (and the pre_tool hooks before it)
    force_exit: Callable[[int], None] | None  # the second interrupt (R21); default: kill and exit
    can_ask: bool  # False (print mode): nobody answers, so a call that needs a question is refused
    checkpoints: bool  # snapshot the workspace before each input, for rewind (default: on; a part)
    tools: ToolMaker | None  # what makes the tools besides ``task`` (default ``build_tools``: ink's own)
    provider: Provider | None  # the model's provider when not the settings' (a scripted one in tests)


def build_app(settings: Settings, *, parts: Sequence[AppPart] = (), **choices: Unpack[AppChoices]) -> App:
    """The app for ``settings`` and its frontend's ``choices``, every object made once, after what it
    needs and before what uses it (``parts`` are held, not started: ``open_app`` starts them). Call it
    with the event loop running. Raises ``SessionError`` (one clear line) when the session asked for
    cannot be opened, ``AppStartError`` when a sandbox asked for cannot start."""
    events = EventHub()  # first: everything below may tell the user something through it
    tasks = Tasks(on_error=failure_notices(events.emit))
    notify = warnings_to(events.emit)
    current, history, settings = open_session(settings, choices.get("session", NEW_SESSION))
    processes, sandbox = ProcessRegistry(), build_sandbox(settings)
    jobs = JobRegistry(kill_delay=settings.kill_delay, emit=events.emit)  # R43: no run's reaper ends them
    broker = PermissionBroker(events.emit, settings.permission_timeout or None)  # 0: wait for ever
    asker = broker if choices.get("can_ask", True) else None
    link = _HookLink()  # the controller, once it exists, for hooks that read the mode or stop the run
    hooks = build_hooks(settings, processes, asker, notify, current, sandbox, run_control=link)
    replaced = choices.get("before_tool")
    permission = replaced or permission_hook(settings, asker, notify)
    limit = CommandToolLimit()
    kept = session_checkpoints(settings, events, tasks) if choices.get("checkpoints", True) else None
    chain = before_tool_chain(kept, limit, hooks if replaced is None else None, permission)
    agents, task = build_task_tool(settings, current)
    tools = (*(choices.get("tools") or build_tools)(settings, processes, sandbox, jobs=jobs), task)
    warn_of_rules_for_no_tool(settings, tools)
    usage = usage_totals(current)
    budget = build_budget(settings, usage, events)  # R45: None without limits
    seams = RunHooks(chain, *hook_seams(hooks, parts), tasks=tasks, notes=jobs.take_notes, budget=budget)
    setups = RunSetups(settings, ToolRegistry(tools), seams, usage, choices.get("provider"))
    spared: list[Callable[[], Sequence[ProcessEntry]]] = []  # processes a part keeps for the app's life
    controller = RunController(
        setups,
        history,
        modes=setups.modes,
        run_bang=bang_runner(settings, processes),
        reaper=RegistryReaper(processes, settings.kill_delay, spared),
        force_exit=choices.get("force_exit") or hard_exit(processes),
        permissions=broker,
        tasks=tasks,
        changed_files=kept.changed_files if kept is not None else None,
        events=events,
        running_jobs=jobs.running,
    )
    link.controller, link.setups = controller, setups
    return App(
        setups,
        controller,
        current,
        processes=processes,
        tasks=tasks,
        events=events,
        permission=permission,
        commands=custom_commands(settings),
        command_limit=limit,
        agents=agents,
        parts=(*((kept,) if kept is not None else ()), PlanKeeper(events, current), *parts),
        sandbox=sandbox,
        spared=spared,
        jobs=jobs,
        budget=budget,
    )


class _HookLink:
    """``HookRunControl`` for the app's hooks: made before the controller they need, bound after."""

    controller: RunController | None = None
    setups: RunSetups | None = None

    def permission_mode(self) -> str:
        return self.setups.settings.permission_mode if self.setups is not None else "ask"

    def stop_run(self, message: str) -> None:
        if self.controller is not None:
            self.controller.abort("hook", message)
