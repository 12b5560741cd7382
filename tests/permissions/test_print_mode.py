"""Print mode has nobody to answer a question: what would ask is refused, with the way to allow it."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say

TOUCH = "echo ran >> ran.txt"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    work.mkdir()
    return work


def args(server: FakeModelServer, *more: str) -> list[str]:
    return ["-p", "--no-session", "--base-url", server.openai_base_url, "--api-key", "k", *more]


def test_a_command_that_would_ask_is_refused_with_the_flag_that_allows_it(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("could not run it"))
    done = run_ink(args(fake_server, "touch it"), ink_env(tmp_path), project)
    assert (done.returncode, done.stdout) == (0, "could not run it\n")  # the run itself went on
    assert not (project / "ran.txt").exists()
    [warning] = done.stderr.splitlines()
    assert warning.startswith("ink: warning: refused the bash command `echo ran >> ran.txt`")
    allow = f"--allow {shlex.quote(f'bash({TOUCH})')}"
    assert allow in warning and "--permission-mode yolo" in warning
    [(call_id, seen)] = fake_server.requests[1].tool_results()
    assert call_id == "c1" and "nobody can" in seen and allow in seen  # the model knows why, too
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("done"))
    again = run_ink(args(fake_server, *shlex.split(allow), "touch it"), ink_env(tmp_path), project)
    assert (again.returncode, again.stderr) == (0, "")
    assert (project / "ran.txt").read_text() == "ran\n"


def test_edits_need_accept_edits_and_outside_the_workspace_still_refuses(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    fake_server.script(
        call("write", {"path": "inside.txt", "content": "in\n"}, id="w1"),
        call("write", {"path": str(outside), "content": "out\n"}, id="w2"),
        say("done"),
    )
    done = run_ink(
        args(fake_server, "--permission-mode", "accept-edits", "write"), ink_env(tmp_path), project
    )
    assert done.returncode == 0, done.stderr
    assert (project / "inside.txt").read_text() == "in\n" and not outside.exists()
    [warning] = done.stderr.splitlines()
    assert "outside the workspace" in warning and f"--allow 'edit({outside})'" in warning
    fake_server.script(call("write", {"path": "inside2.txt", "content": "x"}, id="w3"), say("done"))
    asked = run_ink(args(fake_server, "write"), ink_env(tmp_path), project)  # mode ask
    assert "--permission-mode accept-edits" in asked.stderr and not (project / "inside2.txt").exists()


def test_a_deny_rule_from_the_project_refuses_even_in_yolo(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    (project / ".ink").mkdir()
    (project / ".ink" / "config.toml").write_text(
        '[permissions]\ndeny = ["bash(echo *)"]\nallow = ["bash"]\n'
    )
    fake_server.script(call("bash", {"command": f"ls && {TOUCH}"}, id="c1"), say("refused"))
    done = run_ink(args(fake_server, "--permission-mode", "yolo", "touch"), ink_env(tmp_path), project)
    assert done.returncode == 0
    assert not (project / "ran.txt").exists()
    assert "ignoring allow rule 'bash'" in done.stderr  # the project may only forbid
    [(_, seen)] = fake_server.requests[1].tool_results()
    assert "forbidden by the permission rule bash(echo *)" in seen
    assert f"{project / '.ink' / 'config.toml'}:2" in seen


def test_a_rule_naming_no_tool_is_said_at_start_as_it_covers_nothing(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # A typo in a deny rule (Remove for rm) fails open: ink says so at start; a rule for a tool, a kind
    # word or an MCP tool (listed by its server only later) is not named.
    fake_server.script(say("nothing to do"))
    flags = ["--deny", "Remove(f3)", "--deny", "bash(rm *)", "--deny", "edit", "--deny", "mcp__git__push"]
    done = run_ink(args(fake_server, *flags, "hi"), ink_env(tmp_path), project)
    assert done.returncode == 0, done.stderr
    named = [line for line in done.stderr.splitlines() if "covers nothing" in line]
    assert len(named) == 1 and "remove(f3) (--deny)" in named[0], done.stderr
