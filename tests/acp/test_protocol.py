"""JSON-RPC robustness of ``ink acp``: every bad line gets its proper error, and the process keeps serving.

stdout carrying protocol messages only is checked for every test by the ``start_acp`` fixture.
"""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, say


def test_initialize_announces_version_capabilities_and_agent(start_acp: StartAcp) -> None:
    ink = start_acp()
    result = ink.ok("initialize", protocolVersion=1, clientCapabilities={"fs": {"readTextFile": True}})
    assert result["protocolVersion"] == 1
    capabilities = result["agentCapabilities"]
    assert capabilities["loadSession"] is True
    # The default model takes images, so prompts may hold them (test_prompts: one that does not).
    assert capabilities["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert result["authMethods"] == []
    assert result["agentInfo"]["name"] == "ink" and result["agentInfo"]["version"]
    assert ink.ok("authenticate", methodId="anything") == {}


def test_a_newer_client_version_is_answered_with_the_one_ink_speaks(start_acp: StartAcp) -> None:
    ink = start_acp()
    assert ink.ok("initialize", protocolVersion=7)["protocolVersion"] == 1


def test_garbage_lines_get_errors_and_valid_requests_still_work(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(say("still fine"))
    ink = start_acp()
    bad_lines = [
        (b"this is not json", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700),
        (b"[1, 2, 3]", -32600),
        (b'"a string"', -32600),
        (b'{"jsonrpc": "2.0", "id": {"no": "objects"}, "method": "initialize"}', -32600),
        (b'{"jsonrpc": "2.0", "id": null}', -32600),
        (b"\xff\xfe not utf-8", -32700),
        (b'{"jsonrpc": "2.0", "id": 1e400, "method": "initialize"}', -32700),  # never echoed as null
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "initialize"}', -32600),
    ]
    for line, code in bad_lines:
        mark = ink.mark()
        ink.send_raw(line + b"\n")
        _, answer = ink.wait_line(lambda m: "error" in m, after=mark)
        assert answer["id"] is None and answer["error"]["code"] == code, (line, answer)
        if b"e400" in line:
            assert "1e400 is out of range" in answer["error"]["message"]
        if b"1.5" in line:
            assert "id must be a string, an integer or null, not a fraction" in answer["error"]["message"]
    ink.send_raw(b"\n   \n")  # blank lines are no messages: no answer
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert len([m for m in ink.lines if "error" in m]) == len(bad_lines)


def test_errors_carry_the_request_id_and_the_standard_code(start_acp: StartAcp, project: Path) -> None:
    ink = start_acp()
    ink.send_json({"id": "no-version", "method": "initialize", "params": {"protocolVersion": 1}})
    assert ink.wait_response("no-version")["error"]["code"] == -32600
    unknown = ink.error("session/fork", sessionId="x")
    assert unknown["code"] == -32601 and unknown["data"] == {"method": "session/fork"}
    assert ink.error("initialize")["code"] == -32602
    ink.send_json({"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": [1]})
    assert ink.wait_response(99)["error"]["code"] == -32602
    assert ink.error("session/new", mcpServers=[])["code"] == -32602  # no cwd
    relative = ink.error("session/new", cwd="proj", mcpServers=[])
    assert relative["code"] == -32602 and "absolute" in relative["message"]
    missing = ink.error("session/new", cwd=str(project / "nowhere"), mcpServers=[])
    assert missing["code"] == -32602 and "not a directory" in missing["message"]
    assert ink.error("session/new", cwd=str(project), mcpServers="all")["code"] == -32602
    no_session = ink.error("session/prompt", sessionId="nope", prompt=text_prompt("hi"))
    assert no_session["code"] == -32002 and "nope" in no_session["message"]


def test_bad_prompts_are_invalid_params(start_acp: StartAcp, project: Path) -> None:
    ink = start_acp()
    session = open_session(ink, project)
    audio = [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]
    not_base64 = [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]
    not_an_image = [{"type": "image", "data": "AAAA", "mimeType": "text/plain"}]
    cases = [audio, not_base64, not_an_image, [], text_prompt("   "), "just a string", [{"type": "video"}]]
    for prompt in [*cases, [{"type": "text"}]]:
        error = ink.error("session/prompt", sessionId=session, prompt=prompt)
        assert error["code"] == -32602, (prompt, error)
    assert "audio" in ink.error("session/prompt", sessionId=session, prompt=audio)["message"]
    assert "not base64" in ink.error("session/prompt", sessionId=session, prompt=not_base64)["message"]


def test_notifications_never_get_an_answer_even_when_they_fail(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(say("ok"))
    ink = start_acp()
    session = open_session(ink, project)
    mark = ink.mark()
    ink.notify("no/such/method")
    ink.notify("session/cancel", sessionId="unknown-session")
    ink.send_json({"jsonrpc": "2.0", "method": "session/cancel", "params": "bad"})
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    at, answer = ink.wait_response_at(prompt)
    assert answer["result"] == {"stopReason": "end_turn"}
    assert [m for m in ink.lines[mark:at] if "method" not in m] == []  # nothing answered the three


def test_cancel_sent_as_a_request_is_answered_with_null(start_acp: StartAcp, project: Path) -> None:
    ink = start_acp()
    session = open_session(ink, project)
    assert ink.request("session/cancel", sessionId=session) == {"jsonrpc": "2.0", "id": 3, "result": None}


def test_an_answer_to_no_request_of_ours_is_ignored(start_acp: StartAcp) -> None:
    ink = start_acp()
    ink.send_json({"jsonrpc": "2.0", "id": "ink-999", "result": {"outcome": {"outcome": "cancelled"}}})
    assert ink.ok("initialize", protocolVersion=1)["protocolVersion"] == 1


def test_end_of_input_while_idle_exits_0_at_once(start_acp: StartAcp, project: Path) -> None:
    ink = start_acp()
    open_session(ink, project)
    ink.close_stdin()
    assert ink.wait_exit() == 0
    assert "Traceback" not in ink.stderr
