"""The before-tool chain (docs/design/call-context.md): one ordered list of steps, each given the call's
context; a new check is one entry in that list, asked in its place for every call (R4)."""

from __future__ import annotations

from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent, Source
from ink.agent.history import History
from ink.agent.scheduler import ToolScheduler
from ink.agent.tool import BeforeToolStep, Refusal, Ruling, ToolCallContext
from ink.ai.messages import ToolCall, UserMessage
from tests.scripted_tools import ScriptedTool


class Recorder:
    """A step that notes which call it saw, with what an earlier step said of it, and objects to nothing."""

    def __init__(self, name: str, asked: list[str]) -> None:
        self.name, self.asked = name, asked

    async def __call__(self, ctx: ToolCallContext) -> None:
        said = ctx.ruling.decision if ctx.ruling is not None else "-"
        self.asked.append(f"{self.name}:{ctx.call.id}:{said}")


async def no_bash(ctx: ToolCallContext) -> Refusal | None:
    """The new step: no ``bash``, whatever the later steps would say."""
    return Refusal("Not executed: bash is off here") if ctx.call.name == "bash" else None


async def test_a_new_step_is_one_entry_asked_in_its_place_for_every_call() -> None:
    asked: list[str] = []
    steps: list[BeforeToolStep] = [Recorder("first", asked), Recorder("last", asked)]
    steps.insert(1, no_bash)  # the whole change: one entry in the one list
    read, bash = ScriptedTool("read"), ScriptedTool("bash", safe=False)
    events: list[AgentEvent] = []
    scheduler = ToolScheduler([read, bash], events.append, AbortSignal(), before_tool=steps)
    results = await scheduler.run_batch([ToolCall("r1", "read", {}), ToolCall("b1", "bash", {})])
    assert asked == ["first:r1:-", "last:r1:-", "first:b1:-"]  # the refusal ends the chain: "last" unasked
    assert [(r.is_error, r.output) for r in results] == [
        (False, "read r1 {}"),
        (True, "Not executed: bash is off here"),  # R4: the refusal is the call's result
    ]
    assert bash.finished == []


async def test_every_step_and_the_tool_get_one_context_with_the_run_and_its_notes() -> None:
    history = History([UserMessage("go", input_id="in-1")])
    source = Source("t1", "explore")
    seen: list[ToolCallContext] = []

    async def approve(ctx: ToolCallContext) -> ToolCallContext:
        return replace(ctx, ruling=Ruling("allow", "a test"))

    async def look(ctx: ToolCallContext) -> None:
        seen.append(ctx)

    tool = ScriptedTool("read")
    emitted: list[AgentEvent] = []
    scheduler = ToolScheduler(
        [tool], emitted.append, AbortSignal(), before_tool=(approve, look), history=history, source=source
    )
    await scheduler.run_batch([ToolCall("r1", "read", {"x": "1"})])
    [ctx] = seen
    assert ctx.ruling == Ruling("allow", "a test") and ctx.source == source and ctx.tool is tool
    assert [m.text for m in ctx.history.messages if isinstance(m, UserMessage)] == ["go"]
    ctx.emit(emitted[0])  # the run's own emit
    assert emitted[-1] is emitted[0]


async def test_a_changed_call_goes_on_to_the_later_steps_and_runs_as_changed() -> None:
    asked: list[str] = []

    async def rewrite(ctx: ToolCallContext) -> ToolCallContext | None:
        changed = replace(ctx.call, arguments={"x": "new"})
        return replace(ctx, call=changed, note="a test changed the arguments")

    async def look(ctx: ToolCallContext) -> None:
        asked.append(str(dict(ctx.call.arguments)))

    tool = ScriptedTool("read")
    scheduler = ToolScheduler([tool], lambda _e: None, AbortSignal(), before_tool=(rewrite, look))
    [result] = await scheduler.run_batch([ToolCall("r1", "read", {"x": "old"})])
    assert asked == ["{'x': 'new'}"]  # the later step judged the new call
    assert result.tool_call_id == "r1"
    assert result.output == "read r1 {'x': 'new'}\n\n[a test changed the arguments]"  # and the model is told


async def test_new_arguments_a_step_gives_must_hold_for_the_tool() -> None:
    async def breaks(ctx: ToolCallContext) -> ToolCallContext:
        return replace(ctx, call=replace(ctx.call, arguments={"bogus": 1}), note="a test changed it")

    tool = ScriptedTool("read")
    scheduler = ToolScheduler([tool], lambda _e: None, AbortSignal(), before_tool=(breaks,))
    [result] = await scheduler.run_batch([ToolCall("r1", "read", {})])
    assert result.is_error and "a test changed it, and read cannot take them" in result.output
    assert tool.finished == []
