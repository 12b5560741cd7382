"""Processes that outlive ink (issue 29; R35): ink is the subreaper from its first moment, and every
session leader it starts dies with it, even when ink is killed with SIGKILL.

- an MCP server's ``setsid env -i`` child left before ink ran any command is ended when ink exits;
- ``ink batch``'s set-up and check commands' escaped children are ended with their task;
- kill -9 of ``ink batch`` ends its ``ink -p`` runs (SIGTERM, their interrupt: they end their own tools);
- kill -9 of ink ends the tool processes of its sub-agents.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.batch.conftest import batch_argv, batch_env, make_repo, results, write_tasks
from tests.cli.inkproc import INK, ink_env
from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.processes import gone, kill_tree
from tests.waiting import poll_until, wait_for_file

SERVER = str(Path(__file__).with_name("escaping_mcp_server.py"))
ESCAPE = "(setsid env -i sh -c 'echo $$ > {pid}; exec sleep 1000' >/dev/null 2>&1 </dev/null &)"
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreaper and pdeathsig are Linux's")
pytestmark = LINUX


def print_argv(server: FakeModelServer, *more: str) -> list[str]:
    base = server.openai_base_url
    return [
        *INK,
        "-p",
        "--no-session",
        "--base-url",
        base,
        "--api-key",
        "k",
        "--permission-mode",
        "yolo",
        *more,
    ]


def test_an_mcp_servers_escaped_child_ends_when_ink_exits(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # ink used to become the subreaper only at its first shell command: this child, left by the server
    # before any command ran, went to init and outlived ink
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True)
    pid_file = tmp_path / "escaped.pid"
    args = json.dumps([SERVER, str(pid_file)])
    (home / "config.toml").write_text(
        f"[mcp.servers.esc]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\nstartup_timeout = 90\n"
    )
    fake_server.script(Reply([tool_call("mcp__esc__echo", {"text": "hi"}, id="e1")]), say("done"))
    done = subprocess.run(
        print_argv(fake_server, "hi"), env=env, cwd=project, capture_output=True, text=True, timeout=180
    )
    pid = int(wait_for_file(pid_file))
    try:
        assert done.returncode == 0, done.stderr
        assert fake_server.requests[-1].tool_results() == [("e1", "echo: hi")]
        assert gone(pid), f"the MCP server's escaped child {pid} outlived ink"
    finally:
        kill_tree(pid)


def test_batch_setup_and_check_children_that_escape_end_with_their_task(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.responder = lambda _request: say("nothing to do")
    make_repo(tmp_path / "repo", git=False)
    setup, check = tmp_path / "setup.pid", tmp_path / "check.pid"
    tasks = [
        {
            "id": "t",
            "prompt": "p",
            "repo": "repo",
            "setup": ESCAPE.format(pid=setup) + f"; until [ -s {setup} ]; do sleep 0.01; done",
            "check": ESCAPE.format(pid=check) + f"; until [ -s {check} ]; do sleep 0.01; done",
        }
    ]
    out = tmp_path / "out"
    done = subprocess.run(
        batch_argv(write_tasks(tmp_path / "tasks.jsonl", tasks), out),
        env=batch_env(tmp_path, fake_server),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    pids = [int(wait_for_file(path)) for path in (setup, check)]
    try:
        assert done.returncode == 0, done.stderr
        assert results(out)["t"]["verdict"] == "pass"
        assert [pid for pid in pids if not gone(pid)] == [], (
            "escaped set-up/check children outlived the batch"
        )
    finally:
        for pid in pids:
            kill_tree(pid)


def bash_then_sleep(marker: Path) -> Reply:
    return Reply([tool_call("bash", {"command": f"echo $$ > {marker}; sleep 1000"}, id="b1")])


def test_kill_9_of_ink_batch_ends_its_runs_and_their_tools(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", git=False)
    marker = tmp_path / "tool.pid"
    fake_server.responder = lambda request: (
        say("stopped") if request.tool_results() else bash_then_sleep(marker)
    )
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo"}])
    batch = subprocess.Popen(
        batch_argv(tasks, tmp_path / "out"),
        env=batch_env(tmp_path, fake_server),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tool = int(wait_for_file(marker, timeout=120))
    run = psutil.Process(tool).ppid()  # the ink -p run whose bash call it is
    assert "-p" in psutil.Process(run).cmdline()
    try:
        batch.kill()
        batch.wait(timeout=30)
        poll_until(lambda: gone(run) and gone(tool), timeout=60, what="the run and its tool to end")
    finally:
        kill_tree(run)
        kill_tree(tool)


def test_kill_9_of_ink_ends_its_sub_agents_tool_processes(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    markers = {name: tmp_path / f"{name}.pid" for name in ("a", "b")}

    def answer(request: Any) -> Reply:
        if request.system.startswith("You are ink"):
            calls = [
                tool_call("task", {"description": f"job {n}", "prompt": f"job {n}", "agent": "general"}, id=n)
                for n in markers
            ]
            return Reply(calls)
        name = request.user_texts()[0].removeprefix("job ")
        return bash_then_sleep(markers[name])

    fake_server.responder = answer
    ink = subprocess.Popen(
        print_argv(fake_server, "do both"),
        env=ink_env(tmp_path),
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tools = [int(wait_for_file(marker, timeout=120)) for marker in markers.values()]
    try:
        ink.send_signal(signal.SIGKILL)
        ink.wait(timeout=30)
        poll_until(lambda: all(gone(pid) for pid in tools), timeout=30, what="the sub-agents' tools to end")
    finally:
        for pid in tools:
            kill_tree(pid)
