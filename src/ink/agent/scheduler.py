"""Tool scheduling: concurrent where safe, results delivered in call order, clean cancellation.

Rules: SEMANTICS R2-R6 (events and ordering), R17/R19/R20/R33 (abort), R34 (what the receipt counts).

Consecutive concurrency-safe calls form a group that runs at once (bounded by ``max_concurrency``); any
other call runs alone. Groups and lone calls run in call order. Every call gets exactly one
``tool_start`` and one ``tool_end`` and exactly one result, synthetic ones included.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence

import msgspec
from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.before_tool import check_call
from ink.agent.budget import NOT_EXECUTED, RunBudget
from ink.agent.events import Emit, Source, ToolCancelling, ToolEnd, ToolRunning, ToolSettled, ToolStart
from ink.agent.history import History, HistoryView
from ink.agent.live import LiveOutput
from ink.agent.pause import PauseGate
from ink.agent.tasks import cancel_and_wait
from ink.agent.tool import (
    AfterToolHook,
    BeforeToolStep,
    Refusal,
    RunSetup,
    Tool,
    ToolCallContext,
    ToolOutput,
    find_tool,
)
from ink.agent.validation import validate_arguments
from ink.ai.messages import ToolCall, ToolResult
from ink.ai.unicode import sendable_text

log = logging.getLogger(__name__)
NOT_STARTED = "Not executed: cancelled by the user before it started."
ARGUMENTS_UNUSABLE = (
    "Not executed: this call {problem}. Send it again with complete, valid JSON arguments; if a long text "
    "was cut off by the output token limit, write it in smaller pieces."
)


class CancelTally(msgspec.Struct):
    """What an abort did to tool calls, for the receipt (R34)."""

    not_started: list[str] = msgspec.field(default_factory=list)
    interrupted: list[str] = msgspec.field(default_factory=list)
    abandoned: list[str] = msgspec.field(default_factory=list)


class SchedulerSettings(msgspec.Struct, frozen=True):
    """How calls run: the grace after an abort (R20) and how many run at once."""

    grace_seconds: float = 10.0
    max_concurrency: int = 8


class _Tools(msgspec.Struct, frozen=True):
    """The set-up a call of a scheduler made without one sees: its tools."""

    tools: Sequence[Tool]


class ToolScheduler:
    """Runs the tool calls of one model reply. One instance serves a whole run: ``setup`` is the run's
    (each call's context carries it), ``history`` the run's history, ``source`` the sub-agent it is."""

    def __init__(
        self,
        tools: Iterable[Tool],
        emit: Emit,
        signal: AbortSignal,
        settings: SchedulerSettings = SchedulerSettings(),
        before_tool: Sequence[BeforeToolStep] = (),
        after_tool: AfterToolHook | None = None,
        *,
        setup: RunSetup | None = None,
        history: HistoryView | None = None,
        source: Source | None = None,
        pause: PauseGate | None = None,
        joining: Callable[[], Sequence[Tool]] | None = None,
        budget: RunBudget | None = None,
    ) -> None:
        self._tools = {t.spec.name: t for t in tools}
        self._joining = joining  # tools that joined the session after the run started (LoopSetup.joining)
        self._emit = emit
        self._signal = signal
        self._settings = settings
        self._before_tool = tuple(before_tool)
        self._after_tool = after_tool
        self._setup = setup if setup is not None else _Tools(tuple(self._tools.values()))
        self._history = history if history is not None else History()
        self._source = source
        self._pause = pause
        self._budget = budget
        self._hook_lock = asyncio.Lock()
        self.tally = CancelTally()

    async def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        results: list[ToolResult] = []
        for group in self._groups(calls):
            if self._signal.aborted:
                results += self.skip(group, NOT_STARTED)
            elif len(group) == 1 and not self._is_safe(group[0]):
                results.append(await self._run_alone(group[0]))
            else:
                results += await self._run_group(group)
        return results

    def skip(self, calls: Sequence[ToolCall], why: str) -> list[ToolResult]:
        """Give each call a "not executed" result without running it, with its start and end events."""
        results = []
        for call in calls:
            self._emit(ToolStart(call.id, call.name, call.arguments))
            result = ToolResult(call.id, call.name, why, is_error=True)
            self._emit(ToolEnd(call.id, result))
            if self._signal.aborted:
                self.tally.not_started.append(call.id)
            results.append(result)
        return results

    def _groups(self, calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
        groups: list[list[ToolCall]] = []
        for call in calls:
            if self._is_safe(call) and groups and all(self._is_safe(c) for c in groups[-1]):
                groups[-1].append(call)
            else:
                groups.append([call])
        return groups

    def _is_safe(self, call: ToolCall) -> bool:
        tool = self._tool(call.name)
        return tool is not None and tool.concurrency_safe

    def _tool(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is None and self._joining is not None:
            tool = find_tool(self._joining(), name)
        return tool

    async def _run_alone(self, call: ToolCall) -> ToolResult:
        self._emit(ToolStart(call.id, call.name, call.arguments))
        checked = await self._blocked(call) or await self._check(call)
        if isinstance(checked, ToolResult):
            result = checked
        else:
            result = await self._blocked(call) or await self._execute(call, *checked)
        self._emit(ToolEnd(call.id, result))
        return result

    async def _run_group(self, group: Sequence[ToolCall]) -> list[ToolResult]:
        for call in group:
            self._emit(ToolStart(call.id, call.name, call.arguments))
        slots = asyncio.Semaphore(self._settings.max_concurrency)
        tasks = [asyncio.ensure_future(self._run_in_group(call, slots)) for call in group]
        results: list[ToolResult] = []
        try:
            for call, task in zip(group, tasks, strict=True):
                result, settled = await task  # R3: tool_end strictly in call order
                self._emit(ToolEnd(call.id, result, shown=settled))
                results.append(result)
        finally:  # only a cancel of the run itself (the app closing) leaves some: each is awaited
            await asyncio.gather(*(cancel_and_wait(task) for task in tasks))
        return results

    async def _run_in_group(self, call: ToolCall, slots: asyncio.Semaphore) -> tuple[ToolResult, bool]:
        """The call's result, and whether it was announced at ``tool_settled`` (so shown already)."""
        checked = await self._blocked(call) or await self._check(call)
        if isinstance(checked, ToolResult):
            return checked, False  # R4: no tool_running, no tool_settled
        async with slots:
            blocked = await self._blocked(call)
            if blocked is not None:
                return blocked, False
            self._emit(ToolRunning(call.id))
            result = await self._execute(call, *checked)
        self._emit(ToolSettled(call.id, result))  # R6: shown here, seen by the model after the batch
        return result, True

    async def _blocked(self, call: ToolCall) -> ToolResult | None:
        """A call's safe point, before its checks (no hook runs, no question is asked) and again before
        it runs (a question answered meanwhile). While the run is paused it waits here (R44). The
        result of a call that must not start: the run was aborted (R19), or its budget is used up (R45);
        None: go on."""
        if self._pause is not None and self._pause.holding:
            await self._pause.hold(self._signal, self._emit, "tool_call")
        if self._signal.aborted:
            return self._not_started(call)
        over = self._budget.reached() if self._budget is not None else None
        return _error(call, NOT_EXECUTED.format(stop=over)) if over is not None else None

    def _not_started(self, call: ToolCall) -> ToolResult:
        """The result of a call the abort stopped before it started (R19, R34)."""
        self.tally.not_started.append(call.id)
        return ToolResult(call.id, call.name, NOT_STARTED, is_error=True)

    async def _check(self, call: ToolCall) -> tuple[Tool, ToolCallContext] | ToolResult:
        """Validate the arguments and ask the before-tool chain. An error result when either says no,
        or fails: a broken schema or step must cost this call, not the history (R19)."""
        try:
            return await self._checked(call)
        except Exception as exc:
            return _error(call, f"Not executed: ink could not check this call ({type(exc).__name__}: {exc}).")

    async def _checked(self, call: ToolCall) -> tuple[Tool, ToolCallContext] | ToolResult:
        tool = self._valid(call)
        if isinstance(tool, ToolResult):
            return tool
        if not self._before_tool:
            return tool, self._context(call)
        async with self._hook_lock:  # one question to the user at a time
            checked = await check_call(self._before_tool, self._context(call))
        if isinstance(checked, Refusal):
            if self._signal.aborted:  # R34: a question the abort cancelled; the call never started
                self.tally.not_started.append(call.id)
            return _error(call, checked.reason)
        if checked.call is not call:  # checked like the model's own arguments: never run unchecked
            problem = validate_arguments(tool.spec.parameters, checked.call.arguments)
            if problem is not None:
                return _error(
                    call, f"Not executed: {checked.note}, and {call.name} cannot take them: {problem}"
                )
        return tool, checked

    def _context(self, call: ToolCall) -> ToolCallContext:
        return ToolCallContext(call, self._signal, self._setup, self._history, self._emit, self._source)

    def _valid(self, call: ToolCall) -> Tool | ToolResult:
        """The tool ``call`` names when its arguments are valid for it, else the error result."""
        if call.arguments_error is not None:  # the model can correct this; the run goes on
            return _error(call, ARGUMENTS_UNUSABLE.format(problem=call.arguments_error))
        tool = self._tool(call.name)
        if tool is None:
            joined = [t.spec.name for t in self._joining()] if self._joining is not None else []
            known = ", ".join(sorted({*self._tools, *joined})) or "none"
            return _error(call, f"Unknown tool {call.name!r}. Available tools: {known}.")
        problem = validate_arguments(tool.spec.parameters, call.arguments)
        if problem is not None:
            return _error(call, f"Invalid arguments for {call.name}: {problem}")
        return tool

    async def _execute(self, call: ToolCall, tool: Tool, ctx: ToolCallContext) -> ToolResult:
        """Run ``tool`` with the arguments of ``ctx.call`` (a before-tool step may have changed them);
        the result answers ``call``."""
        args = copy.deepcopy(dict(ctx.call.arguments))  # a tool that edits its arguments edits a copy
        started = time.monotonic()
        live = LiveOutput(call.id, self._emit)
        try:
            output = await self._wait_for_tool(call, tool.run(args, replace(ctx, on_update=live.feed)))
        finally:
            live.close()  # R3: nothing of this call is shown after its result
        elapsed_ms = int((time.monotonic() - started) * 1000)
        if output.interrupted and call.id not in self.tally.abandoned:
            self.tally.interrupted.append(call.id)
        text = f"{output.output}\n\n[{ctx.note}]" if ctx.note else output.output  # what really ran
        result = ToolResult(
            call.id,
            call.name,
            sendable_text(text),  # file names, a command's bytes: shown as sent (ink.ai.unicode)
            is_error=output.is_error,
            duration_ms=elapsed_ms,
            interrupted=True if output.interrupted else None,
            details=output.details or None,
            images=output.images or None,
        )
        return await self._after(ctx, result)

    async def _after(self, ctx: ToolCallContext, result: ToolResult) -> ToolResult:
        """The after-tool hook's version of ``result``; the result as it was when the hook fails, or
        once the run is aborted (the model sees what really happened, nothing more runs)."""
        if self._after_tool is None or self._signal.aborted:
            return result
        try:
            return await self._after_tool(ctx, result)
        except Exception:
            log.exception("the after-tool hook failed on %s", ctx.call.name)
            return result

    async def _wait_for_tool(self, call: ToolCall, work: Awaitable[ToolOutput]) -> ToolOutput:
        """Await the tool; after an abort, wait at most the grace period, then abandon it (R20)."""
        task = asyncio.ensure_future(_guarded(call, work))
        aborted = asyncio.ensure_future(self._signal.wait_aborted())
        try:
            await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            grace = self._settings.grace_seconds
            self._emit(ToolCancelling(call.id, grace))
            await asyncio.wait({task}, timeout=grace)
            if task.done():
                return task.result()
        except asyncio.CancelledError:  # the run itself is cancelled (the app closing): the tool ends first
            await cancel_and_wait(task)
            raise
        finally:
            await cancel_and_wait(aborted)
        task.cancel()  # R20: abandoned, the one task not awaited; its late result is dropped either way
        self.tally.abandoned.append(call.id)
        return ToolOutput(
            f"Abandoned: the tool did not stop within the {grace:g} s grace period after the abort. "
            "The operation may still be running.",
            is_error=True,
            interrupted=True,
        )


async def _guarded(call: ToolCall, work: Awaitable[ToolOutput]) -> ToolOutput:
    """A tool's exception is a bug in the tool, not in the run: the model sees it as an error result."""
    try:
        return await work
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return ToolOutput(f"Tool {call.name} failed: {type(exc).__name__}: {exc}", is_error=True)


def _error(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(call.id, call.name, text, is_error=True)
