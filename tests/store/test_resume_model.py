"""A resumed session goes on with the model chosen in it (docs/rpc.md, ``set_model``): a new process that
resumes it (RPC ``--resume ID``, ACP ``session/load``) sends that model and writes no ``model_change`` back
to the model of its own command line; a ``--model`` on that command line still wins."""

from __future__ import annotations

import json
from pathlib import Path

from tests.acp.client import AcpClient
from tests.acp.conftest import StartAcp, open_session, start_acp, text_prompt
from tests.fakeserver import FakeModelServer, say
from tests.rpc.conftest import StartRpc, start_rpc

__all__ = ["start_acp", "start_rpc"]  # the fixtures of both protocols' suites


def recorded(session_dir: Path, session_id: str) -> list[str]:
    """The models the session file records, in order: its header's, then each switch."""
    [path] = session_dir.rglob(f"*{session_id}*.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [line["model"] for line in lines if line.get("type") in ("session", "model_change")]


def test_rpc_resume_goes_on_with_the_model_set_in_the_session(
    fake_server: FakeModelServer, start_rpc: StartRpc, tmp_path: Path
) -> None:
    fake_server.script(say("one"), say("two"), say("three"))
    first = start_rpc()
    session_id = first.ok("get_state")["sessionId"]
    assert first.ok("set_model", model="gpt-4.1-mini")["model"] == "gpt-4.1-mini"
    first.ok("prompt", text="hi")
    first.wait_event("run_end", stopReason="completed")
    first.close_stdin()
    assert first.wait_exit() == 0
    again = start_rpc("--resume", session_id)
    assert again.ok("get_state")["model"] == "gpt-4.1-mini"
    again.ok("prompt", text="and now?")
    again.wait_event("run_end", stopReason="completed")
    again.close_stdin()
    assert again.wait_exit() == 0
    chosen = start_rpc("--resume", session_id, "--model", "gpt-4.1")  # the command line's choice wins
    chosen.ok("prompt", text="and with this one?")
    chosen.wait_event("run_end", stopReason="completed")
    assert [r.body["model"] for r in fake_server.requests] == ["gpt-4.1-mini", "gpt-4.1-mini", "gpt-4.1"]
    assert recorded(tmp_path / "inkhome" / "sessions", session_id) == ["gpt-4.1-mini", "gpt-4.1"]


def test_acp_session_load_in_a_new_process_goes_on_with_the_model_set_in_it(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path, tmp_path: Path
) -> None:
    fake_server.script(say("one"), say("two"))
    first: AcpClient = start_acp()
    session = open_session(first, project)
    first.ok("session/set_model", sessionId=session, modelId="gpt-4.1-mini")
    prompt = first.send("session/prompt", sessionId=session, prompt=text_prompt("hi"))
    assert first.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    first.close_stdin()
    assert first.wait_exit() == 0
    again: AcpClient = start_acp()
    again.ok("initialize", protocolVersion=1)
    loaded = again.ok("session/load", sessionId=session, cwd=str(project), mcpServers=[])
    assert loaded["models"]["currentModelId"] == "gpt-4.1-mini"
    prompt = again.send("session/prompt", sessionId=session, prompt=text_prompt("and now?"))
    assert again.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert [r.body["model"] for r in fake_server.requests] == ["gpt-4.1-mini", "gpt-4.1-mini"]
    assert recorded(tmp_path / "inkhome" / "sessions", session) == ["gpt-4.1-mini"]
