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

import logging
import os
import signal as _signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ink.agent.abort import AbortSignal
from ink.agent.history import History
from ink.agent.loop import ContextKeeper, LoopSetup
from ink.agent.scheduler import SchedulerSettings
from ink.agent.tool import BeforeToolHook, Tool
from ink.ai.provider import Provider
from ink.config import Settings
from ink.run.controller import BangOutput, Modes, RunController
from ink.run.events import Survivor
from ink.system_prompt import Environment, build_system_prompt
from ink.tools.processes import ProcessRegistry

log = logging.getLogger(__name__)


@dataclass
class App:
    """Everything one ink session runs on. ``aclose`` is the one clean-up call."""

    settings: Settings
    provider: Provider
    processes: ProcessRegistry
    tools: Sequence[Tool]
    controller: RunController

    async def aclose(self) -> None:
        """Abort any run, wait until it settled, end every process ink started, close the provider.
        Bounded: the grace period of a stuck tool plus the kill delay. Idempotent."""
        await self.controller.shutdown()
        survivors = await self.processes.terminate_all(self.settings.kill_delay)
        for survivor in survivors:
            log.warning(
                "process %s (%s) is still running: %s", survivor.pid, survivor.command, survivor.reason
            )
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()


def build_app(
    settings: Settings,
    *,
    history: History | None = None,
    before_tool: BeforeToolHook | None = None,
    context: ContextKeeper | None = None,
    force_exit: Callable[[int], None] | None = None,
) -> App:
    """Build provider, tools, loop set-up and controller. Call it with the event loop running (the
    controller creates asyncio primitives). Raises nothing for valid ``Settings``."""
    processes = ProcessRegistry()
    provider = build_provider(settings)
    tools = build_tools(settings, processes)
    setup = build_loop_setup(settings, provider, tools, before_tool=before_tool, context=context)
    controller = RunController(
        setup,
        history,
        modes=Modes(settings.steering_mode, settings.follow_up_mode),
        run_bang=bang_runner(settings, processes),
        reaper=RegistryReaper(processes, settings.kill_delay),
        force_exit=force_exit or hard_exit(processes),
    )
    return App(settings, provider, processes, tools, controller)


def build_provider(settings: Settings) -> Provider:
    """The provider for ``settings.provider``; its module (and httpx) is imported only here."""
    info = settings.provider_info
    # httpx imports its own command-line client (click, rich, pygments: ~30 ms, and a UI library in the
    # core's process) whenever click happens to be installed; ink never uses it, so keep it out.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    if info.protocol == "anthropic":
        from ink.ai.anthropic import AnthropicProvider

        return AnthropicProvider(api_key=settings.api_key, base_url=settings.base_url, name=info.name)
    from ink.ai.openai import OpenAIProvider

    return OpenAIProvider(api_key=settings.api_key, base_url=settings.base_url, name=info.name)


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
    options = request_options(settings)
    extra: dict[str, Any] = {}
    if options and "options" in LoopSetup.__dataclass_fields__:
        extra["options"] = options
    elif options:
        log.warning(
            "thinking = %r is set but not sent yet: the loop passes no request options", settings.thinking
        )
    return LoopSetup(
        provider=provider,
        model=settings.model,
        system_prompt=build_system_prompt([t.spec for t in tools], Environment.detect(settings.cwd)),
        tools=tuple(tools),
        max_iterations=settings.max_iterations,
        max_tokens=settings.max_tokens,
        scheduler=SchedulerSettings(grace_seconds=settings.grace_seconds),
        before_tool=before_tool,
        context=context,
        **extra,
    )


THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 24576}  # Anthropic budget_tokens per level


def request_options(settings: Settings) -> dict[str, Any]:
    """Provider-specific request fields the settings ask for: reasoning effort / thinking budget."""
    level = settings.thinking
    if level == "off":
        return {}
    if settings.provider_info.protocol == "openai":
        return {"reasoning_effort": level}
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

    def __init__(self, processes: ProcessRegistry, kill_delay: float) -> None:
        self._processes = processes
        self._kill_delay = kill_delay

    async def reap(self) -> Sequence[Survivor]:
        return tuple(await self._processes.terminate_all(self._kill_delay))


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
    """The second interrupt (R21): no more waiting. SIGKILL every registered process group at once,
    flush what can be flushed, and leave with ``status``."""

    def exit_now(status: int) -> None:
        for entry in processes.entries:
            try:
                os.killpg(entry.pgid, _signal.SIGKILL)
            except OSError:
                pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)

    return exit_now
