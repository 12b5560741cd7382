"""A sub-agent over ACP (issue 18, R7): the editor sees the ``task`` call it works for, updated with the
list of the sub-agent's tool calls as they start and end, then the call's result replacing that list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, Reply, say, tool_call


def test_the_task_call_shows_the_sub_agents_calls_then_its_result(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    (project / "a.py").write_text("A = 1\n")

    def answer(request: Any) -> Reply:
        if request.system.startswith("You are ink"):
            if not request.tool_results():
                job = {"description": "find A", "prompt": "find A", "agent": "explore"}
                return Reply([tool_call("task", job, id="t1")])
            return say("It is in a.py.")
        if not request.tool_results():
            return Reply(
                [tool_call("ls", {"path": "."}, id="s1"), tool_call("read", {"path": "a.py"}, id="s2")]
            )
        return say("A is in a.py")

    fake_server.responder = answer
    ink = start_acp("--permission-mode", "yolo")
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("where is A?"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    progress = [
        u["content"][0]["content"]["text"]
        for u in ink.updates(session)
        if u.get("toolCallId") == "t1" and u.get("status") == "in_progress" and u.get("content")
    ]
    assert progress, "no progress of the sub-agent on its task call"
    last = progress[-1].split("\n")
    assert last[0] == "explore sub-agent · 2 tool calls"
    assert sorted(last[1:]) == ["✓ ls .", "✓ read a.py"]
    assert any("… read a.py" in p for p in progress)  # a running call is listed before it ends
    done = [u for u in ink.updates(session) if u.get("toolCallId") == "t1" and u.get("status") == "completed"]
    assert done[-1]["content"][0]["content"]["text"] == "A is in a.py"  # the result replaces the list
    assert not [
        u for u in ink.updates(session) if u.get("toolCallId") in ("s1", "s2")
    ]  # not this turn's calls
