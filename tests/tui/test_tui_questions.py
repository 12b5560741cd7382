"""Permission questions never take keys typed for the editor (issue 12): y/a/n answer only on an empty
input once the question has been shown for ``question_delay``; Alt+y/a/n answer deliberately."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk

ALT_Y, CTRL_U, ESC = "\x1by", "\x15", "\x1b"
SENTENCE = "please try another approach"  # holds a, n and y: each an answer key


def test_typing_a_sentence_while_a_question_appears_answers_nothing_and_keeps_the_text(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(Reply([tool_call("bash", {"command": "echo ran-it"}, id="c1")]), say("Done."))
    ink = start_ink(permission_mode="ask")
    ink.type_line("run something")
    ink.wait_text("allow bash?")
    ink.send(SENTENCE)
    ink.wait_for(lambda: ink.editor_text() == SENTENCE, what="the sentence in the editor")
    ink.wait_text("alt+y/a/n answer")  # still open after its delay: its keys type into the editor
    assert "allow bash?" in ink.text()
    assert not (project / ".ink" / "permissions.toml").exists()
    assert len(fake_server.requests) == 1
    ink.send(ALT_Y)  # the deliberate answer works with text in the editor, and keeps it
    ink.wait_text("✓ bash echo ran-it")
    ink.wait_text("Done.")
    ink.wait_for(lambda: ink.editor_text() == SENTENCE, what="the sentence still in the editor")
    ink.wait_printed("bash echo ran-it: allowed once")
    assert not (project / ".ink" / "permissions.toml").exists()


def test_answer_keys_wait_until_the_question_was_shown_long_enough(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(Reply([tool_call("bash", {"command": "touch never"}, id="c1")]), say("Fine."))
    ink = start_ink(permission_mode="ask", config="question_delay = 5\n")
    ink.type_line("make a file")
    ink.wait_text("allow bash?")
    ink.send("y")  # at once: not read yet, so it is text
    ink.wait_for(lambda: ink.editor_text() == "y", what="the y typed into the editor")
    assert "allow bash?" in ink.text()
    ink.send(CTRL_U)
    ink.wait_for(lambda: ink.input_line() == "›", what="the editor emptied")
    ink.wait_text("esc denies")  # the keys are live now
    ink.send("n")
    ink.wait_text("bash touch never: denied")
    ink.wait_text("Fine.")
    ink.wait_text("○ idle")
    assert not (project / "never").exists()
    ink.wait_for(lambda: ink.input_line() == "›", what="nothing left in the editor")


def test_after_an_answer_the_status_says_running_and_the_timer_starts_then(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """The question was open for at least question_delay (4 s); the tool's time starts at the answer
    (the bound leaves a loaded machine 3 s to draw the screen, and still tells the two apart)."""
    fake_server.script(Reply([tool_call("bash", {"command": "sleep 30"}, id="c1")]))
    ink = start_ink(permission_mode="ask", config="question_delay = 4\n")
    ink.type_line("wait a bit")
    ink.wait_text("allow bash?")
    ink.wait_text("esc denies")
    ink.send("y")
    ink.wait_text("bash sleep 30: allowed once")
    ink.wait_for(lambda: "● running · running bash" in ink.text(), what="the status line after the answer")
    assert "waiting for your answer" not in ink.text()
    [line] = [line for line in ink.lines() if "bash sleep 30 · running " in line]
    assert float(line.rsplit("running ", 1)[1].rstrip("s")) < 3.0  # not the 4 s the question was open
    ink.send(ESC)
    ink.wait_text("○ idle")
