"""R45 over ACP: a prompt turn that reaches a budget limit ends ``max_turn_requests`` with a message
naming the limit, after a thought with the 80 % warning; a switch to an unpriced model is refused under
a cost limit. ACP has no pause (R44): ``session/cancel`` stays an interrupt, tested in test_prompts."""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, call


def test_R45_a_turn_at_its_limit_ends_max_turn_requests_naming_the_limit(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    reads = [call("read", {"path": "notes.txt"}, id=f"r{i}", say_first="reading") for i in range(4)]
    fake_server.script(*reads)
    ink = start_acp("--model", "gpt-4.1", "--max-tokens", "40", "--permission-mode", "yolo")
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("go"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "max_turn_requests"}
    chunks = ("agent_thought_chunk", "agent_message_chunk")
    texts = [
        (u["sessionUpdate"], u["content"]["text"])
        for u in ink.updates(session)
        if u["sessionUpdate"] in chunks
    ]
    warned = [t for kind, t in texts if kind == "agent_thought_chunk" and "tokens limit of 40 tokens" in t]
    stopped = [t for kind, t in texts if kind == "agent_message_chunk" and "stopped at a budget limit" in t]
    assert warned and stopped
    assert len(fake_server.requests) == 3


def test_R45_the_model_option_refuses_an_unpriced_model_under_a_cost_limit(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    ink = start_acp("--model", "gpt-4.1", "--max-cost", "5")
    session = open_session(ink, project)
    answer = ink.request("session/set_model", sessionId=session, modelId="my-own-model")
    assert "error" in answer and "known prices" in answer["error"]["message"]
