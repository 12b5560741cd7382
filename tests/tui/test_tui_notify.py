"""R46: a word when it matters. The real TUI in a pseudo-terminal rings the terminal and runs the user's
``notify`` command when a run ends or a question waits and no key came for ``after_seconds``; with a key
pressed recently it stays quiet (the user is looking)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk
from tests.waiting import poll_until


def _events(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if p.read_text().strip()]


def test_R46_a_run_end_and_a_waiting_question_ring_and_reach_the_notify_command(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    command = f"cat > {seen}/$(date +%s%N).json"
    fake_server.script(Reply([tool_call("bash", {"command": "echo hi"}, id="c1")]), say("Done."))
    config = f'[notify]\nafter_seconds = 0\ncommand = "{command}"\n'
    ink = start_ink(permission_mode="ask", config=config)
    ink.type_line("go")
    ink.wait_text("allow bash?")
    poll_until(lambda: [e["type"] for e in _events(seen)] == ["permission_request"], what="question told")
    assert b"\a" in ink.raw
    ink.answer("y")
    ink.wait_text("Done.")
    poll_until(lambda: len(_events(seen)) == 2, what="the run's end told")
    end = _events(seen)[-1]
    assert end["type"] == "run_end" and end["stopReason"] == "completed"


def test_R46_nothing_while_the_user_is_at_the_keyboard(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path
) -> None:
    marker = tmp_path / "told"
    fake_server.script(say("Quick."), say("Again."))
    ink = start_ink(config=f'[notify]\nafter_seconds = 3600\ncommand = "touch {marker}"\n')
    ink.type_line("hi")
    ink.wait_text("Quick.")
    ink.wait_text("○ idle")
    ink.type_line("more")
    ink.wait_text("Again.")
    ink.wait_text("○ idle")
    assert not marker.exists()
    assert b"\a" not in ink.raw


def test_R46_a_question_asked_while_typing_is_told_once_the_user_has_looked_away(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path
) -> None:
    # the question comes right after the Enter (the user is at the keyboard), then waits: the user may
    # have walked away, so once no key came for after_seconds it rings and runs the command, once
    seen = tmp_path / "seen"
    seen.mkdir()
    command = f"cat > {seen}/$(date +%s%N).json"
    fake_server.script(Reply([tool_call("bash", {"command": "echo hi"}, id="c1")]), say("Done."))
    ink = start_ink(permission_mode="ask", config=f'[notify]\nafter_seconds = 3\ncommand = "{command}"\n')
    ink.type_line("go")
    ink.wait_text("allow bash?")
    poll_until(lambda: [e["type"] for e in _events(seen)] == ["permission_request"], what="question told")
    ink.wait_for(lambda: b"\a" in ink.raw, what="the bell")
    ink.answer("y")
    ink.wait_text("Done.")
    assert [e["type"] for e in _events(seen)] == ["permission_request"]  # the end came while looking
