"""SEMANTICS R7, R17-R24, R27, R28, R33-R36: interrupting, settling and failing, through the real
controller and loop, the in-memory scripted model and (where processes matter) the real bash tool.
Where the wire matters (a stream closed on abort, a reply cut inside a call's arguments) the model is a
real provider over HTTP to the fake server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest

from ink.agent.events import TextDeltaEvent, ToolCancelling, ToolEnd, ToolStart, event_to_json
from ink.agent.scheduler import NOT_STARTED
from ink.ai.messages import AssistantMessage, TextBlock, ToolCall, ToolResult, UserMessage
from ink.run.controller import INTERRUPTION_MARKER
from ink.run.events import BangEnd, BangStart, InputRestored, RunEnd
from ink.tools import BashTool, ProcessRegistry, Workspace
from ink.wiring import RegistryReaper
from tests.events import events_of
from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, say, text, tool_call
from tests.run.harness import Harness
from tests.scripted_provider import ScriptedProvider
from tests.scripted_tools import ScriptedTool
from tests.waiting import wait_until

PROTOCOLS = ["openai", "anthropic"]


@pytest.fixture
async def h(model: ScriptedProvider) -> AsyncIterator[Harness]:
    harness = Harness(model, tools=[ScriptedTool("read"), ScriptedTool("slow", safe=False)])
    yield harness
    await harness.aclose()


async def aborted_while_streaming(
    h: Harness, model: FakeModelServer | ScriptedProvider, *queued: str
) -> RunEnd:
    """Start a run whose reply holds after some text, queue ``queued``, abort, wait until settled."""
    g = Gate()
    model.script(Reply([text("partial "), g, text("never sent")]))
    h.controller.submit("start")
    await g.wait_reached_async()
    await h.wait_event(TextDeltaEvent)  # the client has the text before the abort lands
    for item in queued:
        h.controller.submit(item)
    assert h.controller.abort() is True
    await h.settled()
    return h.run_ends()[-1]


async def running_a_stubborn_tool(
    server: ScriptedProvider, grace: float
) -> tuple[Harness, ScriptedTool, asyncio.Event]:
    """A run whose one tool call (``s1``) has started and ignores aborts until its gate is set."""
    stubborn = ScriptedTool("stubborn", safe=False, ignores_abort=True)
    h = Harness(server, tools=[stubborn], grace_seconds=grace)
    gate = stubborn.gate("s1")
    server.script(Reply([tool_call("stubborn", {}, id="s1")]))
    h.controller.submit("go")
    await stubborn.started_event("s1").wait()
    return h, stubborn, gate


def test_R7_top_level_events_carry_no_source() -> None:
    from ink.agent.events import Source, TextDeltaEvent

    assert "source" not in event_to_json(TextDeltaEvent("x"))
    tagged = TextDeltaEvent("x", source=Source("call_1", "explore"))
    assert event_to_json(tagged)["source"] == {"id": "call_1", "agent": "explore"}


async def test_R7_a_whole_run_emits_no_source_at_top_level(h: Harness, model: ScriptedProvider) -> None:
    model.script(Reply([text("a"), tool_call("read", {"x": "1"})]), say("b"))
    h.controller.submit("go")
    await h.settled()
    assert all("source" not in event_to_json(e) for e in h.events)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_R17_abort_closes_the_model_stream(fake_server: FakeModelServer, protocol: str) -> None:
    h = Harness(fake_server, protocol=protocol)
    end = await aborted_while_streaming(h, fake_server)
    request = fake_server.requests[0]
    assert await request.wait_finished_async() == "client_left"
    assert end.stop_reason == "aborted"
    await h.aclose()


async def test_R17_R35_abort_kills_the_whole_process_group_of_a_running_command(
    model: ScriptedProvider, tmp_path: Path
) -> None:
    registry = ProcessRegistry()
    bash = BashTool(Workspace(tmp_path), registry, kill_delay=0.5)
    h = Harness(model, tools=[bash], reaper=RegistryReaper(registry, 0.2))
    command = "touch started; sleep 100 & sleep 100"
    model.script(Reply([tool_call("bash", {"command": command}, id="b1")]), say("unused"))
    h.controller.submit("run it")
    await h.wait_event(ToolStart, tool_call_id="b1")
    await wait_until(lambda: (tmp_path / "started").exists() and registry.entries, what="command started")
    [entry] = registry.entries
    shell = psutil.Process(entry.pid)
    # "started" is written before the shell forks its two sleeps: wait until both are there
    await wait_until(lambda: len(shell.children(recursive=True)) >= 2, what="both sleeps started")
    group = [entry.pid, *(c.pid for c in shell.children(recursive=True))]
    h.controller.abort()
    await h.settled()
    assert [p for p in group if _alive(p)] == []
    [result] = h.results()
    assert result.interrupted is True and "interrupt" in result.output.lower()
    end = h.run_ends()[-1]
    assert end.receipt is not None and end.receipt.interrupted == ("b1",) and end.receipt.survivors == ()
    await h.aclose()


async def test_R18_an_abort_is_a_result_not_an_error(h: Harness, model: ScriptedProvider) -> None:
    end = await aborted_while_streaming(h, model)
    assert end.stop_reason == "aborted" and end.error is None
    assert "error" not in json.dumps([event_to_json(e) for e in h.events if e.type == "run_end"])


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_R19_a_cut_off_reply_keeps_its_text_and_its_complete_calls(
    fake_server: FakeModelServer, protocol: str
) -> None:
    h = Harness(fake_server, protocol=protocol, tools=[ScriptedTool("read")])
    g = Gate()
    stall_at = {"openai": 9, "anthropic": 17}[protocol]  # inside the second call's arguments
    steps = [
        text("partial "),
        tool_call("read", {"x": "1"}, id="c1"),
        text("more"),  # arrives after c1 is whole: once the client shows it, c1 is in
        tool_call("read", {"x": "2"}, id="c2"),
    ]
    fake_server.script(Reply(steps, fault=Fault.stall_after(stall_at, g)), say("after"))
    h.controller.submit("start")
    await g.wait_reached_async()
    await h.wait_event(TextDeltaEvent, text="more")
    h.controller.abort()
    await h.settled()
    assistant = next(m for m in h.history if isinstance(m, AssistantMessage))
    assert assistant.content[0] == TextBlock("partial ") and assistant.content[-1] == TextBlock("more")
    assert [c.id for c in assistant.tool_calls] == ["c1"]  # c2's arguments never arrived whole
    [result] = h.results()
    assert result.tool_call_id == "c1" and result.output == NOT_STARTED
    starts = events_of(h.events, ToolStart)
    ends = events_of(h.events, ToolEnd)
    assert [e.tool_call_id for e in starts] == ["c1"]
    assert [e.tool_call_id for e in ends] == ["c1"]
    assert await h.next_run_completes("continue")  # the strict server accepts the next request
    await h.aclose()


async def test_R20_a_tool_that_ignores_the_abort_is_abandoned_after_the_grace(
    model: ScriptedProvider,
) -> None:
    h, stubborn, gate = await running_a_stubborn_tool(model, grace=0.1)
    h.controller.abort()
    cancelling = await h.wait_event(ToolCancelling, tool_call_id="s1")
    assert cancelling.grace_seconds == 0.1
    await h.settled()
    [result] = h.results()
    assert result.is_error and "Abandoned" in result.output and "may still be running" in result.output
    gate.set()  # the tool, which swallowed the cancellation, now really produces its late result
    await wait_until(lambda: "s1" in stubborn.finished, what="the late result")
    assert h.results() == [result]  # it never reached the history
    assert len(events_of(h.events, ToolEnd)) == 1
    receipt = h.run_ends()[-1].receipt
    assert receipt is not None and receipt.abandoned == ("s1",) and receipt.interrupted == ()  # R34
    await h.aclose()


async def test_R21_running_until_settled_and_a_second_interrupt_force_exits_130(
    model: ScriptedProvider,
) -> None:
    h, _, gate = await running_a_stubborn_tool(model, grace=30)
    h.controller.interrupt()
    await h.wait_event(ToolCancelling)
    assert h.controller.state == "running" and h.forced_exits == []
    h.controller.interrupt()
    assert h.forced_exits == [130]
    gate.set()
    await h.settled()
    assert h.controller.state == "idle"
    await h.aclose()


async def test_R22_queued_input_is_handed_back_not_run(h: Harness, model: ScriptedProvider) -> None:
    end = await aborted_while_streaming(h, model, "steer one", "steer two")
    assert [r.text for r in end.restored_input] == ["steer one", "steer two"]
    assert "steer one" not in h.user_texts()
    assert len(model.requests) == 1  # nothing was run afterwards
    assert h.controller.queue() == ()
    for item in end.restored_input:
        assert h.controller.ledger.state(item.input_id) == "restored"


async def test_R23_an_interruption_marker_reaches_the_next_model_call(
    h: Harness, model: ScriptedProvider
) -> None:
    await aborted_while_streaming(h, model)
    last = h.history[-1]
    assert isinstance(last, UserMessage) and last.kind == "interruption" and last.text == INTERRUPTION_MARKER
    model.script(say("ok"))
    h.controller.submit("what now?")
    await h.settled()
    assert model.requests[-1].user_texts() == ["start", INTERRUPTION_MARKER, "what now?"]
    partial = model.requests[-1].messages[2]
    assert partial["role"] == "assistant" and "partial" in json.dumps(partial)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_R24_interrupt_and_redirect(protocol: str) -> None:
    model = ScriptedProvider(protocol=protocol)
    h = Harness(model, tools=[ScriptedTool("slow", safe=False)])
    slow = h.tools[0]
    assert isinstance(slow, ScriptedTool)
    slow.gate("t1")
    model.script(Reply([text("on it"), tool_call("slow", {}, id="t1")]), say("redirected"))
    h.controller.submit("refactor everything")
    await slow.started_event("t1").wait()
    h.controller.submit("queued steer")
    first = h.controller.interrupt_with("only the parser")
    second = h.controller.interrupt_with("no: only the lexer")  # replaces the first redirect
    await h.settled()
    restored = [e for e in h.events if isinstance(e, InputRestored)]
    assert [r.text for e in restored for r in e.restored_input] == ["only the parser"]
    assert h.controller.ledger.state(first.input_id) == "restored"
    ends = h.run_ends()
    assert [e.stop_reason for e in ends] == ["aborted", "completed"]
    assert [r.text for r in ends[0].restored_input] == ["queued steer"]
    assert model.user_texts()[-1] == ["refactor everything", INTERRUPTION_MARKER, "no: only the lexer"]
    assert h.controller.ledger.state(second.input_id) == "committed"
    await h.aclose()


async def test_R27_a_provider_failure_is_reported_input_restored_and_the_controller_lives_on(
    h: Harness, model: ScriptedProvider
) -> None:
    slow = h.tools[1]
    assert isinstance(slow, ScriptedTool)
    slow.gate("t")
    model.script(Reply([tool_call("slow", {}, id="t")]), Fault.http(400, "model 'fake-model' does not exist"))
    h.controller.submit("start")
    await slow.started_event("t").wait()
    h.controller.submit("queued", "follow_up")  # not taken before the failing model call
    slow.gate("t").set()
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "error" and end.error is not None and "does not exist" in end.error
    assert [r.text for r in end.restored_input] == ["queued"]
    assert h.controller.state == "idle"
    model.script(say("fine now"))
    assert await h.next_run_completes("again")


async def test_R28_max_iterations_stops_with_not_executed_results_and_flushes_the_queue(
    model: ScriptedProvider,
) -> None:
    read = ScriptedTool("read")
    h = Harness(model, tools=[read], max_iterations=1)
    g = Gate()
    model.script(
        Reply([g, tool_call("read", {"x": "1"}, id="a")]),
        Reply([tool_call("read", {"x": "2"}, id="b")]),
        say("the queued follow-up as its own run"),
    )
    h.controller.submit("loop forever")
    await g.wait_reached_async()
    h.controller.submit("afterwards", "follow_up")
    g.open()
    await h.settled()
    ends = h.run_ends()
    assert [e.stop_reason for e in ends] == ["max_iterations", "completed"]
    b = next(r for r in h.results() if r.tool_call_id == "b")
    assert b.is_error and "max iterations" in b.output
    assert read.finished == ["a"]
    assert model.user_texts()[-1][-1] == "afterwards"


async def test_R33_synthetic_results_are_honest_and_in_the_history_before_run_end(
    model: ScriptedProvider, tmp_path: Path
) -> None:
    registry = ProcessRegistry()
    bash = BashTool(Workspace(tmp_path), registry, kill_delay=0.5)
    h = Harness(model, tools=[bash], reaper=RegistryReaper(registry, 0.2))
    seen_at_run_end: list[list[ToolResult]] = []
    h.controller.subscribe(lambda e: seen_at_run_end.append(h.results()) if e.type == "run_end" else None)
    model.script(
        Reply(
            [
                tool_call("bash", {"command": "echo partial output; touch go; sleep 100"}, id="k"),
                tool_call("bash", {"command": "echo never"}, id="n"),
            ]
        )
    )
    h.controller.submit("run")
    await h.wait_event(ToolStart, tool_call_id="k")
    await wait_until((tmp_path / "go").exists, what="command started")
    h.controller.abort()
    await h.settled()
    killed, never = seen_at_run_end[0]
    assert killed.interrupted and "partial output" in killed.output and "SIG" in killed.output
    assert never.output == NOT_STARTED
    end = h.run_ends()[-1]
    assert end.receipt is not None
    assert end.receipt.interrupted == ("k",) and end.receipt.not_started == ("n",)
    await h.aclose()


async def test_R34_the_abort_receipt_lists_what_happened(h: Harness, model: ScriptedProvider) -> None:
    end = await aborted_while_streaming(h, model, "one", "two")
    assert end.receipt is not None
    assert end.receipt.reason == "user"
    assert end.receipt.restored == tuple(r.input_id for r in end.restored_input)
    data = event_to_json(end)
    assert set(data) >= {"type", "runId", "stopReason", "restoredInput", "receipt", "usage"}


async def test_R35_a_setsid_escapee_is_reaped_or_reported(model: ScriptedProvider, tmp_path: Path) -> None:
    registry = ProcessRegistry()
    bash = BashTool(Workspace(tmp_path), registry, kill_delay=0.2)
    h = Harness(model, tools=[bash], reaper=RegistryReaper(registry, 0.2))
    command = "setsid sleep 300 & echo $! > escapee; sleep 100"
    model.script(Reply([tool_call("bash", {"command": command}, id="e")]))
    h.controller.submit("go")
    pidfile = tmp_path / "escapee"
    await wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), what="escapee started")
    escapee = int(pidfile.read_text())
    h.controller.abort()
    await h.settled()
    receipt = h.run_ends()[-1].receipt
    assert receipt is not None
    still_alive = _alive(escapee)
    assert not still_alive or escapee in [s.pid for s in receipt.survivors]
    assert not still_alive  # it was found and killed, not just reported
    await h.aclose()


async def test_R36_input_typed_while_the_abort_settles_is_restored_not_run(
    model: ScriptedProvider,
) -> None:
    h, _, gate = await running_a_stubborn_tool(model, grace=30)
    h.controller.submit("before the abort")
    h.controller.abort()
    await h.wait_event(ToolCancelling)
    during = h.controller.submit("during the abort", "follow_up")
    assert during.queued is True
    gate.set()
    await h.settled()
    end = h.run_ends()[-1]
    assert [r.text for r in end.restored_input] == ["before the abort", "during the abort"]
    assert len(model.requests) == 1
    await h.aclose()


async def test_R19_history_stays_valid_when_aborted_before_any_reply(
    h: Harness, model: ScriptedProvider
) -> None:
    g = Gate()
    model.script(Reply([g, text("x")]), say("next"))
    h.controller.submit("first")
    await g.wait_reached_async()
    h.controller.abort()
    await h.settled()
    assert [type(m) for m in h.history] == [UserMessage, UserMessage]  # prompt + marker
    assert await h.next_run_completes("second")


def _calls(h: Harness) -> list[ToolCall]:
    return [c for m in h.history if isinstance(m, AssistantMessage) for c in m.tool_calls]


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie (dead, waiting for a parent that may never reap it)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def test_R17_an_abort_in_the_same_step_as_the_submit_is_honoured(
    h: Harness, model: ScriptedProvider
) -> None:
    model.script(say("must not complete"))
    h.controller.submit("go")
    assert h.controller.abort() is True  # before the run's task has even started
    await h.settled()
    assert h.run_ends()[-1].stop_reason == "aborted"


async def test_R24_a_redirect_in_the_same_step_as_the_submit_runs(
    h: Harness, model: ScriptedProvider
) -> None:
    model.script(say("redirected"))
    h.controller.submit("go")
    redirect = h.controller.interrupt_with("do this instead")
    await h.settled()
    assert [e.stop_reason for e in h.run_ends()] == ["aborted", "completed"]
    assert h.controller.ledger.state(redirect.input_id) == "committed"
    assert model.user_texts()[-1][-1] == "do this instead"


async def test_R21_only_a_second_interrupt_force_exits_not_an_interrupt_after_another_abort(
    model: ScriptedProvider,
) -> None:
    h, _, gate = await running_a_stubborn_tool(model, grace=30)
    h.controller.abort()  # e.g. the RPC abort command, or end of input
    await h.wait_event(ToolCancelling)
    h.controller.interrupt()  # the user's first Ctrl+C
    assert h.forced_exits == []
    h.controller.interrupt()
    assert h.forced_exits == [130]
    gate.set()
    await h.settled()
    await h.aclose()


async def test_R22_an_abort_landing_as_the_reply_ends_takes_no_queued_input(
    h: Harness, model: ScriptedProvider
) -> None:
    g = Gate()
    model.script(Reply([g, text("done")]))
    h.controller.subscribe(lambda e: h.controller.abort() if e.type == "message_end" else None)
    h.controller.submit("go")
    await g.wait_reached_async()
    queued = h.controller.submit("queued steer")
    g.open()
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "aborted"
    assert [r.input_id for r in end.restored_input] == [queued.input_id]
    assert "queued steer" not in h.user_texts()


@pytest.mark.parametrize(("protocol", "stop"), [("openai", "content_filter"), ("anthropic", "refusal")])
async def test_R19_a_reply_the_service_stopped_runs_none_of_its_calls(protocol: str, stop: str) -> None:
    read = ScriptedTool("read")
    model = ScriptedProvider(protocol=protocol)
    h = Harness(model, tools=[read])
    model.script(Reply([text("I will"), tool_call("read", {"x": "1"}, id="c1")], stop=stop), say("ok"))
    h.controller.submit("go")
    await h.settled()
    end = h.run_ends()[-1]
    assert end.stop_reason == "error" and end.error is not None
    assert read.finished == []
    [result] = h.results()
    assert result.tool_call_id == "c1" and result.is_error
    assert await h.next_run_completes("next")  # the history is still valid for the strict server
    await h.aclose()


async def test_R27_a_bug_in_the_pre_execution_hook_leaves_a_valid_history(
    model: ScriptedProvider,
) -> None:
    from ink.agent.tool import Refusal

    async def broken_hook(ctx: object) -> Refusal | None:
        raise RuntimeError("policy bug")

    h = Harness(model, tools=[ScriptedTool("read")], before_tool=(broken_hook,))
    model.script(Reply([tool_call("read", {"x": "1"}, id="c1")]), say("carried on"), say("and again"))
    h.controller.submit("go")
    await h.settled()
    assert h.run_ends()[-1].stop_reason == "completed"  # the call failed, the run went on
    [result] = h.results()
    assert "RuntimeError: policy bug" in result.output
    assert await h.next_run_completes("next")
    await h.aclose()


async def test_R14_a_bang_line_that_never_exited_reports_exit_code_null(model: ScriptedProvider) -> None:
    h = Harness(model, bang_exit_code=None)
    h.controller.submit("!sleep 10")
    await h.settled()
    end = events_of(h.events, BangEnd)[0]
    assert event_to_json(end)["exitCode"] is None


async def test_R22_R36_an_abort_during_a_bang_line_hands_input_back_in_input_restored(
    model: ScriptedProvider,
) -> None:
    h = Harness(model, hold_bangs=True)
    bang = h.controller.submit("!sleep 60")
    await h.wait_event(BangStart)
    queued = h.controller.submit("while the bang runs")
    assert queued.queued is True
    assert h.controller.abort() is True
    await h.settled()
    [end] = events_of(h.events, BangEnd)
    assert end.interrupted is True and end.input_id == bang.input_id
    [restored] = events_of(h.events, InputRestored)
    assert [(r.input_id, r.text, r.mode) for r in restored.restored_input] == [
        (queued.input_id, "while the bang runs", "steer")
    ]
    assert h.run_ends() == [] and model.requests == [] and h.controller.state == "idle"
