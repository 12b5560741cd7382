"""R39 for an MCP server's question over RPC: an ``elicitation_response`` that is garbage, ambiguous,
for no open question, repeated or late is refused and changes nothing; the question stays open until an
answer that fits, and what the server gets is exactly that answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakeserver import FakeModelServer, call, say
from tests.mcp_tools.test_frontends import hostile_env
from tests.rpc.client import RpcClient


def answered(client: RpcClient, line: bytes, answer_id: object) -> dict[str, Any]:
    """Send one raw line; the response to it (by the id it echoes)."""
    at = client.mark()
    client.send_raw(line + b"\n")
    return client.wait_line(lambda x: x.get("type") == "response" and x.get("id") == answer_id, after=at)[1]


def respond(client: RpcClient, **fields: Any) -> dict[str, Any]:
    return answered(client, json.dumps({"type": "elicitation_response", **fields}).encode(), fields["id"])


def test_hostile_elicitation_answers_are_refused_and_the_question_stays_open(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    env = hostile_env(tmp_path)
    fake_server.script(call("mcp__h__ask", {}), say("thanks"), call("mcp__h__ask", {}), say("stopped"))
    flags = ["--base-url", fake_server.openai_base_url, "--no-session", "--permission-mode", "yolo"]
    with RpcClient.start(flags, env, tmp_path) as client:
        client.wait_event("notice", timeout=120)
        client.ok("prompt", text="ask me")
        asked = client.wait_event("elicitation_request", timeout=60)
        question = asked["id"]
        hostile: list[dict[str, Any]] = [
            {"id": "elicit-999", "action": "accept", "content": {"color": "red"}},  # no such question
            {"id": question, "action": "Accept", "content": {"color": "red"}},
            {"id": question, "action": "accept", "content": {"color": 5}},
            {"id": question, "action": "accept", "content": {"color": ["red"]}},
            {"id": question, "action": "accept", "content": {"color": "red", "admin": True}},
            {"id": question, "action": "accept", "content": "color=red"},
            {"id": question, "action": None},
        ]
        for fields in hostile:
            refused = respond(client, **fields)
            assert refused["ok"] is False, (fields, refused)
        twice = (
            f'{{"type":"elicitation_response","id":{json.dumps(question)},"action":"decline",'
            '"action":"accept","content":{"color":"red"}}'
        )
        assert "appears twice" in answered(client, twice.encode(), question)["error"]
        assert [q["id"] for q in client.ok("get_state")["elicitationRequests"]] == [question]
        assert client.events("elicitation_resolved") == []

        assert respond(client, id=question, action="decline")["ok"] is True
        client.wait_event("elicitation_resolved", id=question, action="decline")
        for late in ("accept", "cancel"):  # answered already: a repeated answer changes nothing
            repeated = respond(client, id=question, action=late, content={"color": "x"})
            assert "no open question" in repeated["error"]
        client.wait_event("run_end", timeout=60)
        at = client.mark()
        client.ok("prompt", text="ask again")
        again = client.wait_event("elicitation_request", after=at, timeout=60)
        assert again["id"] != question
        client.ok("abort")
        client.wait_event("elicitation_resolved", id=again["id"], action="cancel", timeout=60)
        late = respond(client, id=again["id"], action="accept", content={"color": "red"})  # after the abort
        assert "no open question" in late["error"]
        client.wait_event("run_end", after=at, timeout=60)
    result = fake_server.requests[1].tool_results()[-1][1]
    assert "decline" in result and "red" not in result
