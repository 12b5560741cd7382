"""Sessions from the command line: a print-mode run is saved; --continue, --resume (prefix), ink sessions,
--no-session; unknown ids are bad input (exit 2)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.inkproc import ink_env, one_line_error, run_ink
from tests.fakeserver import FakeModelServer, say


def _env(tmp_path: Path, server: FakeModelServer) -> dict[str, str]:
    return ink_env(tmp_path, OPENAI_BASE_URL=server.openai_base_url, OPENAI_API_KEY="k")


def test_continue_and_resume_carry_the_conversation(fake_server: FakeModelServer, tmp_path: Path) -> None:
    env = _env(tmp_path, fake_server)
    fake_server.script(say("first answer"), say("second answer"), say("third answer"))
    assert run_ink(["-p", "first question"], env, tmp_path).returncode == 0
    again = run_ink(["-p", "--continue", "second question"], env, tmp_path)
    assert again.returncode == 0, again.stderr
    assert fake_server.requests[1].user_texts() == ["first question", "second question"]

    listing = run_ink(["sessions"], env, tmp_path)
    assert listing.returncode == 0
    lines = [line for line in listing.stdout.splitlines() if "first question" in line]
    assert len(lines) == 1  # one session, continued, not two
    session_id = lines[0].split()[0]

    resumed = run_ink(["-p", "--resume", session_id[:5], "third question"], env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert fake_server.requests[2].user_texts() == ["first question", "second question", "third question"]


def test_no_session_writes_nothing(fake_server: FakeModelServer, tmp_path: Path) -> None:
    env = _env(tmp_path, fake_server)
    fake_server.script(say("hi"))
    assert run_ink(["-p", "--no-session", "hello"], env, tmp_path).returncode == 0
    sessions = tmp_path / "inkhome" / "sessions"
    assert not sessions.exists() or not any(sessions.rglob("*.jsonl"))
    assert "no sessions" in run_ink(["sessions"], env, tmp_path).stdout


def test_unknown_resume_id_and_nothing_to_continue_are_bad_input(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    env = _env(tmp_path, fake_server)
    missing = run_ink(["-p", "--resume", "zzzz", "x"], env, tmp_path)
    assert missing.returncode == 2 and "zzzz" in one_line_error(missing.stderr)
    nothing = run_ink(["-p", "--continue", "x"], env, tmp_path)
    assert nothing.returncode == 2 and "no session" in one_line_error(nothing.stderr)
    assert fake_server.requests == []


def test_resume_without_an_id_is_a_usage_error_outside_the_interactive_ui(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """The picker is the TUI's; print and RPC mode need the id, and say so in one line (exit 2)."""
    env = _env(tmp_path, fake_server)
    fake_server.script(say("made"))
    assert run_ink(["-p", "a session"], env, tmp_path).returncode == 0
    for args in (["-p", "task", "--resume"], ["--mode", "rpc", "--resume"], ["-p", "task", "-r"]):
        done = run_ink(args, env, tmp_path)
        problem = one_line_error(done.stderr)
        assert done.returncode == 2, done.stderr
        assert "needs the session's id: --resume ID" in problem and "Traceback" not in done.stderr
    assert len(fake_server.requests) == 1
