"""``App``: everything one ink session runs on, and the operations every frontend shares (submit with
custom commands, model and session switches, ``/compact``, the one clean-up call ``aclose``); and
``AppPart``, what has a start and an end in its lifetime.

App parts (the MCP servers, the local model server, the workspace checkpoints): ``ink.wiring.parts``
lists those the settings call for. ``open_app`` (``ink.wiring.lifetime``) drives them: every part's
``prepare`` (before anything is built: a part may give the settings something the app needs, such as the
model server's address), then, once the app is built, every part's ``start``, in the order of
``App.parts``; ``App.aclose`` closes them in reverse (``close_parts``). A part whose ``prepare`` or
``start`` raises makes ``open_app`` close the others and raise ``AppStartError``. A part with an
``on_prompt`` step joins every run's prompt steps (``ink.wiring.chain.PromptSteps``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.history import History
from ink.agent.tasks import Tasks
from ink.agent.tool import BeforeToolStep, Tool
from ink.ai.provider import Provider
from ink.app.jobs import enter_session, remove_scratch, scratch_folder
from ink.app.setup import Offer, RunSetups, ToolRegistry, settings_for
from ink.config import Settings
from ink.config.commands import CommandBook
from ink.config.keys import PERMISSION_MODES, PermissionMode
from ink.extend.command_limit import CommandToolLimit
from ink.extend.subagents import SubAgents
from ink.run.compaction import Compactor
from ink.run.controller import Modes, QueueError, RunController, Submitted
from ink.run.hub import EventHub
from ink.run.usage import UsageTotals
from ink.sandbox import Sandbox, no_sandbox
from ink.store.current import CurrentSession
from ink.tools.jobs import JobRegistry
from ink.tools.processes import ProcessEntry, ProcessRegistry
from ink.vocabulary import InputMode, TakeMode

if TYPE_CHECKING:
    from ink.ai.messages import ToolImage
    from ink.rewind import SessionCheckpoints
    from ink.run.budget import Budget
    from ink.store import SessionHandle, SessionInfo, SessionStore

log = logging.getLogger(__name__)

P = TypeVar("P", bound="AppPart")
TASKS_BOUND = 2.0  # seconds ``aclose`` waits for background tasks once they are cancelled


class App:
    """Everything one ink session runs on, built once by ``build_app`` (``open_app`` also starts and
    ends its parts), and what every frontend does with it. ``aclose`` is the one clean-up call."""

    def __init__(
        self,
        setups: RunSetups,
        controller: RunController,
        current_session: CurrentSession,
        *,
        processes: ProcessRegistry,
        tasks: Tasks,
        events: EventHub,
        permission: BeforeToolStep | None = None,
        commands: CommandBook | None = None,
        command_limit: CommandToolLimit | None = None,
        agents: SubAgents | None = None,
        parts: Sequence[AppPart] = (),
        sandbox: Sandbox | None = None,
        spared: list[Callable[[], Sequence[ProcessEntry]]] | None = None,
        jobs: JobRegistry | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.setups = setups  # the settings, the tool registry: what each run's set-up is made of
        self.controller = controller
        self.current_session = current_session  # the session open now, and the store it came from
        self.processes = processes
        self.tasks = tasks  # every background task of the app (reply drains, run drivers, part work)
        self.events = events  # every event of the app, the controller's included (frontends subscribe)
        self.permission = permission  # the permission step, last of the before-tool chain
        self.commands = commands or CommandBook()  # custom slash commands (docs/commands.md)
        self.command_limit = command_limit  # a step of the before-tool chain: custom commands' tools
        self.agents = agents or SubAgents()  # running sub-agents, for per-agent control
        self.parts = tuple(parts)  # started by ``open_app`` in order, closed by ``aclose`` in reverse
        self.sandbox = sandbox or no_sandbox(setups.settings.cwd)  # what commands run in (R41)
        # processes a part keeps for the app's whole life (the run's reaper spares them)
        self.spared = spared if spared is not None else []
        self.jobs = jobs or JobRegistry(kill_delay=setups.settings.kill_delay)  # R43: the session's
        self.budget = budget  # R45: the limits and what was used (None: no limit set)
        self._job_scratch = scratch_folder(setups.settings.ink_home)  # their output without a session file
        enter_session(self.jobs, self.current_session.handle, self._job_scratch)
        self.current_session.on_switch(lambda handle: enter_session(self.jobs, handle, self._job_scratch))
        self._closed = False
        events.subscribe(self.usage.on_event)
        handle = self.current_session.handle
        self._unsubscribe_session = events.subscribe(handle.on_event) if handle is not None else lambda: None

    @property
    def sessions(self) -> SessionStore | None:
        """Where the sessions are kept (None: sessions are off, ``--no-session``)."""
        return self.current_session.store

    @property
    def checkpoints(self) -> SessionCheckpoints | None:
        """The workspace checkpoints, for rewind (a part; docs/rewind.md), when they are on."""
        from ink.rewind import SessionCheckpoints  # imported by the app that has them, not here first

        return self.part(SessionCheckpoints)

    @property
    def settings(self) -> Settings:
        """What the next run is set up from (a switch of model or mode changes it)."""
        return self.setups.settings

    @property
    def tools(self) -> ToolRegistry:
        """Every tool of the app (``tools.find(name)``), a part's included as they join."""
        return self.setups.registry

    @property
    def provider(self) -> Provider:
        """The current model's provider, wrapped for redaction once (the set-up and the keeper share it)."""
        return self.setups.provider

    @property
    def compactor(self) -> Compactor:
        return self.setups.compactor

    @property
    def usage(self) -> UsageTotals:
        return self.setups.usage

    def part(self, kind: type[P]) -> P | None:
        """The app's part of type ``kind`` (e.g. ``McpPart``), if it has one."""
        return next((p for p in self.parts if isinstance(p, kind)), None)

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
    def session(self) -> SessionHandle | None:
        """The open session (None: nothing is written, ``--no-session``)."""
        return self.current_session.handle

    @property
    def session_id(self) -> str | None:
        return self.current_session.id

    # -- switching model and session -------------------------------------------------------------

    def model_choices(self) -> tuple[str, ...]:
        """The models ``switch_model`` is offered with: the provider's catalogue, the current model
        first when the catalogue does not know it."""
        known, current = self.settings.provider_info.models, self.settings.model
        return tuple(known) if current in known else (current, *known)

    def switch_model(self, model: str, provider: str | None = None) -> None:
        """Later runs use ``model`` (of ``provider``, default: the current one); a run going on keeps
        its model (R13: a run is given its set-up once, at its start). The hooks, tools and permission
        checks stay as they are. Raises ``ValueError`` for an unknown provider, or a model without known
        prices under a cost limit (R45: its cost could not be kept)."""
        settings = settings_for(self.settings, model, provider)
        problem = self.budget.model_problem(settings.model) if self.budget is not None else None
        if problem is not None:
            raise ValueError(f"not switched to {settings.model}: {problem}")
        self.setups.use(settings)
        if self.session is not None:
            self.session.record_model_change(settings.model, settings.provider)

    def set_permission_mode(self, mode: PermissionMode) -> bool:
        """Judge the next tool call in ``mode`` (a run going on included: the policy reads its mode at
        every call); the settings follow, so the status line and the next set-up agree. False, and
        nothing changed, when the permission step is not ink's own policy (a replaced ``before_tool``),
        whose mode ink cannot change."""
        policy = getattr(self.permission, "policy", None)
        if policy is None or getattr(policy, "mode", None) not in PERMISSION_MODES:
            return False
        policy.mode = mode
        self.setups.use(msgspec.structs.replace(self.settings, permission_mode=mode))
        return True

    def set_queue_modes(self, steering: TakeMode | None = None, follow_up: TakeMode | None = None) -> Modes:
        """How queued steer and follow-up input is taken from the next run on (``/modes``, RPC
        ``set_modes``; R13: a run going on keeps its own). The settings follow. Returns the modes now."""
        settings = self.settings
        steering, follow_up = steering or settings.steering_mode, follow_up or settings.follow_up_mode
        self.setups.use(msgspec.structs.replace(settings, steering_mode=steering, follow_up_mode=follow_up))
        return self.setups.modes()

    def new_session(self) -> None:
        """A fresh, empty history (and session file). Raises ``QueueError`` unless idle."""
        self._require_idle("a new session")
        if self.sessions is None:  # --no-session: a fresh history, still nothing written
            self.jobs.leave_session()  # R43: the session's jobs end with it
            self.controller.new_session(History())
            self.usage.new_session()
            self.current_session.switch(None)
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
        handle.going_on_with(self.settings.model, self.settings.provider)
        self._swap_session(handle)
        if loaded is not None:
            self.usage.session = msgspec.structs.replace(loaded.usage, cost_usd=loaded.cost)

    def _require_idle(self, what: str) -> None:
        if self.controller.state != "idle":
            raise QueueError(f"{what} can only start while idle")

    def _swap_session(self, handle: SessionHandle) -> None:
        """End the current session's jobs and close its file; give the controller ``handle``'s history."""
        self.jobs.leave_session()  # R43: recorded as ended with the session, in its own file
        if self.session is not None:
            self.session.close()
        self._unsubscribe_session()
        self._unsubscribe_session = self.events.subscribe(handle.on_event)
        self.controller.new_session(handle.history)
        self.usage.new_session()
        self.current_session.switch(handle)  # what follows the open session (checkpoints) hears it

    # -- tools and commands ----------------------------------------------------------------------

    def add_tools(self, extra: Sequence[Tool], offer: Offer | None = None) -> None:
        """Offer ``extra`` tools from the next run on (a run is given its set-up at its start); ``offer``,
        when given, chooses which tools each model call is given."""
        self.setups.registry.add(extra, offer)

    def compact(self, instructions: str = "") -> bool:
        """``/compact``: summarise the older history now, as a command occupying the controller.
        False when a run is going on (compaction then happens by itself when needed)."""

        async def work(signal: AbortSignal) -> None:
            history = self.controller.history
            await self.compactor.compact(
                history, signal, instructions=instructions, emit=self.controller.emit
            )

        return self.controller.run_command(work)

    # -- the end ---------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Abort any run, wait until it settled, close the session file and the parts (in reverse order:
        the workspace checkpoints, first of them, take the last run's end snapshot last), end every
        process ink started, cancel the background tasks, close the provider. Bounded: the grace period
        of a stuck tool plus the kill delay, plus ``TASKS_BOUND``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.jobs.stop_all()  # R43: their trees end while the run settles; waited for below
        await self.controller.shutdown()
        job_survivors = await self.jobs.aclose()  # R43: with the session, before its file closes
        remove_scratch(self._job_scratch)
        if self.session is not None:
            self.session.close()
        await close_parts(self.parts)
        survivors = await self.processes.terminate_all(self.settings.kill_delay)
        for survivor in [*job_survivors, *survivors]:
            log.warning(
                "process %s (%s) is still running: %s", survivor.pid, survivor.command, survivor.reason
            )
        self.sandbox.close()  # after its commands ended: read-only's private temporary folder goes
        for straggler in await self.tasks.aclose(TASKS_BOUND):
            log.warning("task %s did not end within %.0f s of being cancelled", straggler.name, TASKS_BOUND)
        await self.setups.aclose()


# -- parts: what has a start and an end in the app's lifetime -------------------------------------------


class AppStartError(Exception):
    """A part of the app could not start; the message says which and why (shown as one line, exit 2)."""


class AppPart(Protocol):
    """A part with a start and an end in the app's lifetime. Subclass it to inherit the defaults."""

    name: str  # for messages: "the MCP servers"

    async def prepare(self, settings: Settings) -> Settings:
        """Before anything is built: the settings the app is to be built with (default: unchanged)."""
        return settings

    async def start(self, app: App) -> None:
        """Once the app is built, before the frontend uses it. May hand work to ``app.tasks`` or occupy
        the controller with a command (input that arrives meanwhile is queued, R8)."""
        return None

    async def aclose(self) -> None:
        """End what ``prepare`` and ``start`` began, however far they got. Called once."""
        ...


async def close_parts(parts: Sequence[AppPart]) -> None:
    """``aclose`` each part, last first; one that fails is logged and the others are still closed."""
    for part in reversed(parts):
        try:
            await part.aclose()
        except Exception:
            log.exception("closing %s failed", part.name)
