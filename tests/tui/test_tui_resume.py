"""``ink --resume`` without an id: a picker of this directory's sessions before the UI starts (issue 30).

Sessions are made with ``ink -p`` against the fake model server, their ages set on their files; the
picker runs in a pseudo-terminal."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ink.ai.messages import AssistantMessage, TextBlock, ToolCall, ToolResult, UserMessage
from ink.frontends.tui.session_picker import one_line_prompt
from ink.store import SessionInfo, SessionStore
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, Reply, say, text, tool_call
from tests.tui.conftest import StartInk

ESC, DOWN = "\x1b", "\x1b[B"


def _session(server: FakeModelServer, tmp_path: Path, project: Path, prompt: str, age: float) -> Path:
    """A session of ``project`` holding ``prompt``, last updated ``age`` seconds ago."""
    env = ink_env(tmp_path, OPENAI_BASE_URL=server.openai_base_url, OPENAI_API_KEY="k")
    before = set(_session_files(tmp_path))
    done = run_ink(["-p", prompt], env, project)
    assert done.returncode == 0, done.stderr
    [made] = set(_session_files(tmp_path)) - before
    stamp = time.time() - age
    os.utime(made, (stamp, stamp))
    return made


def _session_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "inkhome" / "sessions").rglob("*.jsonl"))


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time: what a run would change."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def _picker_rows(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("› ", "  ")) and " ago " in line]


def test_resume_without_an_id_picks_among_this_directorys_sessions_newest_first(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    fake_server.script(say("Parsers answer."), say("Docs answer."), say("Picked up again."))
    _session(fake_server, tmp_path, project, "fix the parser bug", age=7200)
    _session(fake_server, tmp_path, project, "write the docs", age=120)
    ink = start_ink("--resume", wait_ready=False)
    ink.wait_for(lambda: "(2 sessions)" in "".join(ink.lines()), what="the picker's title")
    ink.wait_text("esc quit")
    rows = _picker_rows(ink.lines())
    assert len(rows) == 2, ink.text()
    assert rows[0].startswith("› 2m ago") and "write the docs" in rows[0] and "2 messages" in rows[0]
    assert rows[1].startswith("  2h ago") and "fix the parser bug" in rows[1]
    ink.send(DOWN)
    ink.wait_for(lambda: _picker_rows(ink.lines())[1].startswith("› "), what="the second one chosen")
    ink.send("\r")
    ink.wait_text("── resumed session")
    ink.wait_text("○ idle")
    ink.wait_printed("Parsers answer.")
    assert "› fix the parser bug" in ink.scrollback()
    assert "esc quit" not in ink.text()  # the picker is gone from the screen
    ink.type_line("go on")
    ink.wait_text("Picked up again.")
    assert fake_server.requests[2].user_texts() == ["fix the parser bug", "go on"]


def test_typing_filters_the_sessions_and_enter_resumes_the_one_left(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    fake_server.script(say("A."), say("B."), say("C."))
    for age, prompt in (
        (300, "refactor the lexer"),
        (200, "add a --json flag"),
        (100, "update the changelog"),
    ):
        _session(fake_server, tmp_path, project, prompt, age=age)
    ink = start_ink("--resume", wait_ready=False)
    ink.wait_text("esc quit")
    ink.send("LEX")
    ink.wait_for(lambda: "1 of 3" in ink.text() and len(_picker_rows(ink.lines())) == 1, what="one left")
    [row] = _picker_rows(ink.lines())
    assert "refactor the lexer" in row
    ink.send("zz")  # nothing holds it: said, and Enter resumes nothing
    ink.wait_text("no session's first prompt holds all of that")
    ink.send("\r")
    ink.send("\x7f\x7f")
    ink.wait_text("1 of 3")
    ink.send("\r")
    ink.wait_text("── resumed session")
    ink.wait_printed("› refactor the lexer")


def test_esc_in_the_picker_quits_ink_with_0_and_writes_nothing(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    fake_server.script(say("Only."))
    _session(fake_server, tmp_path, project, "the only session", age=60)
    home = tmp_path / "inkhome"
    before = _tree(home)
    ink = start_ink("--resume", wait_ready=False)
    ink.wait_text("the only session")
    ink.send(ESC)
    assert ink.wait_exit() == 0
    assert _tree(home) == before
    assert len(fake_server.requests) == 1  # the one of the session's making


def test_resume_with_no_session_here_says_so_in_one_line(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    fake_server.script(say("Elsewhere."))
    _session(fake_server, tmp_path, elsewhere, "a session of another folder", age=60)
    ink = start_ink("--resume", wait_ready=False)
    assert ink.wait_exit() == 0
    shown = "".join(line for line in ink.lines() if line.strip())  # one line, wrapped at 100 columns
    assert shown.startswith("ink: no sessions in ") and shown.endswith("to resume yet; `ink` starts one")


def test_the_picker_fits_a_40_column_terminal(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    fake_server.script(say("Long."))
    _session(fake_server, tmp_path, project, "a first prompt much longer than forty columns can hold", age=60)
    ink = start_ink("--resume", wait_ready=False, columns=40)
    ink.wait_text("esc quit")
    [row] = _picker_rows(ink.lines())
    assert row.startswith("› 1m ago") and row.endswith("…") and len(row) <= 40
    assert "message" not in row  # the size is left out where the prompt needs the room


# -- the replay of --continue, --resume and /resume ------------------------------------------------------


def test_continue_replays_every_prompt_reply_and_tool_call_in_its_one_line_form(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / "notes.txt").write_text("one\ntwo\n")
    fake_server.script(
        say("The first answer."),
        Reply([text("Let me look."), tool_call("bash", {"command": "echo from-the-tool"}, id="c1")]),
        say("It printed it."),
        Reply([tool_call("read", {"path": "missing.txt"}, id="c2")]),
        Reply([tool_call("edit", {"path": "notes.txt", "old_text": "two", "new_text": "2"}, id="c3")]),
        say("Edited what was there."),
        say("Continued."),
    )
    ink = start_ink()
    for prompt, last in (("question one", "The first answer."), ("run echo", "It printed it.")):
        ink.type_line(prompt)
        ink.wait_printed(last)
    ink.type_line("edit the notes")
    ink.wait_printed("Edited what was there.")
    ink.wait_text("○ idle")
    ink.type_line("/quit")
    assert ink.wait_exit() == 0
    again = start_ink("--continue")
    again.wait_printed("Edited what was there.")
    shown = again.scrollback()
    order = [
        "› question one",
        "The first answer.",
        "› run echo",
        "Let me look.",
        "It printed it.",
        "› edit the notes",
        "Edited what was there.",
    ]
    assert [shown.index(line) for line in order] == sorted(shown.index(line) for line in order), shown
    lines = "\n".join(shown)
    assert "✓ bash echo from-the-tool · " in lines
    assert "✗ read missing.txt · error" in lines
    assert "✓ edit notes.txt · " in lines
    assert lines.count("from-the-tool") == 1  # the call's line only: its output is not replayed
    assert "-two" not in lines  # nor the edit's diff
    again.type_line("go on")
    again.wait_text("Continued.")


def _long_session(tmp_path: Path, project: Path, turns: int) -> str:
    """A session of ``project`` with ``turns`` prompts, each answered after a bash call; its id."""
    sessions = SessionStore(tmp_path / "inkhome" / "sessions")
    handle = sessions.create(project, "gpt-4.1-mini", "openai")
    for n in range(1, turns + 1):
        call = ToolCall(f"call-{n}", "bash", {"command": f"echo step-{n}"})
        handle.history.append(UserMessage(f"prompt number {n}"))
        handle.history.append(AssistantMessage((call,), "tool_use"))
        handle.history.append(ToolResult(call.id, "bash", f"step-{n}\n", duration_ms=1200))
        handle.history.append(AssistantMessage((TextBlock(f"answer number {n}"),), "stop"))
    handle.close()
    return handle.id


def test_a_long_session_replays_its_last_20_turns_and_counts_the_earlier_ones(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    session_id = _long_session(tmp_path, project, 45)
    fake_server.script(say("Carried on."))
    ink = start_ink("--resume", session_id[:8], wait_ready=False)  # the banner scrolls off the screen
    ink.wait_text("○ idle")
    ink.wait_printed("answer number 45")
    lines = ink.scrollback()
    assert "… 25 earlier turns not shown (the model has the whole conversation)" in lines
    assert "› prompt number 25" not in lines and "› prompt number 26" in lines
    assert "✓ bash echo step-26 · 1.2s" in lines and "✓ bash echo step-45 · 1.2s" in lines
    ink.type_line("and now")
    ink.wait_text("Carried on.")
    assert len(fake_server.requests[0].user_texts()) == 46  # the model has every turn


def test_slash_resume_replays_the_session_it_switches_to(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    session_id = _long_session(tmp_path, project, 3)
    ink = start_ink()
    ink.type_line(f"/resume {session_id[:8]}")
    ink.wait_printed("answer number 3")
    lines = ink.scrollback()
    assert "› prompt number 1" in lines and "✓ bash echo step-2 · 1.2s" in lines
    assert not any("earlier turn" in line for line in lines)


def test_the_first_prompt_in_the_picker_is_as_typed_without_its_attachments() -> None:
    prompt = 'look at this\n\n<attached path="a.py">\nprint(1)\n</attached>'
    info = SessionInfo("f" * 32, Path("x.jsonl"), "/p", "m", 0.0, 0.0, " ".join(prompt.split()), 2)
    assert one_line_prompt(info) == "look at this"
    bare = SessionInfo("e" * 32, Path("y.jsonl"), "/p", "m", 0.0, 0.0, "\x1b[31mred\x1b[0m text", 2)
    assert one_line_prompt(bare) == "red text"
