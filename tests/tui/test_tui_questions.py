"""R38 in the real TUI: only a deliberate act answers a permission question. Typing, Enter and paste go
to the editor whatever their timing; the question takes the keyboard only on a hand-over (Tab on an
empty input, Ctrl+O) after a pause in typing, then y/a/n answer; Esc interrupts the run; a long write can
be read whole before it is answered. The interleavings are generated in tests/tui/test_question_keys.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal

TAB, CTRL_O, ESC, PGDN = "\t", "\x0f", "\x1b", "\x1b[6~"
READY = "tab answer it"  # the hint once a hand-over would count (the question shown, typing paused)
ANSWERING = "y/a/n answer · tab back"  # the hint while the question holds the keyboard


def remembered(tmp_path: Path, project: Path) -> list[Path]:
    """Every file where an "always" answer could have been stored."""
    return [*(tmp_path / "inkhome").rglob("permissions.toml"), *project.rglob("permissions.toml")]


def hand_over(ink: InkTerminal, key: str = TAB) -> None:
    """Wait until a hand-over counts (the hint says so), then press ``key``."""
    ready = (READY,) if key == TAB else (READY, "ctrl+o answer it")
    ink.wait_for(lambda: any(hint in ink.text() for hint in ready), what=f"the hint {ready}")
    ink.send(key)
    ink.wait_text(ANSWERING)


def test_the_reported_type_ahead_queues_and_types_and_answers_nothing(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path, tmp_path: Path
) -> None:
    """R38, issue 23 item 1: with `allow bash?` shown a while, `queued msg` Enter `another` typed in one
    go queued the message and then answered "always allow" with the `a` of `another`."""
    fake_server.script(Reply([tool_call("bash", {"command": "echo ran-it"}, id="c1")]), say("Done."))
    ink = start_ink(permission_mode="ask")
    ink.type_line("run something")
    ink.wait_text("allow bash?")
    ink.wait_text(READY)  # shown long enough, nobody typing: the old gate's "live" state
    ink.send("queued msg\ranother")
    ink.wait_text("steer      queued msg")  # Enter queued it, as it does while a run goes on
    ink.wait_for(lambda: ink.editor_text() == "another", what="the rest typed into the editor")
    ink.send(" yes and no\ryna")
    ink.wait_text("steer      another yes and no")
    ink.wait_for(lambda: ink.editor_text() == "yna", what="y, n and a typed as text")
    assert "allow bash?" in ink.text() and "waiting for your answer" in ink.text()
    assert remembered(tmp_path, project) == [] and not (project / "ran-it").exists()
    assert len(fake_server.requests) == 1
    hand_over(ink, CTRL_O)  # the input has text: Ctrl+O hands over and keeps it
    ink.send("y")
    ink.wait_printed("bash echo ran-it: allowed once")
    ink.wait_text("Done.")
    ink.wait_for(lambda: ink.editor_text() == "yna", what="the typed text still in the editor")
    assert remembered(tmp_path, project) == []
    assert fake_server.requests[1].user_texts()[-2:] == ["queued msg", "another yes and no"]


def test_a_hand_over_in_the_same_burst_as_typing_does_not_count(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """A Tab right after an Enter (`x` Enter Tab `n`, one burst) is not a hand-over: the `n` is text."""
    fake_server.script(Reply([tool_call("bash", {"command": "touch never"}, id="c1")]), say("Fine."))
    ink = start_ink(permission_mode="ask", config="question_delay = 2\n")
    ink.type_line("make a file")
    ink.wait_text("allow bash?")
    ink.wait_text(READY)
    ink.send("x\r\tn")
    ink.wait_for(lambda: ink.editor_text() == "n", what="the n typed into the editor")
    assert "tab answers once typing pauses" in ink.text()  # the burst reset the pause
    assert "allow bash?" in ink.text()
    ink.send("\x15")  # Ctrl+U: the input empty again
    hand_over(ink)  # after the pause, Tab hands over
    ink.send("n")
    ink.wait_printed("bash touch never: denied")
    ink.wait_text("Fine.")
    assert not (project / "never").exists()


def test_in_the_question_other_keys_and_pastes_go_back_to_the_input(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(Reply([tool_call("bash", {"command": "touch never"}, id="c1")]), say("Fine."))
    ink = start_ink(permission_mode="ask")
    ink.type_line("make a file")
    ink.wait_text("allow bash?")
    hand_over(ink)
    ink.send("\r")  # Enter is not an answer
    ink.send("\x1b[200~pasted any text\x1b[201~")  # a paste gives the keyboard back and goes in
    ink.wait_for(lambda: ink.editor_text() == "pasted any text", what="the paste in the editor")
    ink.wait_text("ctrl+o answer it")  # the keys are the editor's again
    assert "allow bash?" in ink.text() and not (project / "never").exists()
    hand_over(ink, CTRL_O)
    ink.send("w")  # a printable key that is no answer: back to the input, typed there
    ink.wait_for(lambda: ink.editor_text() == "pasted any textw", what="the w typed into the editor")
    hand_over(ink, CTRL_O)
    ink.send(TAB)  # Tab: back to the input
    ink.wait_for(lambda: ANSWERING not in ink.text(), what="the keyboard back at the input")
    hand_over(ink, CTRL_O)
    ink.send("n")
    ink.wait_printed("bash touch never: denied")
    assert not (project / "never").exists()


def test_esc_on_a_question_interrupts_the_run_and_gives_the_queue_back(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """R38, issue 23 item 5: Esc is the stop key there too; the call is denied as part of the abort."""
    fake_server.script(Reply([tool_call("bash", {"command": "touch never; sleep 30"}, id="c1")]))
    ink = start_ink(permission_mode="ask")
    ink.type_line("make a file")
    ink.wait_text("allow bash?")
    ink.type_line("later")
    ink.wait_text("steer      later")
    ink.send(ESC)  # at once: Esc needs no pause, it stops
    ink.wait_text("⏹ interrupted")
    ink.wait_text("○ idle")
    ink.wait_for(lambda: ink.editor_text() == "later", what="the queued input back in the editor")
    assert "allow bash?" not in ink.text()
    assert not (project / "never").exists()
    assert len(fake_server.requests) == 1


def test_esc_on_the_project_hooks_question_stops_the_run_and_leaves_the_hooks_asked(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """Issue 23 item 5: Esc there switched the project's safety hooks off for the session while the
    command went on. Now the run stops, the command never runs, and the next run asks again."""
    (project / ".ink").mkdir()
    (project / ".ink" / "config.toml").write_text('[[hooks.pre_tool]]\ncommand = "echo ran > hook-ran"\n')
    fake_server.script(
        Reply([tool_call("bash", {"command": "touch never; sleep 30"}, id="c1")]),
        Reply([tool_call("bash", {"command": "touch second"}, id="c2")]),
        say("all done"),
    )
    ink = start_ink()  # yolo: only the hooks' question is asked
    ink.type_line("go")
    ink.wait_text("allow project_hooks?")
    ink.send(ESC)
    ink.wait_text("⏹ interrupted")
    ink.wait_text("○ idle")
    assert not (project / "never").exists() and not (project / "hook-ran").exists()
    ink.type_line("again")
    ink.wait_text("allow project_hooks?")  # not switched off: asked again
    hand_over(ink)
    ink.send("y")
    ink.wait_text("all done")
    assert (project / "hook-ran").exists() and (project / "second").exists()


def test_a_long_write_can_be_read_whole_before_it_is_answered(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """R38, issue 23 item 6: a 200-line write showed 9 lines and "… 191 more lines", and Ctrl+O did
    nothing while the question was up. Ctrl+O now shows it on the whole screen, and it scrolls."""
    content = "".join(f"line {i:03d} of the new file\n" for i in range(1, 201))
    fake_server.script(
        Reply([tool_call("write", {"path": "big.txt", "content": content}, id="c1")]), say("Written.")
    )
    ink = start_ink(permission_mode="ask")
    ink.type_line("write it")
    ink.wait_text("allow write?")
    ink.wait_text("more rows · ctrl+o shows all")
    assert "line 200" not in ink.text()
    hand_over(ink, CTRL_O)
    ink.wait_text("rows 1-")
    shown_rows = sum(1 for line in ink.lines() if "of the new file" in line)
    assert shown_rows > ink.rows // 2  # all the screen but the input and the status
    seen = numbers_shown(ink)
    while "200" not in seen:
        before = position(ink)
        ink.send(PGDN)
        ink.wait_for(lambda: position(ink) != before, what="the question to scroll")  # noqa: B023
        seen |= numbers_shown(ink)
    assert seen == {f"{i:03d}" for i in range(1, 201)}  # every line was on the screen
    ink.send("y")
    ink.wait_text("Written.")
    assert (project / "big.txt").read_text() == content


def position(ink: InkTerminal) -> str:
    return next((line for line in ink.lines() if line.lstrip().startswith("rows ")), "")


def numbers_shown(ink: InkTerminal) -> set[str]:
    return {line.split("line ")[1][:3] for line in ink.lines() if "of the new file" in line}


@pytest.mark.parametrize("columns", [100, 40])
def test_the_project_hooks_question_reads_whole_at_100_and_40_columns(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path, columns: int
) -> None:
    """Issue 30: the hooks question was cut mid-sentence at 100 columns and nearly gone at 40, with the
    hooks shown as raw JSON wrapped mid-word."""
    (project / ".ink").mkdir()
    hook = "echo checking the command before it runs > hook-ran"
    (project / ".ink" / "config.toml").write_text(f'[[hooks.pre_tool]]\ncommand = "{hook}"\n')
    fake_server.script(Reply([tool_call("bash", {"command": "true"}, id="c1")]), say("all done"))
    ink = start_ink(columns=columns, rows=30)
    ink.type_line("go")
    ink.wait_text("allow project_hooks?")
    ink.wait_text("tab answer it")
    # the call whose checks ask it waits for the answer: never "running" meanwhile
    ink.wait_text("? bash true · waiting for your answer")
    assert "running" not in "".join(line for line in ink.lines() if "bash true" in line)
    lines = ink.lines()
    assert all(len(line) <= columns for line in lines)
    top = next(i for i, line in enumerate(lines) if line.startswith("allow project_hooks?"))
    keys = next(i for i, line in enumerate(lines) if "allow once" in line or " once " in line)
    question = " ".join(" ".join(lines[top:keys]).split())
    assert "defines hooks: shell commands that would run on your machine" in question  # whole
    assert f"- pre_tool: {hook}" in question and '"hooks"' not in question and "[" not in question
    item = next(i for i, line in enumerate(lines) if "- pre_tool:" in line)
    if hook not in lines[item]:  # wrapped: the item's next row goes under its text, not its mark
        mark = lines[item].index("- pre_tool:")
        assert lines[item + 1].startswith(" " * (mark + 2)) and lines[item + 1][mark + 2] != " "
    ink.answer("y")
    ink.wait_text("all done")
