"""Prompt turns over ACP: streamed text, tool calls, cancel, queued prompts, provider errors, bang lines.

The real ``ink acp`` process talks to the fake model server (strict mode); runs are held at the server's
gates while a test acts, so nothing depends on timing.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.acp.conftest import StartAcp, held_prompt, open_session, text_prompt
from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, call, say, text, thinking, tool_call

MARKER = "[interrupted by the user]"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_prompt_streams_message_chunks_then_ends_the_turn(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path, protocol: str
) -> None:
    fake_server.script(Reply([thinking("let me think"), text("Hello "), text("there")]))
    ink = start_acp(protocol=protocol)
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    at, answer = ink.wait_response_at(prompt)
    assert answer["result"] == {"stopReason": "end_turn"}
    shown = [(u["sessionUpdate"], u["content"]["text"]) for u in ink.updates(session)]
    assert shown == [
        ("agent_thought_chunk", "let me think"),
        ("agent_message_chunk", "Hello "),
        ("agent_message_chunk", "there"),
    ]
    assert all(m.get("method") != "session/update" for m in ink.lines[at + 1 :])  # R1: nothing after
    assert fake_server.user_texts() == [["hi"]]


def test_a_tool_call_is_shown_with_kind_title_location_and_its_result(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(call("read", {"path": "notes.txt"}, id="c1", say_first="Reading."), say("It is 42."))
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("what is the secret?"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    started = ink.wait_update("tool_call", toolCallId="c1")
    assert started["kind"] == "read" and started["title"] == "read notes.txt"
    assert started["status"] == "pending" and started["rawInput"] == {"path": "notes.txt"}
    assert started["locations"] == [{"path": str(project / "notes.txt")}]
    ended = ink.wait_update("tool_call_update", toolCallId="c1", status="completed")
    assert "the secret is 42" in ended["content"][0]["content"]["text"]
    kinds = [u["sessionUpdate"] for u in ink.updates(session)]
    assert kinds.index("tool_call") < kinds.index("tool_call_update")
    results = [u for u in ink.updates(session) if u.get("status") in ("completed", "failed")]
    assert len(results) == 1  # R6: shown at tool_settled, not again at tool_end
    assert kinds[-1] == "agent_message_chunk"  # the answer after the result
    assert fake_server.requests[1].tool_results()[0][0] == "c1"


def test_an_edit_shows_its_diff_and_a_failed_call_ends_failed(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    edit = {"path": "notes.txt", "old_text": "42", "new_text": "43"}
    fake_server.script(
        Reply([tool_call("edit", edit, id="e1"), tool_call("read", {"path": "missing.txt"}, id="r1")]),
        say("done"),
    )
    ink = start_acp("--permission-mode", "accept-edits")
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("bump it"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    before, after = "the secret is 42\n", "the secret is 43\n"  # the whole file, as it is and will be
    diff = {"type": "diff", "path": str(project / "notes.txt"), "oldText": before, "newText": after}
    assert ink.wait_update("tool_call", toolCallId="e1")["content"] == [diff]
    edited = ink.wait_update("tool_call_update", toolCallId="e1", status="completed")
    assert edited["content"][0] == diff
    failed = ink.wait_update("tool_call_update", toolCallId="r1", status="failed")
    assert "missing.txt" in failed["content"][0]["content"]["text"]
    assert (project / "notes.txt").read_text() == "the secret is 43\n"


def test_session_cancel_during_a_held_stream_ends_the_turn_cancelled(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("partial "), gate, text("never shown")]), say("fresh"))
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("long task"))
    gate.wait_reached()
    ink.wait_update("agent_message_chunk")
    ink.notify("session/cancel", sessionId=session)
    answer = ink.wait_response(prompt)
    assert answer["result"] == {"stopReason": "cancelled"}  # STYLE rule 4: an outcome, never an error
    assert fake_server.requests[0].wait_finished() == "client_left"  # R17: the stream was closed
    texts = [
        u["content"]["text"] for u in ink.updates(session) if u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert texts == ["partial "]
    gate.open()
    again = ink.send("session/prompt", sessionId=session, prompt=text_prompt("next"))
    assert ink.wait_response(again)["result"] == {"stopReason": "end_turn"}
    assert fake_server.user_texts()[1] == ["long task", MARKER, "next"]  # R23: the history says so


def test_cancel_while_idle_changes_nothing(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(say("ok"))
    ink = start_acp()
    session = open_session(ink, project)
    ink.notify("session/cancel", sessionId=session)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}


def test_a_prompt_while_running_is_queued_as_a_follow_up_and_each_prompt_is_answered_once(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    gate = Gate()
    fake_server.script(Reply([gate, text("first answer")]), say("second answer"))
    ink = start_acp()
    session = open_session(ink, project)
    first = ink.send("session/prompt", sessionId=session, prompt=text_prompt("first"))
    gate.wait_reached()
    second = ink.send("session/prompt", sessionId=session, prompt=text_prompt("second"))
    # R8: queued, not answered; the first is still going on
    sync = ink.send("authenticate", methodId="none")
    ink.wait_response(sync)
    assert ink.responses(first) == [] and ink.responses(second) == []
    gate.open()
    first_at, first_answer = ink.wait_response_at(first)
    second_at, second_answer = ink.wait_response_at(second)
    assert first_answer["result"] == second_answer["result"] == {"stopReason": "end_turn"}
    second_chunk_at, _ = ink.wait_line(
        lambda m: (
            m.get("method") == "session/update"
            and m["params"]["update"].get("content", {}).get("text") == "second answer"
        )
    )
    assert first_at < second_chunk_at < second_at  # the first turn ended when the follow-up was taken
    # R10: the follow-up continued the same run, with the first answer in the history
    assert fake_server.user_texts() == [["first"], ["first", "second"]]
    assert len(ink.responses(first)) == len(ink.responses(second)) == 1


def test_cancel_with_a_queued_prompt_ends_both_cancelled_and_runs_neither_again(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink, session, first, gate = held_prompt(start_acp, fake_server, project, "first", say("after"))
    second = ink.send("session/prompt", sessionId=session, prompt=text_prompt("queued"))
    ink.notify("session/cancel", sessionId=session)
    assert ink.wait_response(first)["result"] == {"stopReason": "cancelled"}
    assert ink.wait_response(second)["result"] == {"stopReason": "cancelled"}  # R22: handed back
    gate.open()
    third = ink.send("session/prompt", sessionId=session, prompt=text_prompt("third"))
    assert ink.wait_response(third)["result"] == {"stopReason": "end_turn"}
    assert fake_server.user_texts()[-1] == ["first", MARKER, "third"]  # the queued one never ran


def test_a_provider_error_is_an_error_answer_with_its_message_and_the_agent_goes_on(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(Fault.http(400, "The model `nope` does not exist"), say("fine again"))
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    answer = ink.wait_response(prompt)
    assert "result" not in answer
    assert answer["error"]["code"] == -32603
    assert "The model `nope` does not exist" in answer["error"]["message"]
    again = ink.send("session/prompt", sessionId=session, prompt=text_prompt("again"))
    assert ink.wait_response(again)["result"] == {"stopReason": "end_turn"}


@pytest.mark.parametrize(("protocol", "stop"), [("openai", "content_filter"), ("anthropic", "refusal")])
def test_a_reply_the_service_refused_ends_the_turn_refusal_with_its_words_shown(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path, protocol: str, stop: str
) -> None:
    fake_server.script(Reply([text("I will not")], stop=stop), say("fine again"))
    ink = start_acp(protocol=protocol)
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "refusal"}
    shown = "".join(
        u["content"]["text"] for u in ink.updates(session) if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert shown.startswith("I will not") and "refused" in shown.lower()
    again = ink.send("session/prompt", sessionId=session, prompt=text_prompt("again"))
    assert ink.wait_response(again)["result"] == {"stopReason": "end_turn"}


def test_max_iterations_ends_the_turn_with_max_turn_requests(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(call("read", {"path": "notes.txt"}), call("read", {"path": "notes.txt"}))
    ink = start_acp("--max-iterations", "1")
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("loop"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "max_turn_requests"}


def test_a_bang_line_runs_in_the_shell_and_is_shown_as_a_command(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("!echo from-the-shell"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    started = ink.wait_update("tool_call")
    assert started["kind"] == "execute" and started["title"] == "!echo from-the-shell"
    ended = ink.wait_update("tool_call_update", toolCallId=started["toolCallId"], status="completed")
    assert "from-the-shell" in ended["content"][0]["content"]["text"]
    assert fake_server.requests == []  # R14: never sent to the model


def test_an_embedded_resource_reaches_the_model_as_context(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(say("seen"))
    ink = start_acp()
    session = open_session(ink, project)
    uri = (project / "notes.txt").as_uri()
    blocks = [
        {"type": "text", "text": "explain "},
        {"type": "resource", "resource": {"uri": uri, "text": "embedded body", "mimeType": "text/plain"}},
        {"type": "text", "text": " and "},
        {"type": "resource_link", "uri": uri, "name": "notes.txt"},
    ]
    prompt = ink.send("session/prompt", sessionId=session, prompt=blocks)
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    sent = fake_server.user_texts()[0][0]
    path = str(project / "notes.txt")
    assert sent.startswith(f"explain [notes.txt]({path}) and [notes.txt]({path})")
    assert f'<context ref="{uri}">\nembedded body\n</context>' in sent


def test_end_of_input_during_a_run_aborts_it_answers_cancelled_and_exits_0(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink, _session, prompt, gate = held_prompt(start_acp, fake_server, project, "work")
    ink.close_stdin()
    assert ink.wait_response(prompt)["result"] == {"stopReason": "cancelled"}
    assert ink.wait_exit() == 0
    assert fake_server.requests[0].wait_finished() == "client_left"
    gate.open()


def test_sigint_aborts_the_run_like_a_cancel_and_the_agent_goes_on(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink, session, prompt, gate = held_prompt(start_acp, fake_server, project, "work", say("next"))
    ink.signal(signal.SIGINT)
    assert ink.wait_response(prompt)["result"] == {"stopReason": "cancelled"}
    gate.open()
    again = ink.send("session/prompt", sessionId=session, prompt=text_prompt("more"))
    assert ink.wait_response(again)["result"] == {"stopReason": "end_turn"}


def test_sigterm_aborts_answers_cancelled_and_exits_143(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink, _session, prompt, gate = held_prompt(start_acp, fake_server, project, "work")
    ink.signal(signal.SIGTERM)
    assert ink.wait_response(prompt)["result"] == {"stopReason": "cancelled"}
    assert ink.wait_exit() == 143
    gate.open()


PNG_DATA = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_an_image_in_a_prompt_reaches_a_model_that_takes_images(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path, protocol: str
) -> None:
    fake_server.script(say("A dot."))
    ink = start_acp(protocol=protocol)
    session = open_session(ink, project)
    image = {"type": "image", "data": PNG_DATA, "mimeType": "image/png"}
    prompt = ink.send("session/prompt", sessionId=session, prompt=[*text_prompt("what is this? "), image])
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    [user] = [m for m in fake_server.requests[0].body["messages"] if m["role"] == "user"]
    assert user["content"][0]["text"] == "what is this? [image 1: image/png]"
    if protocol == "anthropic":
        assert user["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG_DATA}
    else:
        assert user["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG_DATA}"


def test_a_model_without_images_says_so_at_initialize_and_refuses_an_image(
    start_acp: StartAcp, project: Path
) -> None:
    ink = start_acp("--model", "o3-mini")
    capabilities = ink.ok("initialize", protocolVersion=1, clientCapabilities={})["agentCapabilities"]
    assert capabilities["promptCapabilities"]["image"] is False
    session = ink.ok("session/new", cwd=str(project), mcpServers=[])["sessionId"]
    image = [{"type": "image", "data": PNG_DATA, "mimeType": "image/png"}]
    error = ink.error("session/prompt", sessionId=session, prompt=image)
    assert error["code"] == -32602 and "does not take images" in error["message"]
