"""R44 Pause through ``ink --mode rpc`` against the fake server: ``pause``/``resume`` (with ``source`` for
one sub-agent), ``run_paused``/``run_held``/``run_resumed``, ``get_state.paused``, the queue open while
paused, an interrupt during a pause."""

from __future__ import annotations

from pathlib import Path

from tests.cli.inkproc import ink_env
from tests.extend.test_subagents import route, task
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc


def marker_call(marks: Path, call_id: str = "b1") -> object:
    return tool_call("bash", {"command": f"echo ran > {marks / call_id}"}, id=call_id)


def test_R44_pause_holds_the_tool_call_and_resume_goes_on(
    start_rpc: StartRpc, fake_server: FakeModelServer, marks: Path
) -> None:
    g = Gate()
    fake_server.script(Reply([text("looking "), g, text("now"), marker_call(marks)]), say("done"))
    ink = start_rpc("--permission-mode", "yolo")
    reason = ink.fail("pause")
    assert "nothing is running" in reason
    ink.ok("prompt", text="go")
    g.wait_reached()
    assert ink.ok("pause") == {"wasPaused": False}
    ink.wait_event("run_paused")
    assert ink.ok("pause") == {"wasPaused": True}
    state = ink.ok("get_state")
    assert state["paused"] is True and state["state"] == "running"
    g.open()
    held = ink.wait_event("run_held")
    assert held["at"] == "tool_call" and "source" not in held
    ink.wait_event("tool_start", toolCallId="b1")
    assert ink.ok("get_state")["held"] is True
    assert not (marks / "b1").exists() and len(fake_server.requests) == 1
    queued = ink.ok("steer", text="a steer while paused")
    ink.ok("edit_queued", inputId=queued["inputId"], text="an edited steer")
    assert [q["text"] for q in ink.ok("get_queue")["queue"]] == ["an edited steer"]
    assert ink.ok("resume") == {"wasPaused": True}
    assert ink.wait_event("run_resumed")["reason"] == "resume"
    ink.wait_event("run_end", stopReason="completed")
    assert (marks / "b1").read_text() == "ran\n"
    assert fake_server.requests[1].user_texts() == ["go", "an edited steer"]
    assert ink.ok("resume") == {"wasPaused": False}  # nothing paused: nothing changes
    assert ink.ok("get_state")["paused"] is False


def test_R44_an_interrupt_during_a_pause_ends_the_run_and_hands_the_queue_back(
    start_rpc: StartRpc, fake_server: FakeModelServer, marks: Path
) -> None:
    g = Gate()
    fake_server.script(Reply([g, marker_call(marks, "b1"), marker_call(marks, "b2")]), say("never"))
    ink = start_rpc("--permission-mode", "yolo")
    ink.ok("prompt", text="go")
    g.wait_reached()
    ink.ok("pause")
    g.open()
    ink.wait_event("run_held", at="tool_call")
    queued = ink.ok("follow_up", text="later")
    assert ink.ok("abort") == {"wasRunning": True}
    resumed_at, resumed = ink.wait_event_at("run_resumed")
    end_at, end = ink.wait_event_at("run_end")
    assert resumed["reason"] == "abort" and resumed_at < end_at
    assert end["stopReason"] == "aborted"
    assert end["receipt"]["notStarted"] == ["b1", "b2"]
    assert [r["inputId"] for r in end["restoredInput"]] == [queued["inputId"]]
    assert not (marks / "b1").exists() and not (marks / "b2").exists()
    results = [m for m in ink.ok("get_messages")["messages"] if m["role"] == "tool_result"]
    assert [r["toolCallId"] for r in results] == ["b1", "b2"]


def test_R44_pausing_one_sub_agent_holds_it_alone(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, marks: Path
) -> None:
    hold_a = Gate()
    first = Reply([task("t1", "find A", "general"), task("t2", "find B", "general")])
    fake_server.responder = route(
        lambda r: first if not r.tool_results() else say("both done"),
        {
            "find A": lambda r: (
                Reply([text("A "), hold_a, marker_call(marks, "a1")]) if not r.tool_results() else say("A")
            ),
            "find B": lambda _r: say("B"),
        },
    )
    flags = provider_args(fake_server, "openai", "--permission-mode", "yolo")
    with RpcClient.start(flags, ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="find both")
        hold_a.wait_reached()
        assert "no running sub-agent" in ink.fail("pause", source="nobody")
        assert ink.ok("pause", source="t1") == {"source": "t1", "wasPaused": False}
        t1 = {"id": "t1", "agent": "general"}
        ink.wait_event("run_paused", source=t1)
        assert ink.ok("get_state")["pausedAgents"] == ["t1"]
        hold_a.open()
        ink.wait_event("run_held", source=t1, at="tool_call")
        ink.wait_event("tool_settled", toolCallId="t2")  # its sibling finished meanwhile (R3)
        assert not (marks / "a1").exists()
        assert ink.ok("get_state")["paused"] is False  # the run itself is not paused
        assert ink.ok("resume", source="t1") == {"source": "t1", "wasPaused": True}
        ink.wait_event("run_resumed", source=t1, reason="resume")
        ink.wait_event("run_end", stopReason="completed")
    assert (marks / "a1").read_text() == "ran\n"


def test_R44_pausing_the_run_holds_its_sub_agents_too(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, marks: Path
) -> None:
    hold_a = Gate()
    first = Reply([task("t1", "find A", "general")])
    fake_server.responder = route(
        lambda r: first if not r.tool_results() else say("done"),
        {
            "find A": lambda r: (
                Reply([text("A "), hold_a, marker_call(marks, "a1")]) if not r.tool_results() else say("A")
            )
        },
    )
    flags = provider_args(fake_server, "openai", "--permission-mode", "yolo")
    with RpcClient.start(flags, ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="find it")
        hold_a.wait_reached()
        ink.ok("pause")
        hold_a.open()
        ink.wait_event("run_held", source={"id": "t1", "agent": "general"}, at="tool_call")
        assert not (marks / "a1").exists()
        ink.ok("resume")
        ink.wait_event("run_end", stopReason="completed")
    assert (marks / "a1").read_text() == "ran\n"
