"""Permission questions over ACP: the controller's ``permission_request`` becomes a
``session/request_permission`` request to the editor, whose answer goes back to the broker.

``--permission-mode ask`` (the default) asks before any bash command no rule allows.
"""

from __future__ import annotations

from pathlib import Path

from tests.acp.client import AcpClient
from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, call, say

TOUCH = {"command": "touch made.txt"}


def _ask(fake_server: FakeModelServer, ink: AcpClient, project: Path) -> tuple[str, int, dict]:
    fake_server.script(call("bash", TOUCH, id="b1"), say("finished"))
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("make the file"))
    question = ink.wait_request("session/request_permission")
    return session, prompt, question


def _pick(option: str) -> dict:
    return {"outcome": {"outcome": "selected", "optionId": option}}


def test_allow_runs_the_call(fake_server: FakeModelServer, start_acp: StartAcp, project: Path) -> None:
    ink = start_acp()
    session, prompt, question = _ask(fake_server, ink, project)
    params = question["params"]
    assert params["sessionId"] == session
    assert params["toolCall"]["toolCallId"] == "b1"
    assert params["toolCall"]["title"] == "bash touch made.txt" and params["toolCall"]["kind"] == "execute"
    assert [(o["optionId"], o["kind"]) for o in params["options"]] == [
        ("allow", "allow_once"),
        ("always", "allow_always"),
        ("deny", "reject_once"),
    ]
    assert params["options"][1]["name"] == "Always allow: bash(touch made.txt)"  # the rule it stores
    announced = ink.wait_update("tool_call", toolCallId="b1")
    assert announced["status"] == "pending"  # awaiting approval
    assert not (project / "made.txt").exists()
    ink.answer(question["id"], _pick("allow"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    ink.wait_update("tool_call_update", toolCallId="b1", status="completed")
    assert (project / "made.txt").exists()


def test_deny_refuses_the_call_and_the_model_is_told(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink = start_acp()
    _, prompt, question = _ask(fake_server, ink, project)
    ink.answer(question["id"], _pick("deny"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    ink.wait_update("tool_call_update", toolCallId="b1", status="failed")
    assert not (project / "made.txt").exists()
    (call_id, result), *_ = fake_server.requests[1].tool_results()
    assert call_id == "b1" and "denied" in result.lower()


def test_an_error_answer_from_the_editor_denies(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink = start_acp()
    _, prompt, question = _ask(fake_server, ink, project)
    ink.send_json({"jsonrpc": "2.0", "id": question["id"], "error": {"code": -32603, "message": "no UI"}})
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    ink.wait_update("tool_call_update", toolCallId="b1", status="failed")
    assert not (project / "made.txt").exists()


def test_cancel_while_the_question_is_open_ends_the_turn_cancelled(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink = start_acp()
    session, prompt, question = _ask(fake_server, ink, project)
    ink.notify("session/cancel", sessionId=session)
    assert ink.wait_response(prompt)["result"] == {"stopReason": "cancelled"}
    # the editor then answers the open question "cancelled", as ACP requires: a late answer, ignored
    ink.answer(question["id"], {"outcome": {"outcome": "cancelled"}})
    fake_server.script(say("still here"))
    again = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hello?"))
    assert ink.wait_response(again)["result"] == {"stopReason": "end_turn"}
    assert not (project / "made.txt").exists()
    ended = ink.wait_update("tool_call_update", toolCallId="b1", status="failed")
    assert "cancelled" in ended["content"][0]["content"]["text"].lower()


def test_always_is_not_offered_where_nothing_would_be_remembered(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    # A shell reading its input runs code no rule may allow (R37): "always" could only allow once, so the
    # editor is not offered it (it was, and stored nothing).
    fake_server.script(call("bash", {"command": "echo 'touch piped.txt' | sh"}, id="p1"), say("done"))
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("pipe it"))
    question = ink.wait_request("session/request_permission")
    assert [o["optionId"] for o in question["params"]["options"]] == ["allow", "deny"]
    ink.answer(question["id"], _pick("deny"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert not (project / "piped.txt").exists()
