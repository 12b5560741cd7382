"""Sub-agent transcripts (issue 29): written for any tool call id the model chooses, and never lost
without a word. An id with ``/``, a NUL or 10,000 characters named no file, and the failure was swallowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ink.agent.events import Notice, Source
from ink.agent.history import History
from ink.ai.messages import UserMessage
from ink.extend.task import SubAgents, TaskTool, transcript_name
from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient

HOSTILE_IDS = ["../../escape", "a/b", "nul\0id", "x" * 10_000, ".hidden"]


def test_hostile_tool_call_ids_still_get_their_transcripts(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    def answer(request: Any) -> Reply:
        if not request.system.startswith("You are ink"):
            return say(f"answer to {request.user_texts()[0]}")
        if request.tool_results():
            return say("all done")
        calls = [
            tool_call(
                "task", {"description": f"job {n}", "prompt": f"job {n}", "agent": "explore"}, id=call_id
            )
            for n, call_id in enumerate(HOSTILE_IDS)
        ]
        return Reply(calls)

    fake_server.responder = answer
    flags = provider_args(fake_server, "openai", "--permission-mode", "yolo")
    with RpcClient.start(flags, ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="go")
        ink.wait_event("run_end", stopReason="completed")
        assert not [e for e in ink.events("notice") if "transcript" in e.get("text", "")]
        session_id = ink.ok("get_state")["sessionId"]
    [folder] = [p for p in (tmp_path / "inkhome" / "sessions").rglob("*.subagents") if session_id in p.name]
    assert folder.is_dir() and not (folder.parent / "escape").exists()
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == len(HOSTILE_IDS) and all(len(name) < 200 for name in names), names
    texts = {json.loads(p.read_text().splitlines()[-1])["content"][0]["text"] for p in folder.iterdir()}
    assert texts == {f"answer to job {n}" for n in range(len(HOSTILE_IDS))}


def test_a_safe_id_keeps_its_name_and_unsafe_ones_get_distinct_digests() -> None:
    assert transcript_name(Source("call_1", "explore")) == "explore-call_1.jsonl"
    names = {transcript_name(Source(call_id, "explore")) for call_id in HOSTILE_IDS}
    assert len(names) == len(HOSTILE_IDS)
    assert all("/" not in name and "\0" not in name and not name.startswith(".") for name in names)


def test_a_transcript_that_cannot_be_written_is_said_once(tmp_path: Path) -> None:
    blocker = tmp_path / "session.subagents"
    blocker.write_text("a file where the folder would go")
    tool = TaskTool({}, SubAgents(), transcripts=lambda: blocker)
    said: list[Any] = []
    history = History()
    stop = tool._record(history, Source("t1", "explore"), said.append)
    history.append(UserMessage("one"))
    history.append(UserMessage("two"))
    stop()
    assert len(said) == 1 and isinstance(said[0], Notice) and said[0].level == "warning"
    assert "transcript of sub-agent explore" in said[0].text and "the run goes on" in said[0].text
