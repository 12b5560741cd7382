"""The tool scheduler: grouping, event order, ordered delivery, abort (R2-R6, R19, R20, R33, R34)."""

from __future__ import annotations

import asyncio
from typing import Any

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent, ToolCancelling, ToolEnd, ToolSettled, ToolUpdate
from ink.agent.live import UPDATE_TAIL_CHARS
from ink.agent.scheduler import NOT_STARTED, SchedulerSettings, ToolScheduler
from ink.agent.tasks import cancel_and_wait
from ink.agent.tool import Refusal, ToolCallContext
from ink.ai.messages import ToolCall
from tests.events import events_of
from tests.scripted_tools import ScriptedTool
from tests.waiting import wait_until


def call(call_id: str, name: str, **args: object) -> ToolCall:
    return ToolCall(call_id, name, args)


def kinds(events: list[AgentEvent]) -> list[tuple[str, str]]:
    return [(e.type, getattr(e, "tool_call_id", "")) for e in events]


def make(tools: list[ScriptedTool], **settings: float) -> tuple[ToolScheduler, list[AgentEvent], AbortSignal]:
    events: list[AgentEvent] = []
    signal = AbortSignal()
    scheduler = ToolScheduler(tools, events.append, signal, SchedulerSettings(**settings))  # type: ignore[arg-type]
    return scheduler, events, signal


async def test_R3_second_call_finishing_first_settles_first_but_ends_second() -> None:
    slow = ScriptedTool("slow")
    fast = ScriptedTool("fast")
    scheduler, events, _ = make([slow, fast])
    batch = asyncio.ensure_future(scheduler.run_batch([call("A", "slow"), call("B", "fast")]))
    slow.gate("A")
    await fast.started_event("B").wait()
    await wait_until(lambda: any(e.type == "tool_settled" for e in events), what="B settled")
    slow.gate("A").set()
    results = await batch
    assert [r.tool_call_id for r in results] == ["A", "B"]
    order = kinds(events)
    assert order.index(("tool_settled", "B")) < order.index(("tool_settled", "A"))
    assert [x for x in order if x[0] == "tool_end"] == [("tool_end", "A"), ("tool_end", "B")]
    assert order.index(("tool_settled", "A")) < order.index(("tool_end", "A"))
    # R6: each result shown once at settle and delivered once at end, never twice each
    for cid in "AB":
        assert order.count(("tool_settled", cid)) == 1
        assert order.count(("tool_end", cid)) == 1
        assert order.count(("tool_start", cid)) == 1
        assert order.count(("tool_running", cid)) == 1


async def test_R2_tool_start_is_emitted_before_the_pre_execution_hook_runs() -> None:
    events: list[AgentEvent] = []
    started_when_asked: list[bool] = []

    async def hook(ctx: ToolCallContext) -> Refusal | None:
        started_when_asked.append(("tool_start", ctx.call.id) in kinds(events))
        return None

    scheduler = ToolScheduler(
        [ScriptedTool("read"), ScriptedTool("bash", safe=False)],
        events.append,
        AbortSignal(),
        before_tool=(hook,),
    )
    await scheduler.run_batch([call("A", "read"), call("B", "bash")])
    assert started_when_asked == [True, True]  # concurrent and serial path alike


async def test_a_hook_that_raises_costs_its_call_not_the_batch() -> None:
    async def hook(ctx: ToolCallContext) -> Refusal | None:
        raise RuntimeError("policy bug")

    events: list[AgentEvent] = []
    scheduler = ToolScheduler([ScriptedTool("read")], events.append, AbortSignal(), before_tool=(hook,))
    [result] = await scheduler.run_batch([call("A", "read")])
    assert result.is_error and "RuntimeError: policy bug" in result.output
    assert [x for x in kinds(events) if x[0] in ("tool_start", "tool_end")] == [
        ("tool_start", "A"),
        ("tool_end", "A"),
    ]


async def test_R4_invalid_call_skips_running_and_settled() -> None:
    tool = ScriptedTool("read")
    scheduler, events, _ = make([tool])
    results = await scheduler.run_batch(
        [call("A", "read", x="ok"), call("B", "read", bogus=1), call("C", "read")]
    )
    assert [r.is_error for r in results] == [False, True, False]
    assert "Invalid arguments for read" in results[1].output and "bogus" in results[1].output
    order = kinds(events)
    assert ("tool_start", "B") in order and ("tool_end", "B") in order
    assert ("tool_running", "B") not in order and ("tool_settled", "B") not in order
    assert [x for x in order if x[0] == "tool_end"] == [("tool_end", c) for c in "ABC"]


async def test_R4_hook_refusal_is_an_error_result_in_order() -> None:
    tool = ScriptedTool("read")

    async def hook(ctx: ToolCallContext) -> Refusal | None:
        return Refusal("denied by rule") if ctx.call.id == "A" else None

    events: list[AgentEvent] = []
    scheduler = ToolScheduler([tool], events.append, AbortSignal(), before_tool=(hook,))
    results = await scheduler.run_batch([call("A", "read"), call("B", "read")])
    assert results[0].output == "denied by rule" and results[0].is_error
    assert not results[1].is_error
    assert ("tool_running", "A") not in kinds(events)
    assert tool.finished == ["B"]


async def test_unknown_tool_gets_an_error_naming_the_available_tools() -> None:
    scheduler, _, _ = make([ScriptedTool("read")])
    [result] = await scheduler.run_batch([call("A", "nope")])
    assert result.is_error and "Unknown tool 'nope'" in result.output and "read" in result.output


async def test_groups_run_in_call_order_and_unsafe_calls_run_alone() -> None:
    read = ScriptedTool("read")
    bash = ScriptedTool("bash", safe=False)
    scheduler, events, _ = make([read, bash])
    calls = [call("1", "read"), call("2", "read"), call("3", "bash"), call("4", "read")]
    await scheduler.run_batch(calls)
    order = kinds(events)
    # the unsafe call starts only after the group before it ended, and the next group after it ended
    assert order.index(("tool_end", "2")) < order.index(("tool_start", "3"))
    assert order.index(("tool_end", "3")) < order.index(("tool_start", "4"))
    assert ("tool_running", "3") not in order  # serial path: start and end only (R3)
    assert read.finished == ["1", "2", "4"] and bash.finished == ["3"]


async def test_R5_duration_counts_from_running_not_from_waiting_for_a_slot() -> None:
    slow = ScriptedTool("slow", work_seconds=0.3)  # simulated work inside the tool
    quick = ScriptedTool("quick")
    scheduler, _, _ = make([slow, quick], max_concurrency=1)
    results = await scheduler.run_batch([call("A", "slow"), call("B", "quick")])
    assert results[0].duration_ms >= 300
    assert results[1].duration_ms < results[0].duration_ms / 3  # its ~300 ms wait for the slot is not counted


async def test_R19_abort_cancels_waiting_calls_and_interrupts_running_ones() -> None:
    tool = ScriptedTool("read")
    scheduler, events, signal = make([tool], max_concurrency=1)
    tool.gate("A")
    batch = asyncio.ensure_future(scheduler.run_batch([call("A", "read"), call("B", "read")]))
    await tool.started_event("A").wait()
    signal.abort("user")
    results = await batch
    assert results[0].interrupted is True
    assert results[1].output == NOT_STARTED and results[1].is_error
    assert "B" not in tool.started
    assert scheduler.tally.interrupted == ["A"] and scheduler.tally.not_started == ["B"]
    order = kinds(events)
    assert order.count(("tool_end", "A")) == 1 and order.count(("tool_end", "B")) == 1
    assert ("tool_running", "B") not in order


async def test_R19_calls_after_an_abort_are_not_run() -> None:
    read = ScriptedTool("read")
    bash = ScriptedTool("bash", safe=False)
    scheduler, events, signal = make([read, bash])
    bash.gate("1")
    batch = asyncio.ensure_future(
        scheduler.run_batch([call("1", "bash"), call("2", "bash"), call("3", "read")])
    )
    await bash.started_event("1").wait()
    signal.abort()
    results = await batch
    assert [r.tool_call_id for r in results] == ["1", "2", "3"]
    assert results[0].interrupted and results[1].output == NOT_STARTED and results[2].output == NOT_STARTED
    assert bash.finished == [] and read.finished == []
    assert [x for x in kinds(events) if x[0] in ("tool_start", "tool_end")] == [
        ("tool_start", "1"),
        ("tool_end", "1"),
        ("tool_start", "2"),
        ("tool_end", "2"),
        ("tool_start", "3"),
        ("tool_end", "3"),
    ]


async def test_R20_a_tool_ignoring_the_abort_is_abandoned_after_the_grace() -> None:
    stubborn = ScriptedTool("stubborn", safe=False, ignores_abort=True)
    scheduler, events, signal = make([stubborn], grace_seconds=0.05)
    gate = stubborn.gate("A")
    batch = asyncio.ensure_future(scheduler.run_batch([call("A", "stubborn")]))
    await stubborn.started_event("A").wait()
    signal.abort()
    [result] = await batch
    assert result.is_error and result.interrupted and "Abandoned" in result.output
    assert "may still be running" in result.output
    assert scheduler.tally.abandoned == ["A"]
    cancelling = events_of(events, ToolCancelling)
    assert len(cancelling) == 1 and cancelling[0].grace_seconds == 0.05
    gate.set()  # the tool swallowed the cancellation: its late result really arrives now
    await wait_until(lambda: "A" in stubborn.finished, what="the late result")
    ends = events_of(events, ToolEnd)
    assert len(ends) == 1 and ends[0].result is result
    assert scheduler.tally.interrupted == []  # R34: abandoned, not also counted as interrupted


async def test_a_tool_that_raises_becomes_an_error_result() -> None:
    broken = ScriptedTool("broken", raises=RuntimeError("disk on fire"))
    scheduler, _, _ = make([broken])
    [result] = await scheduler.run_batch([call("A", "broken")])
    assert result.is_error and "RuntimeError: disk on fire" in result.output


async def test_live_output_is_a_bounded_throttled_tail_that_stops_at_the_result() -> None:
    """tool_update (CONTRACT "Additions"): a flood of output costs a few events, each the latest tail,
    all between tool_running and tool_settled of their call (R3, R6)."""
    flood = tuple(f"line {i}\n" for i in range(20_000))
    noisy = ScriptedTool("noisy", live=flood)
    scheduler, events, _ = make([noisy])
    batch = asyncio.ensure_future(scheduler.run_batch([call("A", "noisy")]))
    noisy.gate("A")
    await noisy.started_event("A").wait()
    noisy.gate("A").set()
    await batch
    updates = [e for e in events if isinstance(e, ToolUpdate)]
    assert 1 <= len(updates) <= 2  # the first chunk at once; the rest waits for the interval, then ends
    assert updates[0].output == "line 0\n"
    assert all(len(u.output) <= UPDATE_TAIL_CHARS for u in updates)
    order = kinds(events)
    assert order.index(("tool_running", "A")) < order.index(("tool_update", "A"))
    assert order[-2:] == [("tool_settled", "A"), ("tool_end", "A")]


async def test_live_output_held_by_the_throttle_is_flushed_while_the_call_runs() -> None:
    slow = ScriptedTool("slow", live=("first\n", "second\n", "third\n"))
    scheduler, events, _ = make([slow])
    batch = asyncio.ensure_future(scheduler.run_batch([call("A", "slow")]))
    slow.gate("A")
    await wait_until(
        lambda: any(isinstance(e, ToolUpdate) and e.output.endswith("third\n") for e in events),
        what="the held output flushed",
    )
    last = [e for e in events if isinstance(e, ToolUpdate)][-1]
    assert last.output == "first\nsecond\nthird\n"
    slow.gate("A").set()
    await batch


async def test_R6_tool_end_says_whether_its_result_was_shown_at_tool_settled() -> None:
    """So that no frontend keeps its own record of what it showed: ``shown`` is True exactly for the
    calls that had a ``tool_settled``."""

    async def hook(ctx: ToolCallContext) -> Refusal | None:
        return Refusal("denied by rule") if ctx.call.id == "B" else None

    events: list[AgentEvent] = []
    scheduler = ToolScheduler(
        [ScriptedTool("read"), ScriptedTool("bash", safe=False)],
        events.append,
        AbortSignal(),
        before_tool=(hook,),
    )
    await scheduler.run_batch([call("A", "read"), call("B", "read"), call("C", "bash")])
    settled = {e.tool_call_id for e in events_of(events, ToolSettled)}
    ends = {e.tool_call_id: e.shown for e in events_of(events, ToolEnd)}
    assert settled == {"A"}  # B was refused (R4), C ran alone
    assert ends == {"A": True, "B": False, "C": False}


class Lingering(ScriptedTool):
    """A tool that takes a moment to clean up once it is cancelled (closing a file, ending a child)."""

    ended: list[str]

    async def run(self, args: Any, ctx: ToolCallContext) -> Any:
        try:
            return await super().run(args, ctx)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # its clean-up; a cancel must wait for it, not leave it behind
            self.ended.append(ctx.tool_call_id)
            raise


async def test_a_cancelled_batch_has_awaited_every_call_it_cancelled() -> None:
    """Only the run's own cancellation (the app closing) cancels a batch: when the cancel returns, every
    tool it cancelled has ended, concurrent group and lone call alike (the task group owns them)."""
    group, alone = Lingering("read"), Lingering("bash", safe=False)
    group.ended, alone.ended = [], []
    for tool, call_id in ((group, "A"), (group, "B"), (alone, "C")):
        tool.gate(call_id)
    scheduler, _events, _signal = make([group, alone])
    for calls, started in (([call("A", "read"), call("B", "read")], "B"), ([call("C", "bash")], "C")):
        batch = asyncio.ensure_future(scheduler.run_batch(calls))
        tool = group if started == "B" else alone
        await tool.started_event(started).wait()
        await cancel_and_wait(batch)
        assert batch.cancelled()
    assert sorted(group.ended) == ["A", "B"] and alone.ended == ["C"]
