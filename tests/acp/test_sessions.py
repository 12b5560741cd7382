"""ACP sessions are ink sessions: ``session/load`` resumes one by id and replays its history; several
sessions in one process each have their own controller and history."""

from __future__ import annotations

from pathlib import Path

from tests.acp.client import AcpClient
from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, Gate, Reply, call, say, text


def _first_session(fake_server: FakeModelServer, ink: AcpClient, project: Path) -> str:
    fake_server.script(call("read", {"path": "notes.txt"}, id="c1", say_first="Reading."), say("It is 42."))
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("what is the secret?"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    ink.close_stdin()
    assert ink.wait_exit() == 0
    return session


def test_session_load_replays_the_history_then_goes_on_with_it(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    session = _first_session(fake_server, start_acp(), project)
    ink = start_acp()
    ink.ok("initialize", protocolVersion=1)
    load = ink.send("session/load", sessionId=session, cwd=str(project), mcpServers=[])
    at, answer = ink.wait_response_at(load)
    assert answer["result"]["models"]["currentModelId"] == "gpt-4.1"  # the session's model
    replayed = ink.updates(session)
    assert len([m for m in ink.lines[:at] if m.get("method") == "session/update"]) == len(replayed)
    assert [(u["sessionUpdate"], u.get("toolCallId") or u["content"]["text"]) for u in replayed] == [
        ("user_message_chunk", "what is the secret?"),
        ("agent_message_chunk", "Reading."),
        ("tool_call", "c1"),
        ("tool_call_update", "c1"),
        ("agent_message_chunk", "It is 42."),
    ]
    assert replayed[2]["title"] == "read notes.txt" and replayed[3]["status"] == "completed"
    fake_server.script(say("Still 42."))
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("sure?"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert fake_server.user_texts()[-1] == ["what is the secret?", "sure?"]


def test_loading_an_unknown_session_is_resource_not_found(start_acp: StartAcp, project: Path) -> None:
    ink = start_acp()
    ink.ok("initialize", protocolVersion=1)
    error = ink.error("session/load", sessionId="0123456789abcdef", cwd=str(project), mcpServers=[])
    assert error["code"] == -32002 and "0123456789abcdef" in error["message"]


def test_without_sessions_load_is_not_offered(start_acp: StartAcp, project: Path) -> None:
    ink = start_acp("--no-session")
    assert ink.ok("initialize", protocolVersion=1)["agentCapabilities"]["loadSession"] is False
    session = ink.ok("session/new", cwd=str(project), mcpServers=[])["sessionId"]
    assert ink.error("session/load", sessionId="abc", cwd=str(project), mcpServers=[])["code"] == -32600
    ink.ok("session/load", sessionId=session, cwd=str(project), mcpServers=[])  # the live one replays


def test_two_sessions_run_side_by_side_with_their_own_histories(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    gate = Gate()
    fake_server.script(Reply([gate, text("for A")]), say("for B"))
    ink = start_acp()
    first = open_session(ink, project)
    second = ink.ok("session/new", cwd=str(project), mcpServers=[])["sessionId"]
    assert first != second
    prompt_a = ink.send("session/prompt", sessionId=first, prompt=text_prompt("task A"))
    gate.wait_reached()
    prompt_b = ink.send("session/prompt", sessionId=second, prompt=text_prompt("task B"))
    assert ink.wait_response(prompt_b)["result"] == {"stopReason": "end_turn"}  # not queued behind A
    assert ink.responses(prompt_a) == []
    gate.open()
    assert ink.wait_response(prompt_a)["result"] == {"stopReason": "end_turn"}
    assert sorted(fake_server.user_texts()) == [["task A"], ["task B"]]
    assert [u["content"]["text"] for u in ink.updates(second)] == ["for B"]
    assert [u["content"]["text"] for u in ink.updates(first)] == ["for A"]


def test_an_editors_mcp_server_that_cannot_start_fails_alone(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(say("still working"))
    ink = start_acp()
    ink.ok("initialize", protocolVersion=1)
    server = {"name": "fs", "command": "/bin/false", "args": [], "env": []}
    session = ink.ok("session/new", cwd=str(project), mcpServers=[server])["sessionId"]
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    assert ink.wait_response(prompt, timeout=60)["result"] == {"stopReason": "end_turn"}
    ink.close_stdin()
    assert ink.wait_exit() == 0
    assert "MCP server fs: " in ink.stderr


def test_a_session_loaded_by_prefix_keeps_the_id_it_was_loaded_by_and_its_full_id(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    """Issue 11: loading the session again (held by this very process) was refused as open in another
    ink process. Issue 27: after a load by prefix only the full id worked, and the updates named the
    full id, which a client that knows the session by the prefix drops: the id it was loaded by keeps
    naming it (the schema's answer has no field for another), and the full id works too."""
    session = _first_session(fake_server, start_acp(), project)
    prefix = session[:6]
    ink = start_acp()
    ink.ok("initialize", protocolVersion=1)
    loaded = ink.ok("session/load", sessionId=prefix, cwd=str(project), mcpServers=[])
    assert loaded.keys() == {"configOptions", "modes", "models"}
    updates = [m for m in ink.lines if m.get("method") == "session/update"]
    assert updates and {m["params"]["sessionId"] for m in updates} == {prefix}
    fake_server.script(say("again"), say("and again"))
    for name in (prefix, session):
        prompt = ink.send("session/prompt", sessionId=name, prompt=text_prompt("go on"))
        assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    mark = ink.mark()
    assert ink.ok("session/load", sessionId=prefix, cwd=str(project), mcpServers=[])["modes"]
    again = [m for m in ink.lines[mark:] if m.get("method") == "session/update"]
    assert again and {m["params"]["sessionId"] for m in again} == {prefix}, "replayed, not refused"


def test_session_set_model_applies_from_the_next_prompt_and_is_offered_in_the_model_state(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(say("one"), say("two"))
    ink = start_acp()
    ink.ok("initialize", protocolVersion=1)
    created = ink.ok("session/new", cwd=str(project), mcpServers=[])
    models = created["models"]
    assert models["currentModelId"] in [m["modelId"] for m in models["availableModels"]]
    session = created["sessionId"]
    first = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    assert ink.wait_response(first)["result"] == {"stopReason": "end_turn"}
    assert ink.ok("session/set_model", sessionId=session, modelId="other-model") == {}
    again = ink.send("session/prompt", sessionId=session, prompt=text_prompt("again"))
    assert ink.wait_response(again)["result"] == {"stopReason": "end_turn"}
    assert [r.body["model"] for r in fake_server.requests][1] == "other-model"
    assert fake_server.requests[0].body["model"] != "other-model"
    blank = ink.wait_response(ink.send("session/set_model", sessionId=session, modelId=" "))
    assert "modelId must not be blank" in blank["error"]["message"]
