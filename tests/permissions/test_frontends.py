"""The question in the real frontends, as subprocesses: the TUI's inline prompt in a pseudo-terminal, and
the RPC round trip whose "always" a later ink process honours without asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink.permissions import PermissionMemory
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.rpc.client import RpcClient
from tests.tui.terminal import InkTerminal

TOUCH = "echo ran >> ran.txt"
OTHER = "echo other > other.txt"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "p"  # short: the TUI's header line must not wrap
    work.mkdir()
    return work


def test_rpc_always_is_remembered_for_the_next_process(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("done"))
    base = ["--base-url", fake_server.openai_base_url, "--api-key", "k", "--permission-mode", "ask"]
    with RpcClient.start(base, ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="touch it")
        request = ink.wait_event("permission_request", toolCallId="c1")
        assert (request["name"], request["args"]) == ("bash", {"command": TOUCH})
        ink.ok("permission", requestId=request["requestId"], decision="always")
        assert ink.wait_event("tool_end", toolCallId="c1")["result"]["isError"] is False
        ink.wait_event("run_end", stopReason="completed")
        ink.close_stdin()
        assert ink.wait_exit() == 0
    saved = PermissionMemory(project, tmp_path / "inkhome").path.read_text()
    assert '"bash(echo ran >> ran.txt)"' in saved
    assert not (project / ".ink").exists()  # no untracked file of ink's in the user's repository
    # A new process, in print mode where nobody could answer: the remembered rule lets it run.
    fake_server.script(
        call("bash", {"command": TOUCH}, id="c2"), call("bash", {"command": OTHER}, id="c3"), say("ok")
    )
    done = run_ink(["-p", *base, "touch it again"], ink_env(tmp_path), project)
    assert done.returncode == 0
    assert (project / "ran.txt").read_text() == "ran\n" * 2
    assert not (project / "other.txt").exists()  # only the remembered command, nothing else
    assert "refused the bash command `echo other > other.txt`" in done.stderr


def test_tui_prompt_allow_always_and_deny(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(
        call("bash", {"command": TOUCH}, id="c1"),
        say("first done"),
        call("bash", {"command": TOUCH}, id="c2"),
        call("bash", {"command": OTHER}, id="c3"),
        say("second done"),
    )
    env = ink_env(tmp_path, TERM="xterm-256color")
    args = ["--base-url", fake_server.openai_base_url, "--api-key", "k", "--permission-mode", "ask"]
    ink = InkTerminal(args, env, project)
    try:
        ink.wait_text("○ idle")
        ink.type_line("touch it")
        ink.wait_text("allow bash?")
        assert TOUCH in ink.text()  # the command is shown with the question
        assert "always allow" in ink.text() and "deny" in ink.text()
        assert not (project / "ran.txt").exists()
        ink.answer("a")  # the deliberate way (R38): a hand-over after a pause, then the key
        ink.wait_text("first done")
        assert "allow bash?" not in ink.text()
        ink.type_line("again, and the other one")
        ink.wait_for(lambda: "allow bash?" in ink.text() and OTHER in ink.text(), what="the second question")
        assert (project / "ran.txt").read_text() == "ran\n" * 2  # the remembered command did not ask
        ink.answer("n")
        ink.wait_text("second done")
    finally:
        ink.close()
    assert not (project / "other.txt").exists()
    saved = PermissionMemory(project, tmp_path / "inkhome").path.read_text()
    assert '"bash(echo ran >> ran.txt)"' in saved
    assert not (project / ".ink").exists()  # no untracked file of ink's in the user's repository
    results = dict(fake_server.requests[-1].tool_results())
    assert "permission" not in results["c2"]
    assert "the user denied permission for the bash command" in results["c3"]
