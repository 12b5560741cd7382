"""The Tool protocol: how the loop, the permission policy and every frontend see a tool.

A tool owns its dependencies (working directory, process registry), set when it is built; per call it
gets only the validated arguments and a ``ToolCallContext``. A tool reports failure by returning
``ToolOutput(is_error=True)``; an exception escaping ``run`` is a bug, caught and shown to the model as an
error result. On abort (``ctx.signal``) a tool stops promptly and returns what it has with
``interrupted=True``; one that does not is abandoned after the grace period (R20).

A tool describes itself, so nothing outside its own module needs its name: ``kind`` says what sort of
work it does (the permission policy's default, ACP's tool kind), and ``describe(args)`` says what one
call will touch (``paths``, ``command``) and gives it a short ``title``, without running anything. Its
result may carry ``details`` for the user only (a file diff, an exit status; ``ink.ai.details``), and
while it runs it may report output through ``ctx.on_update`` (shown as ``tool_update`` events).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias

import msgspec

from ink.agent.abort import AbortSignal
from ink.ai.details import ToolDetail
from ink.ai.messages import ToolCall, ToolImage, ToolResult
from ink.ai.provider import ToolSpec

ToolKind: TypeAlias = Literal["read", "search", "edit", "execute", "fetch", "delegate", "other"]
"""read: reads files or data; search: finds files or text; edit: changes files (or other state);
execute: runs commands; fetch: reaches the network; delegate: hands work to a sub-agent, whose own calls
are each judged; other: anything else. The permission policy judges a call by its tool's kind
(docs/permissions.md): reads and searches run, edits ask in ``ask`` mode, the rest ask unless allowed."""

TOOL_KINDS: tuple[ToolKind, ...] = ("read", "search", "edit", "execute", "fetch", "delegate", "other")


class CallDescription(msgspec.Struct, frozen=True):
    """What one call will do, read from its arguments alone. ``paths``: absolute paths it reads or
    changes (for ``edit`` tools: symlinks followed, so a rule sees the file that really changes);
    ``command``: the shell command it runs; ``line``: where in ``paths[0]`` it starts reading;
    ``preview``: what it proposes to change (for a permission question), when it can be known ahead."""

    title: str
    paths: tuple[Path, ...] = ()
    command: str | None = None
    line: int | None = None
    preview: tuple[ToolDetail, ...] = ()


class ToolOutput(msgspec.Struct, frozen=True):
    """``output`` is what the model reads; ``details`` are for the user only and never sent to it."""

    output: str
    is_error: bool = False
    interrupted: bool = False
    details: tuple[ToolDetail, ...] = ()
    images: tuple[ToolImage, ...] = ()  # for models that take images (the text should name them)


def _ignore(_text: str) -> None:
    return None


class ToolCallContext(msgspec.Struct, frozen=True):
    """``on_update(text)``: more output of the running call (appended); the user sees a bounded, throttled
    tail of it as ``tool_update`` events. Never raises, and costs little when called often."""

    tool_call_id: str
    signal: AbortSignal
    on_update: Callable[[str], None] = _ignore


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    @property
    def kind(self) -> ToolKind: ...

    @property
    def concurrency_safe(self) -> bool:
        """True when calls may run at the same time as other safe calls (reads, searches)."""
        ...

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        """What a call with ``args`` would do. Never raises on odd arguments (they fail validation)."""
        ...

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput: ...


def describe_call(tool: Tool | None, name: str, args: Mapping[str, Any]) -> CallDescription:
    """``tool.describe(args)``, or a bare description naming the call for an unknown tool or one whose
    ``describe`` fails (a description is for showing and judging; it must not break a run)."""
    if tool is not None:
        try:
            return tool.describe(args)
        except Exception:
            pass
    return CallDescription(name)


def find_tool(tools: Iterable[Tool], name: str) -> Tool | None:
    """The tool the model knows as ``name``, or None."""
    return next((tool for tool in tools if tool.spec.name == name), None)


def kind_of(tool: Tool | None) -> ToolKind:
    """The tool's kind, ``other`` for an unknown tool or a kind outside ``ToolKind``."""
    kind = getattr(tool, "kind", "other") if tool is not None else "other"
    return kind if kind in TOOL_KINDS else "other"


class Refusal(msgspec.Struct, frozen=True):
    """A pre-execution hook's "no": the model sees ``reason`` as the call's error result (R4)."""

    reason: str


class Rewrite(msgspec.Struct, frozen=True):
    """A pre-execution hook's "yes, with these arguments" (a hook's ``updatedInput``): the call runs with
    ``arguments``, judged by the hook as a new call; ``note`` is appended to the result the model reads,
    so it knows what really ran. Arguments the tool's schema refuses make the call's result an error."""

    arguments: dict[str, Any]
    note: str


BeforeToolHook = Callable[[ToolCall, AbortSignal], Awaitable[Refusal | Rewrite | None]]
AfterToolHook = Callable[[ToolCall, ToolResult, AbortSignal], Awaitable[ToolResult]]
"""Sees each executed call's result before anyone else and may return a changed one (a note appended
for the model). Not called for calls that never ran. An exception keeps the result as it was."""
