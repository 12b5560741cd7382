"""Tools with scripted behaviour for scheduler and controller tests.

Real implementations of the Tool protocol (no mocks): each call can wait on a gate, announce that it
started, ignore cancellation, or fail. Tests control timing through these events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolKind, ToolOutput
from ink.ai.provider import ToolSpec


@dataclass
class ScriptedTool:
    name: str
    safe: bool = True
    work_seconds: float = 0.0  # simulated work inside the tool
    ignores_abort: bool = False
    raises: Exception | None = None
    gates: dict[str, asyncio.Event] = field(default_factory=dict)  # call id -> released when set
    started: dict[str, asyncio.Event] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)
    live: tuple[str, ...] = ()  # output reported through ctx.on_update as the call starts
    kind: ToolKind = "other"
    schema: Mapping[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {"x": {"type": "string"}},
            "additionalProperties": False,
        }
    )

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, f"scripted tool {self.name}", self.schema)

    @property
    def concurrency_safe(self) -> bool:
        return self.safe

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return CallDescription(f"{self.name} {dict(args)}")

    def started_event(self, call_id: str) -> asyncio.Event:
        return self.started.setdefault(call_id, asyncio.Event())

    def gate(self, call_id: str) -> asyncio.Event:
        return self.gates.setdefault(call_id, asyncio.Event())

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        for text in self.live:
            ctx.on_update(text)
        self.started_event(ctx.tool_call_id).set()
        if self.raises is not None:
            raise self.raises
        if self.work_seconds:
            await asyncio.sleep(self.work_seconds)
        gate = self.gates.get(ctx.tool_call_id)
        if gate is not None:
            if self.ignores_abort:
                await _ignoring_cancellation(gate)
            else:
                waiter = asyncio.ensure_future(gate.wait())
                aborted = asyncio.ensure_future(ctx.signal.wait_aborted())
                await asyncio.wait({waiter, aborted}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                aborted.cancel()
                if ctx.signal.aborted and not gate.is_set():
                    return ToolOutput(f"{self.name} interrupted", is_error=True, interrupted=True)
        self.finished.append(ctx.tool_call_id)
        return ToolOutput(f"{self.name} {ctx.tool_call_id} {dict(args)}")


async def _ignoring_cancellation(gate: asyncio.Event) -> None:
    """A badly behaved tool: it swallows cancellation and goes on until its gate opens, so that a
    result really does arrive after the scheduler abandoned it (R20)."""
    while not gate.is_set():
        try:
            await gate.wait()
        except asyncio.CancelledError:
            continue
