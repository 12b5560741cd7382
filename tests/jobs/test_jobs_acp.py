"""R43 over ACP (``ink acp``): a background job is a tool call of its own that stays ``in_progress`` until
the job ends, then ``completed`` (exit 0) or ``failed``, with its last lines of output."""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, call, say


def test_a_job_is_a_tool_call_in_progress_until_it_ends(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    waits = "echo waiting; until [ -e go ]; do sleep 0.01; done; echo done"
    fake_server.script(call("bash", {"command": waits, "background": True}, id="c1"), say("started"))
    ink = start_acp("--permission-mode", "yolo")
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("start it"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    job = ink.wait_update("tool_call", toolCallId="ink-job-1")
    assert (job["status"], job["kind"]) == ("in_progress", "execute")
    assert job["title"].startswith("job-1 (background): echo waiting")
    assert ink.wait_update("tool_call_update", toolCallId="c1", status="completed")  # the bash call itself
    assert not [u for u in ink.updates(session) if u.get("toolCallId") == "ink-job-1" and "status" in u][1:]
    (project / "go").touch()
    ended = ink.wait_update("tool_call_update", toolCallId="ink-job-1", status="completed")
    texts = [item["content"]["text"] for item in ended["content"]]
    assert "exit code 0" in texts[0] and "waiting\ndone\n" in texts[1]


def test_a_job_that_fails_ends_its_tool_call_failed(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(call("bash", {"command": "echo oops; exit 2", "background": True}), say("started"))
    ink = start_acp("--permission-mode", "yolo")
    session = open_session(ink, project)
    ink.wait_response(ink.send("session/prompt", sessionId=session, prompt=text_prompt("start it")))
    ended = ink.wait_update("tool_call_update", toolCallId="ink-job-1", status="failed")
    assert "exit code 2" in ended["content"][0]["content"]["text"]
