"""A run controller wired to a scripted model, with event-based waiting.

The model is the in-memory ``ScriptedProvider`` (the loop's and the controller's rules, R1-R36, at
in-process speed) or a real provider speaking HTTP to the fake server (where the wire matters: a stream
closed on abort). Everything else is real: the controller, the loop, the tools' scheduler. Tests wait
for events (``wait_event``), never for time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ink.agent.abort import AbortSignal, run_unless_aborted
from ink.agent.loop import LoopSetup
from ink.agent.scheduler import SchedulerSettings
from ink.agent.tool import Tool
from ink.ai.messages import Message, ToolResult, UserMessage
from ink.ai.provider import Provider
from ink.run.controller import BangOutput, Modes, RunController
from ink.run.events import RunEnd, RunEvent
from tests.ai.helpers import provider_for
from tests.events import events_of, matches
from tests.fakeserver import FakeModelServer
from tests.scripted_provider import ScriptedProvider

Predicate = Callable[[RunEvent], bool]
E = TypeVar("E")


@dataclass
class Harness:
    server: FakeModelServer | ScriptedProvider
    protocol: str = "openai"
    tools: Sequence[Tool] = ()
    modes: Modes = field(default_factory=Modes)
    max_iterations: int | None = None
    grace_seconds: float = 10.0
    bang_outputs: list[str] = field(default_factory=list)
    reaper: Any = None
    hold_bangs: bool = False
    before_tool: Sequence[Any] = ()
    bang_exit_code: int | None = 0

    def __post_init__(self) -> None:
        self._http = None
        self.provider: Provider
        if isinstance(self.server, ScriptedProvider):
            self.provider = self.server
        else:
            self.provider = self._http = provider_for(self.protocol, self.server)
        self.setup = LoopSetup(  # what each run starts with: a test may change it between runs
            self.provider,
            model="fake-model",
            system_prompt="You are a test.",
            tools=self.tools,
            max_iterations=self.max_iterations,
            scheduler=SchedulerSettings(grace_seconds=self.grace_seconds),
            before_tool=self.before_tool,
        )
        self.forced_exits: list[int] = []
        self.bang_release = asyncio.Event()
        self.bang_commands: list[str] = []
        self.controller = RunController(
            lambda: self.setup,
            modes=lambda: self.modes,  # read at each run's start: a test may change them between runs
            run_bang=self._bang,
            reaper=self.reaper,
            force_exit=self.forced_exits.append,
        )
        self.events: list[RunEvent] = []
        self._waiters: list[tuple[Predicate, asyncio.Future[RunEvent]]] = []
        self.controller.subscribe(self._on_event)

    async def _bang(self, command: str, signal: AbortSignal) -> BangOutput:
        """A scripted shell: records the command; waits for ``bang_release`` when ``hold_bangs``."""
        self.bang_commands.append(command)
        if self.hold_bangs:
            outcome = await run_unless_aborted(self.bang_release.wait(), signal)
            if outcome.aborted:
                return BangOutput(f"{command} interrupted", None, interrupted=True)
        return BangOutput(f"ran {command}", self.bang_exit_code)

    def _on_event(self, event: RunEvent) -> None:
        self.events.append(event)
        for waiter in list(self._waiters):
            predicate, future = waiter
            if not future.done() and predicate(event):
                future.set_result(event)
                self._waiters.remove(waiter)

    async def wait_for(self, predicate: Predicate, *, after: int = 0, timeout: float = 10.0) -> RunEvent:
        """The first event matching ``predicate`` from index ``after`` on, waiting if none came yet."""
        for event in self.events[after:]:
            if predicate(event):
                return event
        future: asyncio.Future[RunEvent] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return await asyncio.wait_for(future, timeout)

    async def wait_event(self, kind: type[E], *, after: int = 0, **fields: Any) -> E:
        """The first event of class ``kind`` (from index ``after`` on) whose fields equal ``fields``."""
        event = await self.wait_for(lambda e: isinstance(e, kind) and matches(e, fields), after=after)
        assert isinstance(event, kind)
        return event

    async def settled(self, timeout: float = 10.0) -> None:
        await asyncio.wait_for(self.controller.wait_idle(), timeout)

    async def next_run_completes(self, text: str = "next") -> bool:
        """Submit ``text`` and wait for its run: True when it completed, i.e. the strict fake server
        accepted the history it was sent with."""
        self.controller.submit(text)
        await self.settled()
        return self.run_ends()[-1].stop_reason == "completed"

    def run_ends(self) -> list[RunEnd]:
        return events_of(self.events, RunEnd)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    @property
    def history(self) -> Sequence[Message]:
        return self.controller.history.messages

    def user_texts(self) -> list[str]:
        return [m.text for m in self.history if isinstance(m, UserMessage)]

    def results(self) -> list[ToolResult]:
        return [m for m in self.history if isinstance(m, ToolResult)]

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
