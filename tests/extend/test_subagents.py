"""Sub-agents through the ``task`` tool (docs/subagents.md), in a real ``ink --mode rpc`` against the fake
model server. The server answers by who asks (the main agent or a sub-agent, told apart by the system
prompt and the first user text), so concurrent sub-agents get their own replies whatever the order."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient
from tests.waiting import wait_for_file

Line = dict[str, Any]


def task(call_id: str, prompt: str, agent: str) -> Any:
    return tool_call("task", {"description": prompt, "prompt": prompt, "agent": agent}, id=call_id)


def route(main: Callable[[Any], Reply], subs: dict[str, Callable[[Any], Reply]]) -> Callable[[Any], Reply]:
    def answer(request: Any) -> Reply:
        if request.system.startswith("You are ink"):
            return main(request)
        return subs[request.user_texts()[0]](request)

    return answer


def start(server: FakeModelServer, tmp_path: Path, project: Path) -> RpcClient:
    flags = provider_args(server, "openai", "--permission-mode", "yolo")
    return RpcClient.start(flags, ink_env(tmp_path), project)


def sleeper(name: str, seconds: str) -> Reply:
    return Reply([tool_call("bash", {"command": f"echo {name} > {name}-up; sleep {seconds}"}, id=f"{name}1")])


def sourced(ink: RpcClient, agent_id: str) -> list[str]:
    return [e["type"] for e in ink.lines if (e.get("source") or {}).get("id") == agent_id]


def alive(marker: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]


def test_two_sub_agents_run_at_once_with_tagged_events(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    hold_a = Gate()
    first = Reply([task("t1", "find A", "explore"), task("t2", "find B", "explore")])

    def main(request: Any) -> Reply:
        return first if not request.tool_results() else say("both found")

    fake_server.responder = route(
        main,
        {
            "find A": lambda _r: Reply([text("A is "), hold_a, text("in a.py")]),
            "find B": lambda _r: say("B is in b.py"),
        },
    )
    with start(fake_server, tmp_path, project) as ink:
        ink.ok("prompt", text="find both")
        fake_server.wait_for_requests(3)  # B asked while A's reply is still held: they run at once
        ink.wait_event("message_end", source={"id": "t2", "agent": "explore"})
        hold_a.open()
        ink.wait_event("run_end", stopReason="completed")
        for agent_id in ("t1", "t2"):
            kinds = sourced(ink, agent_id)
            assert kinds[0] == "input_taken" and kinds[1] == "message_start" and kinds[-1] == "message_end"
            assert "text_delta" in kinds and "run_start" not in kinds
        ends = {e["toolCallId"]: e for e in ink.events("tool_end") if "source" not in e}
        assert ends["t1"]["result"]["output"] == "A is in a.py"
        assert ends["t2"]["result"]["output"] == "B is in b.py"
        explore = fake_server.requests[1].body["tools"]
        read_only = ["glob", "grep", "job_output", "ls", "plan", "read"]  # a job's output, a plan: reads too
        assert sorted(t["function"]["name"] for t in explore) == read_only
    last = fake_server.requests[-1]
    assert last.system.startswith("You are ink")
    assert last.tool_results() == [("t1", "A is in a.py"), ("t2", "B is in b.py")]


def test_an_abort_stops_both_sub_agents_and_their_processes(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    first = Reply([task("t1", "job A", "general"), task("t2", "job B", "general")])
    fake_server.responder = route(
        lambda r: first if not r.tool_results() and len(r.user_texts()) == 1 else say("ok"),
        {
            "job A": lambda _r: Reply(
                [tool_call("bash", {"command": "echo a > a-up; sleep 61.37"}, id="a1")]
            ),
            "job B": lambda _r: Reply(
                [tool_call("bash", {"command": "echo b > b-up; sleep 61.38"}, id="b1")]
            ),
        },
    )
    with start(fake_server, tmp_path, project) as ink:
        ink.ok("prompt", text="do both")
        wait_for_file(project / "a-up")
        wait_for_file(project / "b-up")
        ink.ok("abort")
        end = ink.wait_event("run_end")
        assert end["stopReason"] == "aborted"
        assert sorted(end["receipt"]["interrupted"]) == ["t1", "t2"]  # R34: the receipt names them
        assert alive("sleep 61.37") == [] and alive("sleep 61.38") == []  # R35
        inner = [e for e in ink.events("tool_end") if "source" in e]
        assert {e["toolCallId"] for e in inner} == {"a1", "b1"}
        assert all(e["result"]["interrupted"] for e in inner)
        outer = {e["toolCallId"]: e["result"] for e in ink.events("tool_end") if "source" not in e}
        assert outer["t1"]["interrupted"] and "Interrupted by the user" in outer["t1"]["output"]
        mark = ink.mark()
        ink.ok("prompt", text="what happened?")  # the strict server checks the parent's history
        ink.wait_event("run_end", stopReason="completed", after=mark)
        session_id = ink.ok("get_state")["sessionId"]
    [folder] = [p for p in (tmp_path / "inkhome" / "sessions").rglob("*.subagents") if session_id in p.name]
    transcripts = list(folder.glob("*.jsonl"))
    assert len(transcripts) == 2  # kept with the session
    for path in transcripts:
        messages = [json.loads(line) for line in path.read_text().splitlines()]
        blocks = [b for m in messages if m["role"] == "assistant" for b in m["content"]]
        calls = [b["id"] for b in blocks if b["type"] == "tool_call"]
        results = [m["toolCallId"] for m in messages if m["role"] == "tool_result"]
        assert calls and calls == results  # R19: every call of the child's history has its result


def test_one_sub_agent_is_stopped_alone_and_the_parent_goes_on(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    hold_a, hold_b = Gate(), Gate()
    first = Reply([task("t1", "find A", "explore"), task("t2", "find B", "explore")])
    fake_server.responder = route(
        lambda r: first if not r.tool_results() else say("carried on"),
        {
            "find A": lambda _r: Reply([text("A so far"), hold_a, text(" never")]),
            "find B": lambda _r: Reply([hold_b, text("B is in b.py")]),
        },
    )
    with start(fake_server, tmp_path, project) as ink:
        ink.ok("prompt", text="find both")
        ink.wait_event("text_delta", source={"id": "t1", "agent": "explore"})
        assert ink.ok("abort", source="t1") == {"wasRunning": True}
        ended = ink.wait_event("tool_end", toolCallId="t1")
        assert ended["result"]["interrupted"] is True and "A so far" in ended["result"]["output"]
        assert "no running sub-agent" in ink.fail("abort", source="t1")
        hold_b.open()
        ink.wait_event("run_end", stopReason="completed")
    assert fake_server.requests[-1].tool_results()[1] == ("t2", "B is in b.py")


READ_A = {"path": "a.txt"}


def test_a_stopped_sub_agent_that_wrote_no_text_names_the_calls_it_made(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # Its result said "Its work so far: (nothing yet)" after it had read files: the parent model was told
    # the sub-agent did nothing.
    (project / "a.txt").write_text("alpha\n")
    hold = Gate()
    fake_server.responder = route(
        lambda r: Reply([task("t1", "find A", "explore")]) if not r.tool_results() else say("carried on"),
        {
            "find A": lambda r: (
                Reply([tool_call("read", READ_A, id="r1"), tool_call("read", READ_A, id="r2")])
                if not r.tool_results()
                else Reply([hold, text("never")])
            )
        },
    )
    with start(fake_server, tmp_path, project) as ink:
        ink.ok("prompt", text="find it")
        hold.wait_reached()
        assert ink.ok("abort", source="t1") == {"wasRunning": True}
        ended = ink.wait_event("tool_end", toolCallId="t1")
        ink.wait_event("run_end", stopReason="completed")
    output = ended["result"]["output"]
    assert "(no text written yet; 2 tool calls: read x2)" in output and "nothing yet" not in output, output


def test_a_sub_agents_permission_question_is_tagged_and_answered_through_rpc(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    first = Reply([task("t1", "make the file", "general")])
    fake_server.responder = route(
        lambda r: first if not r.tool_results() else say("made"),
        {
            "make the file": lambda r: (
                Reply([tool_call("bash", {"command": "echo made > out.txt"}, id="s1")])
                if not r.tool_results()
                else say("done")
            )
        },
    )
    flags = provider_args(fake_server, "openai", "--permission-mode", "ask")
    with RpcClient.start(flags, ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="go")
        question = ink.wait_event("permission_request", toolCallId="s1")
        assert question["source"] == {"id": "t1", "agent": "general"}
        ink.ok("permission", requestId=question["requestId"], decision="allow")
        resolved = ink.wait_event("permission_resolved", requestId=question["requestId"])
        assert resolved["source"] == {"id": "t1", "agent": "general"}
        ink.wait_event("run_end", stopReason="completed")
    assert (project / "out.txt").read_text() == "made\n"


def test_resume_after_kill_9_during_a_sub_agent(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    hold = Gate()
    first = Reply([task("t1", "find A", "explore")])
    fake_server.responder = route(
        lambda r: first if len(r.user_texts()) == 1 and not r.tool_results() else say("resumed fine"),
        {"find A": lambda _r: Reply([text("looking"), hold, text(" never")])},
    )
    env = ink_env(tmp_path)
    with start(fake_server, tmp_path, project) as ink:
        ink.ok("prompt", text="find it")
        ink.wait_event("text_delta", source={"id": "t1", "agent": "explore"})
        ink.proc.kill()
        assert ink.wait_exit() == -9
    hold.open()
    flags = provider_args(fake_server, "openai", "--permission-mode", "yolo")
    with RpcClient.start([*flags, "--continue"], env, project) as ink:
        ink.ok("prompt", text="go on")
        ink.wait_event("run_end", stopReason="completed")  # the strict server accepted the history
    [(call_id, output)] = fake_server.requests[-1].tool_results()
    assert call_id == "t1" and output  # the dangling task call got its one result (R19)


def test_sub_agent_usage_rolls_up_into_the_run_and_the_saved_session(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    first = Reply([task("t1", "find A", "explore"), task("t2", "find B", "explore")])
    fake_server.responder = route(
        lambda r: first if not r.tool_results() else say("both found"),
        {"find A": lambda _r: say("A is in a.py"), "find B": lambda _r: say("B is in b.py")},
    )
    with start(fake_server, tmp_path, project) as ink:
        ink.ok("prompt", text="find both")
        end = ink.wait_event("run_end", stopReason="completed")
        replies = ink.events("message_end")
    inner = [e["usage"] for e in replies if "source" in e]
    assert len(inner) == 2 and all(u["outputTokens"] > 0 for u in inner)
    for field in ("inputTokens", "outputTokens"):  # the run's usage is its own and its sub-agents'
        assert end["usage"][field] == sum(e["usage"][field] for e in replies)
    [session] = [f for f in (tmp_path / "inkhome").rglob("*.jsonl") if f.with_suffix(".subagents").is_dir()]
    from ink.store import load_session

    saved = load_session(session).usage  # the session's totals count the sub-agents' calls too
    assert (saved.input_tokens, saved.output_tokens) == (
        end["usage"]["inputTokens"],
        end["usage"]["outputTokens"],
    )


def test_agent_types_come_from_markdown_files(tmp_path: Path) -> None:
    from ink.config.agents import load_agent_types

    home, work = tmp_path / "inkhome", tmp_path / "proj"
    (work / ".ink" / "agents").mkdir(parents=True)
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "reviewer.md").write_text("---\ndescription: mine\n---\nuser prompt")
    (work / ".ink" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews\ntools: [read, Grep]\nmodel: small\n---\nReview it."
    )
    (work / ".ink" / "agents" / "bad.md").write_text("---\nno colon here\n---\n")
    types, warnings = load_agent_types(work, home)
    assert sorted(types) == ["explore", "general", "reviewer"]
    reviewer = types["reviewer"]
    assert (reviewer.description, reviewer.prompt, reviewer.model) == ("Reviews", "Review it.", "small")
    assert reviewer.tools == frozenset({"read", "grep"}) and reviewer.scope == "project"
    assert types["explore"].kinds == frozenset({"read", "search"})  # every tool that changes nothing
    assert [w for w in warnings if "bad.md" in w]
