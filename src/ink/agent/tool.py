"""The Tool protocol: how the loop sees a tool.

A tool owns its dependencies (working directory, process registry), set when it is built; per call it
gets only the validated arguments and a ``ToolCallContext``. A tool reports failure by returning
``ToolOutput(is_error=True)``; an exception escaping ``run`` is a bug, caught and shown to the model as an
error result. On abort (``ctx.signal``) a tool stops promptly and returns what it has with
``interrupted=True``; one that does not is abandoned after the grace period (R20).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ink.agent.abort import AbortSignal
from ink.ai.messages import ToolCall
from ink.ai.provider import ToolSpec


@dataclass(frozen=True, slots=True)
class ToolOutput:
    output: str
    is_error: bool = False
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    tool_call_id: str
    signal: AbortSignal


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    @property
    def concurrency_safe(self) -> bool:
        """True when calls may run at the same time as other safe calls (reads, searches)."""
        ...

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput: ...


@dataclass(frozen=True, slots=True)
class Refusal:
    """A pre-execution hook's "no": the model sees ``reason`` as the call's error result (R4)."""

    reason: str


BeforeToolHook = Callable[[ToolCall, AbortSignal], Awaitable[Refusal | None]]
