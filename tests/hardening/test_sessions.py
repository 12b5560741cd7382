"""``--continue`` never resumes the wrong session, keeps a complete last line and reports a torn one
(issue 11): the real ``ink -p`` against the strict fake server, real session files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, one_line_error
from tests.fakeserver import FakeModelServer, say
from tests.hardening.inkbytes import assert_all_accepted, print_args, run_bytes


def two_sessions(server: FakeModelServer, project: Path, env: dict[str, str]) -> list[Path]:
    """Two sessions of ``project``, the second the newest; their files, oldest first."""
    server.script(say("one"), say("two"))
    for prompt in ("older", "newest"):
        assert run_bytes([*print_args(server), prompt], env, project).returncode == 0
    files = sorted((Path(env["INK_HOME"]) / "sessions").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    os.utime(files[0], (1_000, 1_000))
    return files


@pytest.mark.parametrize("damage", ["empty", "torn header", "unreadable"])
def test_continue_refuses_when_the_newest_session_is_unusable(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, damage: str
) -> None:
    env = ink_env(tmp_path)
    _, newest = two_sessions(fake_server, project, env)
    if damage == "empty":
        newest.write_bytes(b"")
    elif damage == "torn header":
        newest.write_bytes(newest.read_bytes()[:25])
    else:
        newest.chmod(0)
    if damage == "unreadable" and os.access(newest, os.R_OK):
        pytest.skip("root reads files whatever their mode")
    done = run_bytes(print_args(fake_server, "openai", "--continue", "go on"), env, project)
    assert done.returncode == 2
    error = one_line_error(done.stderr.decode())
    assert str(newest) in error and "nothing was resumed" in error and "ink --resume ID" in error
    assert len(fake_server.requests) == 2  # the older session was not resumed in its place


def test_continue_stops_at_a_damaged_line_of_the_newest_session(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    env = ink_env(tmp_path)
    _, newest = two_sessions(fake_server, project, env)
    lines = newest.read_bytes().split(b"\n")
    lines[1] = lines[1][:10]
    newest.write_bytes(b"\n".join(lines))
    done = run_bytes(print_args(fake_server, "openai", "--continue", "go on"), env, project)
    assert done.returncode == 2
    assert f"{newest}:2: damaged session entry" in one_line_error(done.stderr.decode())


def test_continue_keeps_a_complete_last_line_and_reports_a_torn_one(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    env = ink_env(tmp_path)
    _, newest = two_sessions(fake_server, project, env)
    newest.write_bytes(newest.read_bytes()[:-1])  # the reply's line, complete, without its newline
    fake_server.script(say("three"), say("four"))
    kept = run_bytes(print_args(fake_server, "openai", "--continue", "third"), env, project)
    assert (kept.returncode, kept.stderr) == (0, b"")
    assert fake_server.requests[2].user_texts() == ["newest", "third"]
    assert len([m for m in fake_server.requests[2].messages if m.get("role") == "assistant"]) == 1
    with open(newest, "ab") as f:
        f.write(b'{"type":"message","message":{"role":"user","te')
    torn = run_bytes(print_args(fake_server, "openai", "--continue", "fourth"), env, project)
    assert torn.returncode == 0
    assert "dropped an unfinished last line (46 bytes" in torn.stderr.decode()
    assert fake_server.requests[3].user_texts() == ["newest", "third", "fourth"]
    assert_all_accepted(fake_server, 4)
