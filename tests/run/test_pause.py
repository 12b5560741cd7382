"""R44 Pause, through the real controller, loop and scheduler with the in-memory scripted model: a pause
lets what streams or runs finish, holds what has not started, keeps the queue open, and resume goes on
as if nothing happened; an interrupt during a pause ends the run as always (R17-R23)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ink.agent.events import RunHeld, RunPaused, RunResumed, ToolEnd, ToolStart
from ink.agent.scheduler import NOT_STARTED
from ink.ai.messages import Message, ToolResult, UserMessage, message_to_json
from ink.run.controller import INTERRUPTION_MARKER, QueueError
from ink.run.events import QueueUpdate, RunEnd
from tests.events import events_of
from tests.fakeserver import Gate, Reply, say, text, tool_call
from tests.run.harness import Harness
from tests.scripted_provider import ScriptedProvider
from tests.scripted_tools import ScriptedTool


@pytest.fixture
async def h(model: ScriptedProvider) -> AsyncIterator[Harness]:
    harness = Harness(model, tools=[ScriptedTool("read"), ScriptedTool("slow", safe=False)])
    yield harness
    await harness.aclose()


UNTIMED = ("timestamp", "durationMs")


def comparable(message: Message) -> dict[str, object]:
    """A message as the session writes it, without the fields that say when (they differ run to run)."""
    return {k: v for k, v in message_to_json(message).items() if k not in UNTIMED}


def slow(h: Harness) -> ScriptedTool:
    tool = h.tools[1]
    assert isinstance(tool, ScriptedTool)
    return tool


async def test_R44_pause_while_idle_is_refused_with_the_reason(h: Harness) -> None:
    with pytest.raises(QueueError, match="nothing is running"):
        h.controller.pause()
    assert h.controller.resume() is False  # nothing to resume: nothing changes, nothing is emitted
    assert h.events == []


async def test_R44_a_pause_during_a_reply_lets_it_finish_and_holds_its_tool_call(
    h: Harness, model: ScriptedProvider
) -> None:
    g = Gate()
    model.script(
        Reply([text("let me "), g, text("look"), tool_call("slow", {"x": "1"}, id="s1")]), say("done")
    )
    h.controller.submit("go")
    await g.wait_reached_async()
    assert h.controller.pause() is True
    assert h.controller.pause() is False  # a second pause changes nothing
    g.open()
    held = await h.wait_event(RunHeld)
    assert held.at == "tool_call"
    assert h.history[-1].text == "let me look"  # type: ignore[union-attr]  # the reply finished whole
    assert events_of(h.events, ToolStart, tool_call_id="s1")  # it was handled (R2), not started
    assert not slow(h).started_event("s1").is_set()
    assert len(model.requests) == 1 and h.controller.held and h.controller.state == "running"
    assert h.controller.resume() is True
    await h.settled()
    assert slow(h).finished == ["s1"]
    assert h.run_ends()[-1].stop_reason == "completed"
    assert len(events_of(h.events, RunPaused)) == len(events_of(h.events, RunResumed)) == 1
    assert events_of(h.events, RunResumed)[0].reason == "resume"


async def test_R44_a_pause_while_a_tool_runs_holds_before_the_next_model_call_and_steers_join_it(
    h: Harness, model: ScriptedProvider
) -> None:
    model.script(Reply([tool_call("slow", {}, id="s1")]), say("done"))
    release = slow(h).gate("s1")
    h.controller.submit("go")
    await slow(h).started_event("s1").wait()
    h.controller.pause()
    release.set()  # in-flight tool calls finish
    held = await h.wait_event(RunHeld)
    assert held.at == "model_call"
    assert isinstance(h.history[-1], ToolResult) and not h.history[-1].is_error
    queued = h.controller.submit("steer while paused")  # R44: the queue keeps growing, can be edited
    h.controller.edit_queued(queued.input_id, "edited while paused")
    other = h.controller.submit("cancel me")
    h.controller.cancel_queued(other.input_id)
    assert [q.text for q in h.controller.queue()] == ["edited while paused"]
    assert len(model.requests) == 1
    h.controller.resume()
    await h.settled()
    assert model.user_texts()[1] == ["go", "edited while paused"]  # taken at the next model call (R9)
    assert h.run_ends()[-1].stop_reason == "completed"


async def test_R44_a_tool_batch_finishes_its_started_call_and_holds_the_others(
    h: Harness, model: ScriptedProvider
) -> None:
    calls = [tool_call("slow", {"x": str(i)}, id=f"s{i}") for i in (1, 2, 3)]
    model.script(Reply(calls), say("done"))
    release = slow(h).gate("s1")
    h.controller.submit("go")
    await slow(h).started_event("s1").wait()
    h.controller.pause()
    release.set()
    await h.wait_event(RunHeld, at="tool_call")
    assert slow(h).finished == ["s1"]  # the started call finished; s2 waits; s3 was not reached
    assert not slow(h).started_event("s2").is_set()
    h.controller.resume()
    await h.settled()
    assert slow(h).finished == ["s1", "s2", "s3"]


async def test_R44_pause_and_resume_give_the_same_requests_and_history_as_no_pause(
    model: ScriptedProvider,
) -> None:
    script = [
        Reply([text("a"), tool_call("read", {"x": "1"}, id="r1"), tool_call("slow", {}, id="s1")]),
        Reply([text("b"), tool_call("slow", {"x": "2"}, id="s2")]),
        say("done"),
    ]

    async def run(pause_at: int | None) -> tuple[list[bytes], list[dict[str, object]], list[str]]:
        provider = ScriptedProvider()
        provider.script(*script)
        harness = Harness(provider, tools=[ScriptedTool("read"), ScriptedTool("slow", safe=False)])
        seen: list[object] = []

        def listener(event: object) -> None:
            seen.append(event)
            if len(seen) == pause_at:
                harness.controller.pause()
            if isinstance(event, RunHeld):
                harness.controller.resume()  # synchronously, from inside the hold

        harness.controller.subscribe(listener)
        harness.controller.submit("go")
        await harness.settled()
        bodies = [repr(r.body).encode() for r in provider.requests]
        holds = [e.at for e in events_of(seen, RunHeld)]
        return bodies, [comparable(m) for m in harness.history], holds

    plain_bodies, plain_history, _ = await run(None)
    held_at: set[str] = set()
    for k in range(1, 40):
        bodies, history, holds = await run(k)
        assert bodies == plain_bodies, f"pause at event {k}"
        assert history == plain_history, f"pause at event {k}"
        held_at.update(holds)
    assert held_at == {"model_call", "tool_call"}  # both safe points were held at


async def test_R44_an_interrupt_during_a_pause_ends_the_run_as_always(
    h: Harness, model: ScriptedProvider
) -> None:
    calls = [tool_call("slow", {"x": str(i)}, id=f"s{i}") for i in (1, 2, 3)]
    model.script(Reply(calls), say("never"))
    release = slow(h).gate("s1")
    h.controller.submit("go")
    await slow(h).started_event("s1").wait()
    h.controller.pause()
    release.set()
    await h.wait_event(RunHeld, at="tool_call")
    queued = h.controller.submit("queued while paused")
    h.controller.interrupt()
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "aborted"
    assert end.receipt is not None and end.receipt.not_started == ("s2", "s3")  # R34
    assert [q.input_id for q in end.restored_input] == [queued.input_id]  # R22
    results = {m.tool_call_id: m for m in h.history if isinstance(m, ToolResult)}
    assert not results["s1"].is_error  # it had started: it finished
    assert results["s2"].output == results["s3"].output == NOT_STARTED  # R19: never run
    assert isinstance(h.history[-1], UserMessage) and h.history[-1].text == INTERRUPTION_MARKER  # R23
    resumed = events_of(h.events, RunResumed)
    assert [r.reason for r in resumed] == ["abort"]
    assert h.events.index(resumed[0]) < h.events.index(end)
    assert {e.tool_call_id for e in events_of(h.events, ToolEnd)} == {"s1", "s2", "s3"}
    assert not h.controller.paused and len(model.requests) == 1


async def test_R44_a_run_that_ends_while_paused_lifts_the_pause(h: Harness, model: ScriptedProvider) -> None:
    g = Gate()
    model.script(Reply([text("all "), g, text("done")]))
    h.controller.submit("go")
    await g.wait_reached_async()
    h.controller.pause()
    g.open()  # a text reply: the run completes, nothing was left to hold
    await h.settled()
    assert h.run_ends()[-1].stop_reason == "completed"
    resumed = events_of(h.events, RunResumed)
    assert [r.reason for r in resumed] == ["end"]
    assert h.events.index(resumed[0]) > h.events.index(h.run_ends()[-1])
    assert not h.controller.paused
    with pytest.raises(QueueError):
        h.controller.pause()


async def test_R44_a_run_the_flush_starts_while_paused_holds_too(model: ScriptedProvider) -> None:
    h = Harness(model, tools=[ScriptedTool("slow", safe=False)], max_iterations=1)
    g = Gate()
    model.script(
        Reply([tool_call("slow", {}, id="s1")]),
        Reply([text("more"), g, tool_call("slow", {}, id="s2")]),  # would start batch 2: max_iterations
        say("next answered"),
    )
    h.controller.submit("go")
    await g.wait_reached_async()
    h.controller.submit("next task")  # after this call's steer poll: left for the flush (R26)
    h.controller.pause()
    g.open()
    await h.wait_event(RunEnd, stop_reason="max_iterations")
    held = await h.wait_event(RunHeld, after=len(h.events) - 1)  # the flush's run, before its model call
    assert held.at == "model_call" and len(model.requests) == 2
    h.controller.resume()
    await h.settled()
    assert model.user_texts()[2][-1] == "next task"
    assert [e.stop_reason for e in h.run_ends()] == ["max_iterations", "completed"]
    await h.aclose()


async def test_R44_pausing_emits_queue_updates_only_for_queue_changes(
    h: Harness, model: ScriptedProvider
) -> None:
    g = Gate()
    model.script(Reply([text("x"), g, text("y")]))
    h.controller.submit("go")
    await g.wait_reached_async()
    before = len(events_of(h.events, QueueUpdate))
    h.controller.pause()
    h.controller.resume()
    assert len(events_of(h.events, QueueUpdate)) == before  # pause is not a queue change
    g.open()
    await h.settled()
