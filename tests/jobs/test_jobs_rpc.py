"""R43 through ``ink --mode rpc``: nothing outlives a kill -9 of ink, 20 jobs at once, job_output's bounds,
job_kill of a tree with a setsid escapee, RPC kill_job, and a resumed session naming the jobs that ended
with its last process (to the user and to the model, once)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Reply, ToolCallStep, call, say
from tests.jobs.helpers import all_gone, jobs_env, pids_in
from tests.jsonl_client import provider_args
from tests.processes import gone, kill_tree
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc
from tests.waiting import poll_until, wait_for_file

YOLO = ("--permission-mode", "yolo")
STAY = "exec sleep 1000"
# a tree: the job's shell, a plain child, and a setsid env -i escapee (no group, no token, no parent)
TREE = (
    "echo $$ > shell.pid; sleep 1000 & echo $! > child.pid; "
    "(setsid env -i sh -c 'echo $$ > escapee.pid; exec sleep 1000' >/dev/null 2>&1 &); "
    "until [ -s escapee.pid ]; do sleep 0.01; done; echo tree-ready; wait"
)
TREE_PIDS = ["shell", "child", "escapee"]


def test_a_kill_9_of_ink_leaves_no_process_of_its_jobs(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(call("bash", {"command": TREE, "background": True}, id="c1"), say("started"))
    args = provider_args(fake_server, "openai", *YOLO)
    with RpcClient.start(args, jobs_env(tmp_path), project) as ink:
        ink.ok("prompt", text="start it")
        keeper = ink.wait_event("job_start")["pid"]
        ink.wait_event("run_end")
        wait_for_file(project / "escapee.pid")
        pids = [keeper, *pids_in(project, TREE_PIDS)]
        try:
            ink.proc.kill()
            assert ink.wait_exit() == -9
            # the keeper hears ink's death (its parent-death signal) and ends the whole tree
            poll_until(lambda: all_gone(pids), timeout=20, what="every process of the job ended")
        finally:
            for pid in pids:
                kill_tree(pid)


def test_twenty_jobs_at_once_are_listed_and_all_end_with_ink(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    calls = [ToolCallStep("bash", {"command": STAY, "background": True}, f"j{i}") for i in range(20)]
    fake_server.script(Reply(calls), say("twenty running"))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="start twenty")
    ink.wait_event("run_end")
    listed = ink.ok("list_jobs")["jobs"]
    assert [job["jobId"] for job in listed] == [f"job-{i}" for i in range(1, 21)]
    assert {job["state"] for job in listed} == {"running"}
    request = fake_server.requests[1]
    assert len(request.tool_results()) == 20  # each call answered with its job at once
    ink.close_stdin()
    assert ink.wait_exit() == 0
    assert sorted(e["jobId"] for e in ink.events("job_end")) == sorted(j["jobId"] for j in listed)
    assert all_gone([job["pid"] for job in listed])


def test_job_output_is_bounded_and_reads_new_output_then_a_tail(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    big = "seq 1 400000; echo END; exec sleep 1000"  # 2.7 MB: past the file's and a result's caps
    fake_server.script(call("bash", {"command": big, "background": True}, id="c1"), say("started"))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="print a lot")
    output = Path(ink.wait_event("job_start")["output"])
    ink.wait_event("run_end")
    poll_until(lambda: output.read_bytes().rstrip().endswith(b"END"), timeout=20, what="all of it kept")
    assert output.stat().st_mode & 0o777 == 0o600 and output.parent.stat().st_mode & 0o777 == 0o700
    data = output.read_bytes()
    assert len(data) <= 1024 * 1024 + 200 and data.startswith(b"1\n2\n3\n")
    assert b"ink cut" in data and b"from the middle of this output" in data

    mark = ink.mark()
    fake_server.script(
        call("job_output", {"jobId": "job-1"}, id="o1"),
        call("job_output", {"jobId": "job-1"}, id="o2"),
        call("job_output", {"jobId": "job-1", "tail": 3}, id="o3"),
        say("read"),
    )
    ink.ok("prompt", text="read it")
    first = ink.wait_event("tool_end", toolCallId="o1", after=mark)["result"]["output"]
    again = ink.wait_event("tool_end", toolCallId="o2", after=mark)["result"]["output"]
    tail = ink.wait_event("tool_end", toolCallId="o3", after=mark)["result"]["output"]
    assert "running for" in first and "\n1\n2\n" in first and "END" in first
    assert len(first.encode()) < 60_000 and "cut" in first  # a result's cap, with what was cut said
    assert "No new output since the last job_output." in again
    assert tail.endswith("399999\n400000\nEND\n"), tail[-200:]


def test_job_kill_ends_a_tree_with_a_setsid_escapee(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": TREE, "background": True}, id="c1"), say("started"))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="start it")
    keeper = ink.wait_event("job_start")["pid"]
    ink.wait_event("run_end")
    wait_for_file(project / "escapee.pid")
    pids = [keeper, *pids_in(project, TREE_PIDS)]
    mark = ink.mark()
    fake_server.script(call("job_kill", {"jobId": "job-1"}, id="k1"), say("stopped"))
    ink.ok("prompt", text="stop it")
    result = ink.wait_event("tool_end", toolCallId="k1", after=mark)["result"]
    assert "killed" in result["output"] and "tree-ready" in result["output"], result
    end = ink.wait_event("job_end")
    ended = (end["jobId"], end["state"], end["exitCode"], end["signal"])
    assert ended == ("job-1", "killed", None, "SIGTERM")
    assert all_gone(pids)
    ink.wait_event("run_end", after=mark)
    # the model's own kill is not told to it again at its next request
    assert not any(text.startswith("[Background job") for text in fake_server.last.user_texts())


def test_kill_job_by_the_user_is_told_to_the_model_at_its_next_request(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    fake_server.script(call("bash", {"command": STAY, "background": True}, id="c1"), say("started"))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="start it")
    ink.wait_event("run_end")
    assert ink.ok("kill_job", jobId="job-1")["state"] == "ending"
    end = ink.wait_event("job_end")
    assert (end["state"], end["signal"]) == ("killed", "SIGTERM")
    assert ink.fail("kill_job", jobId="job-9").startswith("no job 'job-9' in this session")
    fake_server.script(say("noted"))
    mark = ink.mark()
    ink.ok("prompt", text="anything new?")
    ink.wait_event("run_end", after=mark)
    texts = fake_server.last.user_texts()
    assert texts[-2] == "anything new?"
    assert texts[-1].startswith("[Background job job-1 (exec sleep 1000) was stopped by the user after")


def test_a_resumed_session_names_the_jobs_that_ended_with_its_last_process(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    env = ink_env(tmp_path)
    args = provider_args(fake_server, "openai", *YOLO)
    fake_server.script(
        Reply([ToolCallStep("bash", {"command": STAY, "background": True}, "c1")]),
        Reply([ToolCallStep("bash", {"command": "exit 3", "background": True}, "c2")]),
        say("started"),
    )
    with RpcClient.start(args, env, project) as first:
        first.ok("prompt", text="start them")
        first.wait_event("job_end", jobId="job-2")  # ended by itself: not one that ended with ink
        first.wait_event("run_end")
        keeper = first.events("job_start")[0]["pid"]
        first.proc.kill()  # no job_end is written for job-1: its end is the process's
        assert first.wait_exit() == -9
    poll_until(lambda: gone(keeper), timeout=20, what="the job ended with ink")

    fake_server.script(say("I see"))
    with RpcClient.start([*args, "--continue"], env, project) as again:
        notice = again.wait_event("notice")
        assert "job-1 (exec sleep 1000)" in notice["text"] and "job-2" not in notice["text"]
        assert "(list_jobs)" in notice["text"]  # how an RPC client reads it, not the TUI's /jobs
        jobs = {job["jobId"]: job for job in again.ok("list_jobs")["jobs"]}
        assert (jobs["job-1"]["state"], jobs["job-1"]["earlier"]) == ("ended", True)
        assert (jobs["job-2"]["state"], jobs["job-2"]["exitCode"]) == ("exited", 3)
        again.ok("prompt", text="what is running?")
        again.wait_event("run_end")
        note = fake_server.last.user_texts()[-1]
        assert "were running when the previous ink process ended" in note and "job-1" in note
        assert "job-2" not in note
        output = again.ok("get_messages")["messages"][-2]
        assert (output["role"], output["kind"]) == ("user", "context")  # in the session file too
        again.close_stdin()
        assert again.wait_exit() == 0

    session = next((tmp_path / "inkhome" / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    ends = [(e["jobId"], e["state"], e.get("reported")) for e in entries if e["type"] == "job_end"]
    assert ends == [("job-2", "exited", None), ("job-1", "ended", True)]
    fake_server.script(say("again"))
    with RpcClient.start([*args, "--continue"], env, project) as third:
        third.ok("prompt", text="and now?")
        third.wait_event("run_end")
        assert not third.events("notice")  # told once
        assert not any("previous ink process" in t for t in fake_server.last.user_texts()[-1:])


def test_a_background_call_is_asked_like_a_foreground_one_and_a_no_starts_nothing(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    command = "touch started; exec sleep 1000"
    fake_server.script(call("bash", {"command": command, "background": True}, id="c1"), say("refused"))
    ink = start_rpc("--permission-mode", "ask")
    ink.ok("prompt", text="start it")
    asked = ink.wait_event("permission_request")
    assert asked["name"] == "bash" and asked["args"]["background"] is True
    ink.ok("permission", requestId=asked["requestId"], decision="deny")
    result = ink.wait_event("tool_end", toolCallId="c1")["result"]
    assert result["isError"] and not (project / "started").exists()
    ink.wait_event("run_end")
    assert not ink.events("job_start") and ink.ok("list_jobs")["jobs"] == []
