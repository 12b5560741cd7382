"""The pieces ``build_app`` puts together, each made from the settings and what it needs: the tools, the
``task`` tool, the hooks, the permission step, the workspace checkpoints, and what tells the user of a
problem that is no run's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec

from ink.agent.events import Notice
from ink.agent.loop import PromptHook, StopHook
from ink.agent.tasks import Tasks
from ink.agent.tool import AfterToolHook, BeforeToolStep, Tool
from ink.config import Settings
from ink.config.commands import CommandBook, load_commands
from ink.extend.subagents import SubAgents
from ink.run.events import RunEvent
from ink.run.hub import EventHub
from ink.run.permissions import PermissionBroker
from ink.sandbox import Sandbox
from ink.store.current import CurrentSession
from ink.tools.jobs import JobRegistry
from ink.tools.processes import ProcessRegistry
from ink.wiring.chain import PromptSteps

if TYPE_CHECKING:
    from ink.app.service import AppPart
    from ink.extend.hooks import HookSet
    from ink.rewind import SessionCheckpoints
    from ink.run.budget import Budget
    from ink.run.usage import UsageTotals

log = logging.getLogger(__name__)


class HookRunControl(Protocol):
    """What hooks may know of and do to the run going on (``build_app`` gives the controller's)."""

    def permission_mode(self) -> str: ...

    def stop_run(self, message: str) -> None: ...


class ToolMaker(Protocol):
    """Makes an app's tools (``build_tools``: ink's own), working in its folder, its process registry
    and its sandbox; a tool that starts background jobs starts them in ``jobs`` (R43)."""

    def __call__(
        self, settings: Settings, processes: ProcessRegistry, sandbox: Sandbox, *, jobs: JobRegistry | None
    ) -> Sequence[Tool]: ...


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


def session_checkpoints(settings: Settings, events: EventHub, tasks: Tasks) -> SessionCheckpoints:
    from ink.rewind import SessionCheckpoints  # with its git machinery: only when checkpoints are on

    return SessionCheckpoints(events.emit, tasks, settings.ink_home, settings.cwd)


def build_budget(settings: Settings, usage: UsageTotals, events: EventHub) -> Budget | None:
    """The limits of R45 (``[limits.*]``, ``--max-cost``...), counting what ``usage`` counts and the
    runs' time from ``events``; None when no limit is set (then nothing is counted twice)."""
    if not settings.limits:
        return None
    from ink.run.budget import Budget

    budget = Budget(settings.limits, events.emit)
    usage.counters.append(budget.count)
    events.subscribe(budget.on_event)
    return budget


def build_task_tool(settings: Settings, session: CurrentSession) -> tuple[SubAgents, Tool]:
    """The ``task`` tool (docs/subagents.md): sub-agents start from their run's set-up and emit through
    it; transcripts go next to the open session's file."""
    from ink.config.agents import load_agent_types
    from ink.extend.task import TaskTool

    types, warnings = load_agent_types(
        settings.cwd, settings.ink_home, claude=settings.claude, home=settings.home
    )
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
    *,
    run_control: HookRunControl | None = None,
) -> HookSet | None:
    """The configured hooks (docs/hooks.md) for the loop's seams; None when none are configured. They run
    in the app's process registry (an abort kills them, R35) and report problems as warning notices.
    ``run_control``: the mode calls are judged in now, and how a hook stops the run going on."""
    if not settings.hooks:
        return None
    from ink.extend.hook_approval import ProjectHookApproval
    from ink.extend.hooks import HookContext, HookSet

    context = HookContext(settings.cwd, processes, settings.kill_delay, notify, session.described, sandbox)
    if run_control is not None:
        context = msgspec.structs.replace(
            context, permission_mode=run_control.permission_mode, stop_run=run_control.stop_run
        )
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


def warn_of_rules_for_no_tool(settings: Settings, tools: Sequence[Tool]) -> None:
    """A permission rule naming no tool and no kind of tool (a typo: ``Remove(x)``) covers nothing: say
    so at start, one line each, as a deny rule that quietly covers nothing fails open."""
    from ink.permissions.rules import covering_no_tool

    for rule in covering_no_tool(settings.permission_rules, (tool.spec.name for tool in tools)):
        log.warning(
            "warning: permission rule %s (%s) names no tool of ink's nor a kind of tool (read, edit, "
            "execute, fetch, search): it covers nothing; see docs/permissions.md",
            rule.text,
            rule.where,
        )


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


def custom_commands(settings: Settings) -> CommandBook:
    """The custom slash commands of the user and the project (docs/commands.md); a file that cannot be
    used is a warning in the log."""
    commands = load_commands(settings.cwd, settings.ink_home, claude=settings.claude, home=settings.home)
    for warning in commands.warnings:
        log.warning("%s", warning)
    return commands
