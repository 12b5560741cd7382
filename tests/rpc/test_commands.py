"""Every RPC command of CONTRACT.md, answered once, with its data and its failure cases.

The real ``ink --mode rpc`` process talks to the fake model server (strict mode); runs are held at the
server's gates while a test acts, so nothing depends on timing.
"""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, call, say, text, thinking
from tests.rpc.conftest import StartRpc
from tests.rpc.helpers import held, mid_run


def test_prompt_while_idle_starts_a_run_and_answers_its_input_id(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    fake_server.script(say("Hello ", "there"))
    ink = start_rpc()
    data = ink.ok("prompt", text="hi")
    assert data == {"inputId": data["inputId"], "queued": False}
    taken = ink.wait_event("input_taken")
    assert taken["mode"] == "steer" and taken["inputs"] == [{"inputId": data["inputId"], "text": "hi"}]
    end = ink.wait_event("run_end")
    assert end["stopReason"] == "completed" and end["restoredInput"] == []
    deltas = [e["text"] for e in ink.events("text_delta")]
    assert deltas == ["Hello ", "there"]
    assert fake_server.user_texts() == [["hi"]]


def test_steer_follow_up_and_prompt_queue_while_running(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(text("working"))
    fake_server.script(reply, say("a"), say("b"))
    ink = start_rpc()
    first = ink.ok("steer", text="start")  # idle: steer starts a run like prompt
    assert first["queued"] is False
    gate.wait_reached()
    queued = [ink.ok(kind, text=f"{kind} text") for kind in ("prompt", "steer", "follow_up")]
    assert all(q["queued"] for q in queued)
    queue = ink.ok("get_queue")["queue"]
    assert queue == [
        {"inputId": queued[0]["inputId"], "text": "prompt text", "mode": "steer"},
        {"inputId": queued[1]["inputId"], "text": "steer text", "mode": "steer"},
        {"inputId": queued[2]["inputId"], "text": "follow_up text", "mode": "follow_up"},
    ]
    gate.open()
    ink.wait_event("run_end", stopReason="completed")
    assert fake_server.user_texts()[1:] == [
        ["start", "prompt text", "steer text"],
        ["start", "prompt text", "steer text", "follow_up text"],
    ]


def test_a_queued_inputs_response_comes_before_the_queue_update_naming_it(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    ink, gate = mid_run(fake_server, start_rpc, say("y"), prompt="start")
    command_id = ink.send("follow_up", text="later")
    at, answer = ink.wait_line(lambda x: x.get("id") == command_id)
    _, update = ink.wait_event_at("queue_update", after=at)
    assert [q["inputId"] for q in update["queue"]] == [answer["data"]["inputId"]]
    gate.open()
    ink.wait_event("run_end")


def test_get_state_reports_state_queue_session_model_and_modes(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(text("x"))
    fake_server.script(reply, say("y"))
    ink = start_rpc("--model", "gpt-4.1-mini", "--follow-up-mode", "all")
    idle = ink.ok("get_state")
    assert idle["state"] == "idle" and idle["queue"] == []
    assert idle["model"] == "gpt-4.1-mini" and idle["provider"] == "openai"
    assert (idle["steeringMode"], idle["followUpMode"]) == ("all", "all")
    assert isinstance(idle["sessionId"], str) and len(idle["sessionId"]) >= 8
    ink.ok("prompt", text="start")
    gate.wait_reached()
    queued = ink.ok("follow_up", text="later")
    running = ink.ok("get_state")
    assert running["state"] == "running"
    assert (
        running["queue"]
        == ink.ok("get_queue")["queue"]
        == [{"inputId": queued["inputId"], "text": "later", "mode": "follow_up"}]
    )
    gate.open()
    ink.wait_event("run_end")
    assert ink.ok("get_state")["state"] == "idle"


def test_no_session_has_a_null_session_id(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    ink = start_rpc("--no-session")
    assert ink.ok("get_state")["sessionId"] is None


def test_get_messages_returns_the_provider_neutral_history(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    fake_server.script(
        Reply(
            [thinking("let me see"), text("Reading."), *call("read", {"path": "notes.txt"}, id="c1").steps]
        ),
        say("It says 42."),
    )
    ink = start_rpc()
    assert ink.ok("get_messages") == {"messages": []}
    prompt = ink.ok("prompt", text="what is in notes.txt?")
    ink.wait_event("run_end", stopReason="completed")
    messages = ink.ok("get_messages")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    user, reply, result, answer = messages
    assert user["text"] == "what is in notes.txt?" and user["inputId"] == prompt["inputId"]
    assert user["kind"] == "prompt" and isinstance(user["timestamp"], float)
    assert [b["type"] for b in reply["content"]] == ["thinking", "text", "tool_call"]
    assert reply["content"][0]["thinking"] == "let me see"
    assert reply["content"][2] == {
        "id": "c1",
        "name": "read",
        "arguments": {"path": "notes.txt"},
        "type": "tool_call",
    }
    assert reply["stopReason"] == "tool_use" and reply["provider"] == "openai"
    assert result["toolCallId"] == "c1" and result["name"] == "read" and result["isError"] is False
    assert "the secret is 42" in result["output"]
    assert answer["content"] == [{"type": "text", "text": "It says 42."}]


def test_set_modes_applies_to_the_following_runs(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    ink = start_rpc()
    assert ink.ok("set_modes", followUp="all") == {"steeringMode": "all", "followUpMode": "all"}
    assert ink.ok("set_modes", steering="one-at-a-time") == {
        "steeringMode": "one-at-a-time",
        "followUpMode": "all",
    }
    state = ink.ok("get_state")
    assert (state["steeringMode"], state["followUpMode"]) == ("one-at-a-time", "all")
    assert "set_modes needs" in ink.fail("set_modes")
    assert "must be one of" in ink.fail("set_modes", steering="some")


def test_abort_while_idle_is_a_no_op(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    ink = start_rpc()
    assert ink.ok("abort") == {"wasRunning": False}
    assert ink.events("run_end") == []


def test_abort_is_answered_at_once_and_run_end_follows(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    ink, gate = mid_run(fake_server, start_rpc)
    command_id = ink.send("abort")
    at, answer = ink.wait_line(lambda x: x.get("id") == command_id)
    assert answer["data"] == {"wasRunning": True}
    _, end = ink.wait_event_at("run_end", after=at)
    assert end["stopReason"] == "aborted" and end["receipt"]["reason"] == "user"
    assert fake_server.requests[0].wait_finished() == "client_left"  # R17: the stream was closed
    gate.open()


def test_interrupt_with_while_idle_acts_as_prompt(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    fake_server.script(say("ok"))
    ink = start_rpc()
    data = ink.ok("interrupt_with", text="do this")
    assert data["queued"] is False
    ink.wait_event("run_end", stopReason="completed")
    assert fake_server.user_texts() == [["do this"]]


def test_new_session_only_while_idle(
    fake_server: FakeModelServer, start_rpc: StartRpc, tmp_path: Path
) -> None:
    gate, reply = held(text("x"))
    fake_server.script(say("first answer"), reply, say("fresh"))
    ink = start_rpc()
    before = ink.ok("get_state")["sessionId"]
    ink.ok("prompt", text="one")
    ink.wait_event("run_end")
    mark = ink.mark()
    ink.ok("prompt", text="two")
    gate.wait_reached()
    reason = ink.fail("new_session")
    assert "only start while idle" in reason
    gate.open()
    ink.wait_event("run_end", after=mark)
    data = ink.ok("new_session")
    assert data["sessionId"] != before
    assert ink.ok("get_state")["sessionId"] == data["sessionId"]
    assert ink.ok("get_messages") == {"messages": []}
    mark = ink.mark()
    ink.ok("prompt", text="three")
    ink.wait_event("run_end", after=mark)
    assert fake_server.user_texts()[-1] == ["three"]  # nothing of the old session was sent


def test_queue_edit_cancel_and_switch(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    ink, gate = mid_run(fake_server, start_rpc, say("a"), say("b"), prompt="start")
    a = ink.ok("follow_up", text="a")["inputId"]
    b = ink.ok("follow_up", text="b")["inputId"]
    c = ink.ok("steer", text="c")["inputId"]
    assert ink.ok("edit_queued", inputId=a, text="a edited")["queue"][0] == {
        "inputId": a,
        "text": "a edited",
        "mode": "follow_up",
    }
    assert [q["inputId"] for q in ink.ok("cancel_queued", inputId=b)["queue"]] == [a, c]
    queue = ink.ok("set_queued_mode", inputId=c, mode="follow_up")["queue"]
    assert [(q["inputId"], q["mode"]) for q in queue] == [(a, "follow_up"), (c, "follow_up")]
    assert "no longer queued (it is cancelled)" in ink.fail("cancel_queued", inputId=b)
    assert "no input with id" in ink.fail("edit_queued", inputId="in-999", text="x")
    assert "must be one of" in ink.fail("set_queued_mode", inputId=a, mode="later")
    gate.open()
    ink.wait_event("run_end", stopReason="completed")
    assert fake_server.user_texts()[1:] == [["start", "a edited"], ["start", "a edited", "c"]]


def test_the_input_that_starts_a_run_is_never_in_the_queue(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    """Both lines arrive in one read, so the queue is asked for before the run's task has started."""
    gate, reply = held(text("x"))
    fake_server.script(reply)
    ink = start_rpc()
    ink.send_raw(
        b'{"type":"prompt","id":"p","text":"start"}\n{"type":"get_queue","id":"q"}\n'
        b'{"type":"cancel_queued","id":"c","inputId":"in-1"}\n'
    )
    assert ink.wait_response("p")["data"] == {"inputId": "in-1", "queued": False}
    assert ink.wait_response("q")["data"] == {"queue": []}
    cancel = ink.wait_response("c")
    assert cancel["ok"] is False and "is no longer queued (it is taken)" in cancel["error"]
    gate.open()
    ink.wait_event("run_end", stopReason="completed")
    assert "no longer queued (it is committed)" in ink.fail("edit_queued", inputId="in-1", text="y")


def test_permission_for_an_unknown_request_fails(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    ink = start_rpc()
    reason = ink.fail("permission", requestId="perm-9", decision="allow")
    assert "no open permission request 'perm-9'" in reason
    assert "must be one of" in ink.fail("permission", requestId="perm-9", decision="maybe")


def test_set_model_applies_from_the_next_run_and_a_running_one_keeps_its_model(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    ink, gate = mid_run(fake_server, start_rpc, say("second"), prompt="one")
    assert ink.ok("set_model", model="other-model") == {"model": "other-model", "provider": "openai"}
    assert ink.ok("get_state")["model"] == "other-model"
    mark = ink.mark()
    gate.open()
    ink.wait_event("run_end", after=mark)
    mark = ink.mark()
    ink.ok("prompt", text="two")
    ink.wait_event("run_end", after=mark)
    assert fake_server.requests[0].body["model"] != "other-model"  # R13: the run going on kept its model
    assert fake_server.requests[1].body["model"] == "other-model"
    assert "unknown provider 'nope'" in ink.fail("set_model", model="m", provider="nope")
    assert "must not be empty" in ink.fail("set_model", model=" ")
    assert ink.ok("get_state")["model"] == "other-model"  # a failed switch changes nothing
