"""The plan tool (docs/plans.md): its ``plan_update`` events in print mode's stream-json and over RPC, a
sub-agent's with its ``source``, the plan kept in the session file and given back on resume, and a bad
plan refused without changing what is shown. Real ``ink`` processes against the fake model server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient

STEPS = [{"content": "find the bug", "status": "completed"}, {"content": "fix it", "status": "in_progress"}]


def events(stdout: str, kind: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [line for line in lines if line.get("type") == kind]


def test_each_plan_call_is_a_plan_update_in_stream_json_and_never_asks(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(
        call("plan", {"entries": [*STEPS[:1], {"content": "fix it", "status": "pending"}]}, id="p1"),
        call("plan", {"entries": STEPS, "explanation": "found it"}, id="p2"),
        call("plan", {"entries": [{"content": "a", "status": "in_progress"}] * 2}, id="bad"),
        say("done"),
    )
    args = ["-p", "--output-format", "stream-json", "go", *provider_args(fake_server, "openai")]
    ran = run_ink(args, ink_env(tmp_path), project)  # ask mode, print: a question would be refused
    assert ran.returncode == 0, ran.stderr
    updates = events(ran.stdout, "plan_update")
    assert [u["entries"] for u in updates] == [
        [{"content": "find the bug", "status": "completed"}, {"content": "fix it", "status": "pending"}],
        STEPS,
    ]
    assert updates[1]["explanation"] == "found it" and "source" not in updates[1]
    results = {r["toolCallId"]: r["result"] for r in events(ran.stdout, "tool_end")}
    assert results["p2"]["output"] == "Plan updated: 1 of 2 steps completed. In progress: fix it"
    assert results["bad"]["isError"] and "at most one step may be in_progress" in results["bad"]["output"]


def test_the_plan_is_kept_in_the_session_and_given_back_on_resume(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    env = ink_env(tmp_path)
    fake_server.script(call("plan", {"entries": STEPS}, id="p1"), say("working"), say("again"))
    args = provider_args(fake_server, "openai")
    with RpcClient.start(args, env, project) as ink:
        assert ink.ok("get_state")["plan"] is None
        ink.ok("prompt", text="go")
        update = ink.wait_event("plan_update")
        assert update["entries"] == STEPS
        ink.wait_event("run_end", stopReason="completed")
        assert ink.ok("get_state")["plan"] == {"entries": STEPS}
    [session_file] = (tmp_path / "inkhome" / "sessions").rglob("*.jsonl")
    recorded = [json.loads(line) for line in session_file.read_text().splitlines() if '"plan"' in line]
    assert [entry["entries"] for entry in recorded if entry["type"] == "plan"] == [STEPS]
    with RpcClient.start([*args, "--continue"], env, project) as again:
        assert again.ok("get_state")["plan"] == {"entries": STEPS}
        again.ok("new_session")
        assert again.ok("get_state")["plan"] is None  # a new session has no plan


def test_a_sub_agents_plan_carries_its_source_and_is_not_the_sessions(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(
        call("task", {"description": "look", "prompt": "look around", "agent": "explore"}, id="t1"),
        call("plan", {"entries": STEPS}, id="sub-plan"),
        say("found it"),
        say("done"),
    )
    with RpcClient.start(provider_args(fake_server, "openai"), ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="go")
        update = ink.wait_event("plan_update")
        assert update["source"] == {"id": "t1", "agent": "explore"}
        ink.wait_event("run_end", stopReason="completed")
        assert ink.ok("get_state")["plan"] is None
