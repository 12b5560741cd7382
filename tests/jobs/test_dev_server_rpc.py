"""R43 through the real CLI (``ink --mode rpc``): a real dev server started as a background job, reached by
a later call, still running after an interrupt (named in the receipt), listed, and gone after exit."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeModelServer, call, say
from tests.jobs.helpers import dev_server, fetch, free_port, jobs_env, reach_command
from tests.processes import gone
from tests.rpc.conftest import StartRpc
from tests.waiting import poll_until

YOLO = ("--permission-mode", "yolo")


def test_a_dev_server_job_is_reached_later_survives_an_interrupt_and_ends_with_ink(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path, tmp_path: Path
) -> None:
    port = free_port()
    fake_server.script(
        call("bash", {"command": dev_server(port), "background": True}, id="c1"),
        call("bash", {"command": reach_command(port)}, id="c2"),
        say("the server answers"),
    )
    ink = start_rpc(*YOLO, env=jobs_env(tmp_path))
    ink.ok("prompt", text="start the dev server and check it")
    start = ink.wait_event("job_start")
    started = ink.wait_event("tool_end", toolCallId="c1")["result"]
    assert start["jobId"] == "job-1" and start["toolCallId"] == "c1" and start["pid"] > 0
    assert "Started background job job-1" in started["output"], started
    assert {"type": "job", "jobId": "job-1", "pid": start["pid"]} in started["details"]
    reached = ink.wait_event("tool_end", toolCallId="c2")["result"]
    assert "the secret is 42" in reached["output"], reached  # a later call reaches the job's server
    assert ink.wait_event("run_end")["stopReason"] == "completed"

    # R43: an interrupt ends the run's foreground calls, not its jobs; the receipt names them
    fake_server.script(call("bash", {"command": "sleep 600"}, id="c3"), say("not reached"))
    mark = ink.mark()
    ink.ok("prompt", text="wait a long time")
    ink.wait_event("tool_start", toolCallId="c3", after=mark)
    ink.ok("abort")
    end = ink.wait_event("run_end", after=mark)
    assert end["stopReason"] == "aborted"
    running = end["receipt"]["jobsRunning"]
    assert [(j["jobId"], j["state"], j["pid"]) for j in running] == [("job-1", "running", start["pid"])]
    assert fetch(port) == "the secret is 42\n"  # the dev server the user wanted kept is still there
    assert not ink.events("job_end")
    listed = ink.ok("list_jobs")["jobs"]
    expected = [("job-1", dev_server(port), "running")]
    assert [(j["jobId"], j["command"], j["state"]) for j in listed] == expected
    assert listed[0]["startedAt"] > 0 and listed[0]["pid"] == start["pid"]

    # the end of the session ends it, with its tree
    ink.close_stdin()
    assert ink.wait_exit() == 0
    ended = ink.events("job_end")
    assert [(e["jobId"], e["state"]) for e in ended] == [("job-1", "ended")], ended
    assert gone(start["pid"])
    poll_until(lambda: fetch(port, timeout=0.5) is None, what="the dev server is gone")
