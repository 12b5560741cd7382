"""SEMANTICS R8-R16, R25, R26, R29-R32: input while running, through the real controller and loop and
the in-memory scripted model (R1's stream that stays open needs HTTP: the fake server).

Timing is controlled with gates in the scripted replies and in scripted tools: a test acts while a reply
or a tool is held, then opens it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ink.agent.events import InputTaken
from ink.run.controller import Modes, QueueError
from ink.run.events import BangStart, QueueUpdate, RunStart
from tests.events import events_of
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.run.harness import Harness
from tests.scripted_provider import ScriptedProvider
from tests.scripted_tools import ScriptedTool


@pytest.fixture
async def h(model: ScriptedProvider) -> AsyncIterator[Harness]:
    harness = Harness(model, tools=[ScriptedTool("read"), ScriptedTool("bash", safe=False)])
    yield harness
    await harness.aclose()


def held_reply(*steps: object) -> tuple[Gate, Reply]:
    g = Gate()
    return g, Reply([g, *steps])  # type: ignore[list-item]


async def test_R8_idle_input_starts_a_run_and_running_input_is_queued_and_shown(
    h: Harness, model: ScriptedProvider
) -> None:
    g, reply = held_reply(text("hi"))
    model.script(reply, say("second"))
    first = h.controller.submit("one")
    assert first.queued is False and h.controller.state == "running"
    await g.wait_reached_async()
    second = h.controller.submit("two", "follow_up")
    assert second.queued is True
    update = h.events[-1]
    assert isinstance(update, QueueUpdate)  # shown at once
    assert [(q.input_id, q.text, q.mode) for q in update.queue] == [(second.input_id, "two", "follow_up")]
    g.open()
    await h.settled()
    assert h.types().count("run_start") == 1  # R10: the follow-up continued the same run


async def test_R9_steer_is_taken_before_the_next_model_call_without_cancelling_anything(
    h: Harness, model: ScriptedProvider
) -> None:
    g, reply = held_reply(text("looking"), tool_call("read", {"x": "a"}, id="c1"))
    model.script(reply, say("ok"))
    h.controller.submit("start")
    await g.wait_reached_async()
    h.controller.submit("use tabs")
    g.open()
    await h.settled()
    first, second = model.requests
    assert first.wait_finished() == "completed"  # the held model call was not cancelled
    assert second.user_texts() == ["start", "use tabs"]
    assert second.tool_results()[0][0] == "c1"  # the steer comes after the tool's result
    assert h.run_ends()[0].stop_reason == "completed"


async def test_R9b_steer_is_taken_at_the_would_end_point(h: Harness, model: ScriptedProvider) -> None:
    g, reply = held_reply(text("all done"))
    model.script(reply, say("adjusted"))
    h.controller.submit("start")
    await g.wait_reached_async()
    h.controller.submit("also update the docs")
    g.open()
    await h.settled()
    assert model.user_texts() == [["start"], ["start", "also update the docs"]]
    assert h.types().count("run_end") == 1


async def test_R10_follow_up_waits_for_the_would_end_point_and_continues_the_same_run(
    h: Harness, model: ScriptedProvider
) -> None:
    g, reply = held_reply(tool_call("read", {"x": "a"}, id="c1"))
    model.script(reply, say("finished"), say("summary written"))
    h.controller.submit("fix it")
    await g.wait_reached_async()
    h.controller.submit("then write a summary", "follow_up")
    g.open()
    await h.settled()
    texts = model.user_texts()
    assert texts[1] == ["fix it"]  # not taken before the model call after the tool batch
    assert texts[2] == ["fix it", "then write a summary"]
    starts, ends = h.types().count("run_start"), h.run_ends()
    assert starts == 1 and len(ends) == 1 and ends[0].stop_reason == "completed"


async def test_R11_at_the_would_end_point_steer_comes_before_follow_up(
    h: Harness, model: ScriptedProvider
) -> None:
    g, reply = held_reply(text("done"))
    model.script(reply, say("a"), say("b"))
    h.controller.submit("start")
    await g.wait_reached_async()
    h.controller.submit("follow", "follow_up")
    h.controller.submit("steer")
    g.open()
    await h.settled()
    assert model.user_texts()[1:] == [["start", "steer"], ["start", "steer", "follow"]]


async def test_R12_a_take_at_the_would_end_point_skips_the_next_steer_poll(
    model: ScriptedProvider,
) -> None:
    h = Harness(model, modes=Modes(steering="one-at-a-time"))
    g, reply = held_reply(text("done"))
    model.script(reply, say("one"), say("two"))
    h.controller.submit("start")
    await g.wait_reached_async()
    h.controller.submit("s1")
    h.controller.submit("s2")
    g.open()
    await h.settled()
    # s1 taken at the would-end point; the poll before the next call is skipped, so s2 waits for the
    # next would-end point instead of joining s1.
    assert model.user_texts()[1:] == [["start", "s1"], ["start", "s1", "s2"]]
    await h.aclose()


async def test_R13_modes_are_read_at_the_start_of_each_run(h: Harness, model: ScriptedProvider) -> None:
    g, reply = held_reply(text("done"))
    model.script(reply, say("a"), say("b"))
    h.controller.submit("start")
    await g.wait_reached_async()
    h.modes = Modes(follow_up="all")  # too late for this run
    h.controller.submit("f1", "follow_up")
    h.controller.submit("f2", "follow_up")
    g.open()
    await h.settled()
    assert model.user_texts()[1:] == [["start", "f1"], ["start", "f1", "f2"]]  # one at a time
    g2, reply2 = held_reply(text("done"))
    model.script(reply2, "both")
    h.controller.submit("next")
    await g2.wait_reached_async()
    h.controller.submit("f3", "follow_up")
    h.controller.submit("f4", "follow_up")
    g2.open()
    await h.settled()
    assert model.user_texts()[-1][-2:] == ["f3", "f4"]  # "all" now: taken together


async def test_R14_steer_skips_follow_ups_and_bang_lines_are_run_by_the_controller(
    h: Harness, model: ScriptedProvider
) -> None:
    g, reply = held_reply(tool_call("read", {"x": "a"}))
    model.script(reply, say("done"), say("followed"))
    h.controller.submit("start")
    await g.wait_reached_async()
    h.controller.submit("later", "follow_up")
    h.controller.submit("!git status")
    h.controller.submit("now")
    g.open()
    await h.settled()
    texts = model.user_texts()
    assert texts[1] == ["start", "now"]  # the steer passed over the follow-up and the bang line
    assert texts[2] == ["start", "now", "later"]
    assert all("!git status" not in t for req in texts for t in req)  # never sent to the model
    assert h.bang_commands == ["git status"]
    order = h.types()
    assert order.index("run_end") < order.index("bang_start") < order.index("bang_end")


async def test_R15_the_four_message_example(h: Harness, model: ScriptedProvider) -> None:
    g, reply = held_reply(text("working"), tool_call("read", {"x": "a"}))
    model.script(reply, say("work goes on"), say("did 1"), say("did 3"))
    h.controller.submit("task")
    await g.wait_reached_async()
    h.controller.submit("follow-up 1", "follow_up")
    h.controller.submit("steer 2")
    h.controller.submit("follow-up 3", "follow_up")
    h.controller.submit("steer 4")
    g.open()
    await h.settled()
    assert model.user_texts() == [
        ["task"],
        ["task", "steer 2", "steer 4"],  # steers 2 and 4 together, the current work goes on
        ["task", "steer 2", "steer 4", "follow-up 1"],
        ["task", "steer 2", "steer 4", "follow-up 1", "follow-up 3"],
    ]
    [end] = h.run_ends()
    assert end.stop_reason == "completed"


async def test_R16_a_stream_of_steers_delays_follow_ups(h: Harness, model: ScriptedProvider) -> None:
    gates = [Gate() for _ in range(3)]
    model.script(*(Reply([g, text(f"reply {i}")]) for i, g in enumerate(gates)), say("last"))
    h.controller.submit("start")
    await gates[0].wait_reached_async()
    h.controller.submit("follow", "follow_up")
    h.controller.submit("steer a")
    gates[0].open()
    await gates[1].wait_reached_async()
    h.controller.submit("steer b")
    gates[1].open()
    await gates[2].wait_reached_async()
    gates[2].open()
    await h.settled()
    last = model.user_texts()[-1]
    assert last == ["start", "steer a", "steer b", "follow"]


async def test_R25_state_is_running_until_settled_then_idle(h: Harness, model: ScriptedProvider) -> None:
    states: list[str] = []
    h.controller.subscribe(lambda e: states.append(h.controller.state) if e.type == "run_end" else None)
    model.script(say("hi"))
    assert h.controller.state == "idle"
    h.controller.submit("x")
    assert h.controller.state == "running"
    await h.settled()
    assert states == ["running"] and h.controller.state == "idle"


async def test_R26_flush_runs_each_entry_as_its_own_run_and_does_not_take_the_rest(
    model: ScriptedProvider,
) -> None:
    h = Harness(model, hold_bangs=True)
    g, reply = held_reply(text("first done"))
    g2, second = held_reply(text("second done"))
    model.script(reply, second, say("third done"))
    h.controller.submit("first")
    await g.wait_reached_async()
    h.controller.submit("!make")  # a bang line is never taken by the loop: it waits for the flush
    g.open()
    await h.wait_event(BangStart)
    # while the flush runs the bang line, queue two prompts: they are processed one by one afterwards
    h.controller.submit("second")
    h.controller.submit("third")
    h.bang_release.set()
    await g2.wait_reached_async()
    g2.open()
    await h.settled()
    starts = events_of(h.events, RunStart)
    assert len(starts) == 3
    assert model.user_texts()[1][-1] == "second"
    assert "third" not in model.user_texts()[1]  # the flush run did not take the next entry
    assert model.user_texts()[2][-1] == "third"
    await h.aclose()


async def test_R29_a_reply_without_tool_calls_ends_the_run(h: Harness, model: ScriptedProvider) -> None:
    model.script(say("I think it is done"))
    h.controller.submit("do it")
    await h.settled()
    assert [e.stop_reason for e in h.run_ends()] == ["completed"]
    assert len(model.requests) == 1


async def test_R30_every_input_has_an_id_and_ends_in_one_state(h: Harness, model: ScriptedProvider) -> None:
    g, reply = held_reply(text("x"))
    model.script(reply, say("y"))
    a = h.controller.submit("a")
    await g.wait_reached_async()
    b = h.controller.submit("b")
    c = h.controller.submit("c", "follow_up")
    h.controller.cancel_queued(c.input_id)
    g.open()
    await h.settled()
    ledger = h.controller.ledger
    assert [ledger.state(i.input_id) for i in (a, b, c)] == ["committed", "committed", "cancelled"]
    assert len({a.input_id, b.input_id, c.input_id}) == 3


async def test_R31_every_input_gets_input_taken_with_its_mode(h: Harness, model: ScriptedProvider) -> None:
    g, reply = held_reply(text("x"))
    model.script(reply, say("y"), say("z"))
    first = h.controller.submit("first", "follow_up")
    await g.wait_reached_async()
    steer = h.controller.submit("steer")
    follow = h.controller.submit("follow", "follow_up")
    g.open()
    await h.settled()
    taken = [e for e in h.events if isinstance(e, InputTaken)]
    assert [(e.mode, [i.input_id for i in e.inputs]) for e in taken] == [
        ("follow_up", [first.input_id]),  # the input that starts a run keeps its follow-up mode
        ("steer", [steer.input_id]),
        ("follow_up", [follow.input_id]),
    ]
    second = h.controller.submit("plain")
    await h.settled()
    last = [e for e in h.events if isinstance(e, InputTaken)][-1]
    assert last.mode == "steer" and last.inputs[0].input_id == second.input_id


async def test_R32_queue_entries_can_be_listed_edited_cancelled_and_switched(
    h: Harness, model: ScriptedProvider
) -> None:
    g, reply = held_reply(text("x"))
    model.script(reply, say("y"), say("z"))
    h.controller.submit("start")
    await g.wait_reached_async()
    a = h.controller.submit("typo", "follow_up")
    b = h.controller.submit("drop me")
    c = h.controller.submit("make me a follow-up")
    h.controller.edit_queued(a.input_id, "fixed")
    h.controller.cancel_queued(b.input_id)
    h.controller.set_queued_mode(c.input_id, "follow_up")
    assert [(q.text, q.mode) for q in h.controller.queue()] == [
        ("fixed", "follow_up"),
        ("make me a follow-up", "follow_up"),
    ]
    updates = [e for e in h.events if isinstance(e, QueueUpdate)]
    assert [q.text for q in updates[-1].queue] == ["fixed", "make me a follow-up"]
    g.open()
    await h.settled()
    texts = model.user_texts()
    assert texts[1:] == [["start", "fixed"], ["start", "fixed", "make me a follow-up"]]
    assert "drop me" not in str(texts)
    with pytest.raises(QueueError, match="no longer queued"):
        h.controller.edit_queued(a.input_id, "too late")


async def test_R1_a_reply_ends_for_the_run_at_its_last_event_not_when_the_server_closes(
    fake_server: FakeModelServer,
) -> None:
    """A server may keep the stream open after the last event: message_end and the tools must not wait
    for it (the provider's bounded drain goes on in the background)."""
    linger = Gate()
    fake_server.script(
        Reply([text("reading"), tool_call("read", {"x": "a"}, id="c1")], linger=linger), say("ok")
    )
    still_open: list[bool] = []
    h = Harness(fake_server, tools=[ScriptedTool("read")])
    h.controller.subscribe(
        lambda e: (
            still_open.append(not fake_server.requests[0].finished.is_set())
            if e.type == "message_end"
            else None
        )
    )
    h.controller.submit("go")
    await fake_server.wait_for_requests_async(2)  # the tool ran and the next call went out meanwhile
    assert still_open[0] is True
    linger.open()
    await h.settled()
    await h.aclose()
