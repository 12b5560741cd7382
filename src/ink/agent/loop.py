"""The agent loop: model call, tool batch, repeat; steering and follow-up pulled at fixed points.

Rules: R1 (events as they happen), R9-R12 (when input is taken), R18 (abort checked at the top of every
iteration, an abort is a result), R19 (history valid after an abort at any moment), R28 (max iterations),
R29 (a reply without tool calls ends the work, nothing more).

The loop owns no input queue and no UI: it pulls input through a ``LoopInput`` (and tells it which
inputs reached the history) and announces everything through ``emit``. It returns a ``LoopResult``;
only a bug raises.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.budget import BudgetStop, RunBudget
from ink.agent.events import Emit, InputTaken, Source, TakenInput
from ink.agent.history import History
from ink.agent.pause import PauseGate
from ink.agent.reply import stream_reply
from ink.agent.scheduler import NOT_STARTED, CancelTally, SchedulerSettings, ToolScheduler
from ink.agent.tasks import Tasks
from ink.agent.tool import AfterToolHook, BeforeToolStep, Tool
from ink.ai.errors import ContextOverflow, ProviderError, Refused
from ink.ai.messages import AssistantMessage, ToolImage, ToolResult, Usage, UserMessage
from ink.ai.provider import ModelRequest, Provider, ToolSpec
from ink.vocabulary import INPUT_MODES, ErrorStop, InputMode, LoopStop

MAX_ITERATIONS_TEXT = "Not executed: the run reached its limit of {n} tool batches (max iterations)."
REPLY_FAILED_TEXT = "Not executed: the model reply failed or was stopped by the service."


class PendingInput(msgspec.Struct, frozen=True):
    """A user input waiting to enter the history, with its ledger id (R30) and the images attached."""

    input_id: str
    text: str
    mode: InputMode
    images: tuple[ToolImage, ...] = ()


class LoopInput(Protocol):
    """The loop's side of the input queue. The loop pulls at fixed points and holds nothing itself."""

    def take_steering(self) -> Sequence[PendingInput]:
        """The steer inputs waiting now, out of the queue (R9, R13)."""
        ...

    def take_follow_ups(self) -> Sequence[PendingInput]:
        """The follow-ups waiting now; asked only where the run would end (R10, R11, R13)."""
        ...

    def committed(self, input_ids: Sequence[str]) -> None:
        """These taken inputs are in the history now (R31): an abort must not hand them back (R22).
        Called before their ``input_taken`` is emitted."""
        ...

    def refused(self, input_ids: Sequence[str]) -> None:
        """These taken inputs were held back by the prompt hook: they never enter the history, and go
        back to whoever gave them (R30: never dropped silently)."""
        ...


class NoInput:
    """A ``LoopInput`` with nothing queued: a run of one prompt."""

    def take_steering(self) -> Sequence[PendingInput]:
        return ()

    def take_follow_ups(self) -> Sequence[PendingInput]:
        return ()

    def committed(self, input_ids: Sequence[str]) -> None:
        pass

    def refused(self, input_ids: Sequence[str]) -> None:
        pass


class PromptCheck(msgspec.Struct, frozen=True):
    """What the prompt hook let through, the context it adds after those inputs (a user-role message of
    kind ``context``), and the ids of the inputs it held back (the loop hands them back, R30)."""

    accepted: Sequence[PendingInput]
    context: str = ""
    refused: Sequence[str] = ()


PromptHook = Callable[[Sequence[PendingInput], AbortSignal], Awaitable[PromptCheck]]
StopHook = Callable[[int, AbortSignal], Awaitable[str | None]]
"""At the would-end point with nothing queued: text that makes the model go on (as a ``context``
message), or None to let the run complete. Gets how often it already did so in this run."""
MAX_STOP_CONTINUATIONS = 3  # a stop hook that always objects must not keep a run going for ever


class ContextKeeper(Protocol):
    """Keeps the history inside the model's window (``ink.run.compaction`` implements it). It tells the
    user what it did through ``emit`` (a ``Notice``)."""

    async def before_model_call(self, history: History, signal: AbortSignal, emit: Emit) -> None: ...

    async def after_overflow(self, history: History, signal: AbortSignal, emit: Emit) -> bool:
        """The provider said the prompt is too long: shrink the history; True if a retry may succeed."""
        ...


class LoopSetup(msgspec.Struct, frozen=True):
    """What one run of the loop works with: provider, model, prompt, tools and limits. Read once, at the
    run's start, and handed to every call of the run (``ToolCallContext.setup``): a sub-agent starts
    from it (R13). ``before_tool``: the checks every call passes, in order (``ink.agent.before_tool``).
    ``source``: the sub-agent this run is (None: the user's own run)."""

    provider: Provider
    model: str
    system_prompt: str
    tools: Sequence[Tool] = ()
    max_iterations: int | None = None
    max_tokens: int = 8192
    scheduler: SchedulerSettings = msgspec.field(default_factory=SchedulerSettings)
    before_tool: Sequence[BeforeToolStep] = ()
    after_tool: AfterToolHook | None = None
    on_prompt: PromptHook | None = None
    on_stop: StopHook | None = None
    context: ContextKeeper | None = None
    options: Mapping[str, Any] = msgspec.field(default_factory=dict)  # provider-specific request fields
    offer: Callable[[Sequence[Tool]], Sequence[ToolSpec]] | None = None
    """Which specs a model call is given (default: every tool's); tools not offered still run when called.
    Lets many MCP tools be loaded on demand (``ink.mcp.catalogue``)."""
    joining: Callable[[], Sequence[Tool]] | None = None
    """Tools that joined the session after this run started (an MCP server's ``tools/list_changed``):
    asked at each model call, so the next request offers them, and by the scheduler for a call naming a
    tool ``tools`` lacks. The rest of the set-up stays as the run started with it."""
    # the owner of background work (reply drains): the app's
    tasks: Tasks = msgspec.field(default_factory=Tasks)
    source: Source | None = None
    notes: Callable[[], str] | None = None
    """ink's news for the model since its last request (a background job ended, R43): asked before each
    model call; a text is appended to the history as a user-role ``context`` message, so the request
    stays valid for strict APIs and the note is in the session file. Not for sub-agents."""
    pause: PauseGate | None = None
    """Where the run holds while paused (R44), before each model call and before each tool call starts:
    the controller's gate; a sub-agent's is a child of its parent run's (``ink.agent.pause``)."""
    budget: RunBudget | None = None
    """Asked at the same safe points (R45): a limit used up ends the run there (``ink.agent.budget``);
    a sub-agent's counts toward its parent's."""


class RunError(msgspec.Struct, frozen=True):
    """The one error a run fails with, whatever failed: its stop reason (``refused`` or ``error``),
    what the user is told (``str()``, ``run_end.error``) and the exception behind it (a
    ``ProviderError``, or a bug of ink)."""

    stop: ErrorStop
    message: str
    cause: BaseException

    @classmethod
    def of(cls, exc: BaseException) -> RunError:
        if isinstance(exc, Refused):
            return cls("refused", str(exc), exc)
        if isinstance(exc, ProviderError):
            return cls("error", str(exc), exc)
        return cls("error", f"internal error: {type(exc).__name__}: {exc}", exc)

    def __str__(self) -> str:
        return self.message


class LoopResult(msgspec.Struct, frozen=True):
    """``error`` is set exactly when ``stop_reason`` is ``refused`` or ``error``."""

    stop_reason: LoopStop
    usage: Usage
    batches: int
    tally: CancelTally = msgspec.field(default_factory=CancelTally)
    error: RunError | None = None
    budget: BudgetStop | None = None  # the limit that ended the run (stop reason ``budget``)

    @classmethod
    def failed(cls, exc: BaseException, usage: Usage, batches: int, tally: CancelTally) -> LoopResult:
        error = RunError.of(exc)
        return cls(error.stop, usage, batches, tally, error)


async def run_loop(
    history: History,
    first_input: Sequence[PendingInput],
    setup: LoopSetup,
    signal: AbortSignal,
    emit: Emit,
    inputs: LoopInput | None = None,
) -> LoopResult:
    """Run until the model stops with nothing queued, the run is aborted, fails, or hits max iterations."""
    source = inputs if inputs is not None else NoInput()
    tools = ToolScheduler(
        setup.tools,
        emit,
        signal,
        setup.scheduler,
        setup.before_tool,
        setup.after_tool,
        setup=setup,
        history=history,
        source=setup.source,
        pause=setup.pause,
        joining=setup.joining,
        budget=setup.budget,
    )
    usage = Usage()
    batches = stops = 0

    def result(stop: LoopStop, over: BudgetStop | None = None) -> LoopResult:
        return LoopResult(stop, usage, batches, tools.tally, budget=over)

    def hand_back(pending: Sequence[PendingInput], over: BudgetStop) -> LoopResult:
        """R45: the budget is used up; input the run took goes back to the user with the queue."""
        if pending:
            source.refused([item.input_id for item in pending])
        return result("budget", over)

    async def commit(pending: Sequence[PendingInput]) -> bool:
        context = ""
        if pending and setup.on_prompt is not None:
            check = await setup.on_prompt(pending, signal)
            pending, context = check.accepted, check.context
            if check.refused:
                source.refused(check.refused)
        for mode in INPUT_MODES:
            taken = [i for i in pending if i.mode == mode]
            for item in taken:
                history.append(UserMessage(item.text, input_id=item.input_id, images=item.images or None))
            if taken:
                source.committed([i.input_id for i in taken])
                emit(InputTaken(mode, tuple(TakenInput(i.input_id, i.text) for i in taken)))
        if pending and context:
            history.append(UserMessage(context, kind="context"))
        return bool(pending)

    if first_input and (over := _over_budget(setup)) is not None:
        return hand_back(first_input, over)  # a session's budget used up: not a word to the model
    if first_input and not await commit(first_input):
        return result("completed")  # the prompt hook held every input back: there is nothing to answer
    skip_steer_poll = False
    while True:
        if signal.aborted:  # R18
            return result("aborted")
        if setup.pause is not None and setup.pause.holding:  # R44: before the steer poll, so input
            await setup.pause.hold(signal, emit, "model_call")  # queued meanwhile goes with this call
            if signal.aborted:
                return result("aborted")
        if (over := _over_budget(setup)) is not None:  # R45: the next safe point
            return result("budget", over)
        if not skip_steer_poll:
            await commit(source.take_steering())  # R9 (a)
        skip_steer_poll = False
        reply = await _model_call(history, setup, tools, signal, emit)
        if isinstance(reply, ProviderError):  # R27: refused or failed, one channel either way
            return LoopResult.failed(reply, usage, batches, tools.tally)
        if reply is not None:
            usage += reply.usage  # an aborted reply's tokens were spent too
        if reply is None or reply.stop_reason == "aborted":
            return result("aborted")
        calls = reply.tool_calls
        if calls:
            if setup.max_iterations is not None and batches >= setup.max_iterations:  # R28
                _append_all(history, tools.skip(calls, MAX_ITERATIONS_TEXT.format(n=batches)))
                return result("max_iterations")
            _append_all(history, await tools.run_batch(calls))
            batches += 1
            continue
        if signal.aborted:  # landed while the reply finished: queued input must not be taken now
            return result("aborted")
        if (over := _over_budget(setup)) is not None:  # the work is done; what is queued goes back
            pending = [*source.take_steering(), *source.take_follow_ups()]
            return hand_back(pending, over) if pending else result("completed")
        # R11: the would-end point: steer first, then follow-up, else completed. R12: skip next poll.
        skip_steer_poll = await commit(source.take_steering()) or await commit(source.take_follow_ups())
        if skip_steer_poll:
            continue
        objection = await _stop_objection(setup, stops, signal)
        if objection is None or signal.aborted:
            return result("completed")
        history.append(UserMessage(objection, kind="context"))
        stops += 1


def _over_budget(setup: LoopSetup) -> BudgetStop | None:
    return setup.budget.reached() if setup.budget is not None else None


async def _stop_objection(setup: LoopSetup, stops: int, signal: AbortSignal) -> str | None:
    if setup.on_stop is None or stops >= MAX_STOP_CONTINUATIONS:
        return None
    return await setup.on_stop(stops, signal)


async def _model_call(
    history: History, setup: LoopSetup, tools: ToolScheduler, signal: AbortSignal, emit: Emit
) -> AssistantMessage | ProviderError | None:
    """One model call; None when aborted before anything arrived.

    After a context overflow the context keeper may shrink the history, and the call is sent once more.
    """
    note = setup.notes() if setup.notes is not None else ""
    if note:
        history.append(UserMessage(note, kind="context"))
    for attempt in (1, 2):
        if setup.context is not None:
            await setup.context.before_model_call(history, signal, emit)
        request = ModelRequest(
            model=setup.model,
            system=setup.system_prompt,
            messages=history.messages,
            tools=offered(setup),
            max_tokens=setup.max_tokens,
            options=setup.options,
        )
        reply = await stream_reply(setup.provider, request, signal, emit, tasks=setup.tasks)
        overflowed = isinstance(reply.error, ContextOverflow) and reply.message is None
        keeper = setup.context if overflowed and attempt == 1 else None
        if keeper is not None and await keeper.after_overflow(history, signal, emit):
            continue
        message, error = reply.message, reply.error or _refusal(reply.message)
        # R19: keep what arrived; complete calls of a cut-off or refused reply get "not executed" results.
        if message is not None:
            history.append(message)
            if message.stop_reason == "aborted" or error is not None:
                why = NOT_STARTED if error is None else REPLY_FAILED_TEXT
                _append_all(history, tools.skip(message.tool_calls, why))
        return error or message
    raise AssertionError("unreachable: the second attempt always returns")


def _refusal(message: AssistantMessage | None) -> ProviderError | None:
    """A reply the service itself stopped (a content filter, a refusal) fails the run: its tool calls
    must not run, and the user must see why, not a truncated answer passed off as complete."""
    if message is None or message.stop_reason != "error":
        return None
    return Refused(message.error_message or "the service stopped the reply", provider=message.provider)


def _append_all(history: History, results: Sequence[ToolResult]) -> None:
    for result in results:
        history.append(result)


def offered(setup: LoopSetup) -> list[ToolSpec]:
    """The tool specs a model call of the run is given: its tools and those that joined since it started,
    as ``setup.offer`` chooses (default: all)."""
    tools = (*setup.tools, *setup.joining()) if setup.joining is not None else setup.tools
    return list(setup.offer(tools)) if setup.offer is not None else [t.spec for t in tools]
