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

Every call is handled with one ``ToolCallContext`` (docs/design/call-context.md): the call, the set-up of
the run it belongs to, a read-only view of the history, the run's ``emit``, the sub-agent it works for
and the abort signal. The before-tool steps get it (one ordered list, ``LoopSetup.before_tool``), the tool
gets it as the steps left it, and the after-tool hook gets it with the result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent, Emit, Source
from ink.agent.history import History, HistoryView
from ink.ai.details import ToolDetail
from ink.ai.messages import ToolCall, ToolImage, ToolResult
from ink.ai.provider import ToolSpec
from ink.vocabulary import Verdict as VerdictKind

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
    ``preview``: what it proposes to change (for a permission question), when it can be known ahead.
    ``leaves_sandbox``: the call asks to run outside the sandbox (R41), for this reason ("" when it gives
    none); None: it runs inside, or there is no sandbox to leave."""

    title: str
    paths: tuple[Path, ...] = ()
    command: str | None = None
    line: int | None = None
    preview: tuple[ToolDetail, ...] = ()
    leaves_sandbox: str | None = None


class ToolOutput(msgspec.Struct, frozen=True):
    """``output`` is what the model reads; ``details`` are for the user only and never sent to it."""

    output: str
    is_error: bool = False
    interrupted: bool = False
    details: tuple[ToolDetail, ...] = ()
    images: tuple[ToolImage, ...] = ()  # for models that take images (the text should name them)


def _ignore(_text: str) -> None:
    return None


def _drop(_event: AgentEvent) -> None:
    return None


class Ruling(msgspec.Struct, frozen=True):
    """What a before-tool step said of a call for a later step to weigh (``ToolCallContext.ruling``): the
    pre_tool hooks' allow, ask or deny (None: nothing), why, and the arguments they would have the call
    run with instead. The permission step weighs it against the rules and the mode (R37)."""

    decision: VerdictKind | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None


class RunSetup(Protocol):
    """The set-up of the run a call belongs to, as a call sees it (``ink.agent.loop.LoopSetup`` is the
    one the loop gives): read once when the run started, never changed while it goes on (R13)."""

    @property
    def tools(self) -> Sequence[Tool]: ...


class ToolCallContext(msgspec.Struct, frozen=True):
    """One tool call and everything it is handled with, made by the scheduler once the call's arguments
    are valid: the same value for every before-tool step, the tool and the after-tool hook.

    ``setup``: the set-up its run started with (a sub-agent starts from it). ``history``: the run's
    history, to read. ``emit``: the run's events (a sub-agent's carry its ``source``). ``ruling``: what
    an earlier step said of the call for a later one to weigh (the pre_tool hooks' answer, weighed by the
    permission step). ``note``: told to the model with the result (a hook changed the call's arguments:
    what really ran). ``unsandboxed``: the permission step let this call run outside the sandbox (R41), as
    it asked; a tool leaves the sandbox only then. ``on_update(text)``: more output of the running call
    (appended); the user sees a bounded, throttled tail of it as ``tool_update`` events. Never raises, and
    costs little when called often."""

    call: ToolCall
    signal: AbortSignal
    setup: RunSetup | None = None
    history: HistoryView = msgspec.field(default_factory=History)
    emit: Emit = _drop
    source: Source | None = None
    ruling: Ruling | None = None
    note: str = ""
    unsandboxed: bool = False
    on_update: Callable[[str], None] = _ignore

    @property
    def tool_call_id(self) -> str:
        return self.call.id

    @property
    def tool(self) -> Tool | None:
        """The tool the call names among its run's tools; None for a name the run does not know."""
        return find_tool(self.setup.tools, self.call.name) if self.setup is not None else None


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


def call_title(tool: Tool | None, name: str, args: Mapping[str, Any]) -> str:
    """A call's title alone (``bash ls``, ``edit src/a.py``), for showing many calls at once: a tool
    whose ``describe`` works out more (a file read, a diff) gives its title cheaply by an optional
    ``title(args)``; any other tool, its description's title."""
    titled = getattr(tool, "title", None)
    if callable(titled):
        try:
            return str(titled(args))
        except Exception:
            pass
    return describe_call(tool, name, args).title


def find_tool(tools: Iterable[Tool], name: str) -> Tool | None:
    """The tool the model knows as ``name``, or None."""
    return next((tool for tool in tools if tool.spec.name == name), None)


def kind_of(tool: Tool | None) -> ToolKind:
    """The tool's kind, ``other`` for an unknown tool or a kind outside ``ToolKind``."""
    kind = getattr(tool, "kind", "other") if tool is not None else "other"
    return kind if kind in TOOL_KINDS else "other"


class Refusal(msgspec.Struct, frozen=True):
    """A before-tool step's "no": the model sees ``reason`` as the call's error result (R4)."""

    reason: str


BeforeToolStep: TypeAlias = Callable[[ToolCallContext], Awaitable["Refusal | ToolCallContext | None"]]
"""One check a call passes before it runs (``LoopSetup.before_tool`` lists them, in order). None: no
objection, the next step is asked. A ``Refusal``: the call is not run, and no later step is asked. A
``ToolCallContext``: go on with it: with a ``ruling`` for a later step to weigh, or with a changed
``call`` (and a ``note`` saying so), which the later steps judge and the tool runs with."""
AfterToolHook: TypeAlias = Callable[[ToolCallContext, ToolResult], Awaitable[ToolResult]]
"""Sees each executed call's result before anyone else and may return a changed one (a note appended
for the model). Not called for calls that never ran. An exception keeps the result as it was."""
