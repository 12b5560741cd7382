"""R43 in the terminal UI (the real ``ink`` in a pseudo-terminal): a dev server job shown when it starts,
counted in the status line, reached by a later call, kept by Esc, listed and read by /jobs, killed by
/jobs kill with its end shown at once, gone after /quit; a resumed session names what its last process
ended."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeModelServer, call, say
from tests.jobs.helpers import SANDBOX_WITH_NETWORK, dev_server, fetch, free_port, reach_command
from tests.processes import gone, kill_tree
from tests.tui.conftest import StartInk
from tests.waiting import poll_until

ESC = "\x1b"


def test_a_dev_server_job_in_the_tui(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    port = free_port()
    fake_server.script(
        call("bash", {"command": f"echo $$ > server.pid; {dev_server(port)}", "background": True}, id="c1"),
        call("bash", {"command": reach_command(port)}, id="c2"),
        say("The server answers."),
    )
    ink = start_ink(config=SANDBOX_WITH_NETWORK)
    ink.type_line("start the dev server")
    ink.wait_text("job-1 started in the background")
    ink.wait_text("The server answers.")
    ink.wait_text("○ idle · 1 job")  # the count in the status line
    assert "the secret is 42" in fake_server.requests[2].tool_results()[-1][1]

    fake_server.script(call("bash", {"command": "sleep 600"}, id="c3"), say("not reached"))
    ink.type_line("wait")
    ink.wait_text("bash sleep 600")
    ink.send(ESC)  # an interrupt: the foreground call stops, the job does not
    ink.wait_text("still running in the background: job-1")  # the receipt names it (R34, R43)
    ink.wait_text("○ idle · 1 job")
    assert fetch(port) == "the secret is 42\n"
    ink.type_line("/jobs")
    ink.wait_for(lambda: any("job-1" in line and "running" in line for line in ink.scrollback()), what="list")
    ink.type_line("/jobs job-1")
    ink.wait_text("GET /notes.txt")  # its output: the server's log of the later call
    pid = int((project / "server.pid").read_text())
    ink.type_line("/quit")
    assert ink.wait_exit() == 0
    assert gone(pid)
    poll_until(lambda: fetch(port, timeout=0.5) is None, what="the dev server is gone")


def test_jobs_kill_shows_the_end_at_once_and_a_resumed_session_names_what_ended(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(
        call("bash", {"command": "exec sleep 1000", "background": True}, id="c1"),
        call("bash", {"command": "exec sleep 1001", "background": True}, id="c2"),
        say("Two running."),
    )
    ink = start_ink()
    ink.type_line("start two")
    ink.wait_text("○ idle · 2 jobs")
    ink.type_line("/jobs kill job-1")
    ink.wait_text("job-1 ended: killed (ended by SIGTERM)")
    ink.wait_text("○ idle · 1 job")
    ink.child.kill(9)  # job-2 ends with the process, no end written
    ink.wait_exit()

    again = start_ink("--continue")
    again.wait_text("ended with its last ink process: job-2 (exec sleep 1001)")
    again.type_line("/jobs")
    again.wait_for(lambda: any("job-2" in x and "earlier ink process" in x for x in again.scrollback()))
    again.wait_for(lambda: "○ idle  " in again.text(), what="a status line counting no job")


CTRL_B = "\x02"
FOREGROUND = (
    "echo $$ > shell.pid; sleep 1000 & echo $! > child.pid; "
    "(setsid sleep 1000 & echo $! > escapee.pid); echo first-line; wait"
)


def test_ctrl_b_sends_the_running_bash_call_to_the_background(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(call("bash", {"command": FOREGROUND}, id="c1"), say("It runs in the background."))
    ink = start_ink()
    ink.type_line("run it")
    ink.wait_text("first-line")  # the call's live output: it runs in the foreground
    ink.send(CTRL_B)
    ink.wait_text("job-1 started in the background")
    ink.wait_text("It runs in the background.")
    ink.wait_text("○ idle · 1 job")
    result = fake_server.requests[1].tool_results()[-1][1]
    assert result.startswith("The user sent this command to the background after") and "job-1" in result
    assert "first-line" in result  # the output so far
    pids = [int((project / f"{name}.pid").read_text()) for name in ("shell", "child", "escapee")]
    assert not any(gone(pid) for pid in pids)  # nothing was ended: it runs on as a job
    ink.type_line("/jobs kill job-1")
    ink.wait_text("job-1 ended: killed")
    poll_until(lambda: all(gone(pid) for pid in pids), what="the whole tree ended")


def test_a_call_sent_to_the_background_ends_with_a_kill_9_of_ink(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(call("bash", {"command": FOREGROUND}, id="c1"), say("It runs in the background."))
    ink = start_ink()
    ink.type_line("run it")
    ink.wait_text("first-line")
    ink.send(CTRL_B)
    ink.wait_text("○ idle · 1 job")
    pids = [int((project / f"{name}.pid").read_text()) for name in ("shell", "child", "escapee")]
    ink.child.kill(9)
    ink.wait_exit()
    try:
        poll_until(lambda: all(gone(pid) for pid in pids), timeout=20, what="its guard ended the tree")
    finally:
        for pid in pids:
            kill_tree(pid)
