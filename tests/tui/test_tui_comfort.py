"""Issue 30, comfort: what a user of a shell and of other agents expects of the keys and the editor.
Ctrl+Z suspends ink as a shell job and ``fg`` brings it back; text typed while ink starts is kept and
its Enter sends it; a long paste is one placeholder in the editor, expandable; Ctrl+G's file is a
markdown file ending in a newline; Tab on a custom command says what it does."""

from __future__ import annotations

from pathlib import Path

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal

CTRL_Z = "\x1a"


def test_ctrl_z_suspends_ink_to_the_shell_and_fg_resumes_it_with_the_draft(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(say("after the resume"))
    ink = start_ink(shell=True, rows=20, columns=80)
    ink.send("a draft")
    ink.wait_for(lambda: ink.editor_text() == "a draft", what="the draft")
    ink.send(CTRL_Z)
    ink.wait_text("Stopped")  # the shell's job control took over: ink is a stopped job
    ink.wait_for(lambda: ink.lines()[-1] == "$" or "$" in ink.text().split("Stopped")[-1], what="the prompt")
    assert "○ idle" not in ink.text()  # its rows were put away before it stopped
    ink.send("jobs\r")
    ink.wait_text("[1]+  Stopped")
    ink.send("fg\r")
    ink.wait_text("○ idle")
    ink.wait_for(lambda: ink.editor_text() == "a draft", what="the draft, kept")
    ink.send("\x15go on\r")  # Ctrl+U, then a prompt: ink works after the resume
    ink.wait_text("after the resume")


def test_ctrl_z_while_a_reply_streams_resumes_the_stream(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("Streaming"), gate, text(" and done.")]))
    ink = start_ink(shell=True, rows=20, columns=80)
    ink.type_line("go")
    gate.wait_reached()
    ink.send(CTRL_Z)
    ink.wait_text("Stopped")
    gate.open()
    ink.send("fg\r")
    ink.wait_text("Streaming and done.")
    ink.wait_text("○ idle")


def test_text_typed_while_ink_starts_is_kept_and_its_enter_sends_it(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """Typed before the UI is up, Enter reached ink as a line feed (Ctrl+J: a new line), and nothing was
    sent. The keys are written the moment ink is started, long before its UI can be up."""
    fake_server.script(say("got the early prompt"))
    env = ink_env(tmp_path, TERM="xterm-256color")
    args = ["--base-url", fake_server.openai_base_url, "--api-key", "k"]
    ink = InkTerminal(args, env, project, 20, 80)
    try:
        ink.send("hello early\rstill typing")
        ink.wait_text("got the early prompt")
        ink.wait_for(lambda: ink.editor_text() == "still typing", what="the unended line in the editor")
        assert fake_server.requests[0].user_texts() == ["hello early"]
        assert "› hello early" in ink.scrollback()
    finally:
        ink.close()


def test_a_long_paste_is_one_placeholder_sent_whole_and_shown_short(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """A 5,000-line paste was echoed whole into the editor and the scrollback."""
    fake_server.script(say("read it all"))
    pasted = "".join(f"log line {i}\n" for i in range(1, 5001))
    ink = start_ink(rows=20, columns=80)
    ink.send("look at this: ")
    ink.send(f"\x1b[200~{pasted}\x1b[201~")
    ink.wait_for(lambda: ink.editor_text() == "look at this: [pasted 5,000 lines]", what="the placeholder")
    ink.send("\r")
    ink.wait_text("read it all")
    assert fake_server.requests[0].user_texts() == ["look at this: " + pasted]  # the text itself went
    shown = "\n".join(ink.scrollback())
    assert "› look at this: [pasted 5,000 lines]" in shown and "log line 2500" not in shown


def test_a_paste_placeholder_expands_with_ctrl_o_and_backspace_takes_it_whole(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    pasted = "\n".join(f"row {i}" for i in range(1, 41))
    ink = start_ink(rows=20, columns=80)
    ink.send(f"\x1b[200~{pasted}\x1b[201~")
    ink.wait_for(lambda: ink.editor_text() == "[pasted 40 lines]", what="the placeholder")
    ink.send("\x7f")  # Backspace: the whole placeholder, not its last character
    ink.wait_for(lambda: ink.input_line() == "›", what="the editor emptied")
    ink.send(f"x \x1b[200~{pasted}\x1b[201~")
    ink.wait_for(lambda: ink.editor_text() == "x [pasted 40 lines #2]", what="the second placeholder")
    ink.send("\x0f")  # Ctrl+O: the text itself, to edit
    ink.wait_for(lambda: "row 40" in ink.editor_text(), what="the paste expanded in the editor")
    assert "[pasted" not in ink.text()


def test_ctrl_g_opens_a_markdown_file_ending_in_a_newline(start_ink: StartInk, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    editor = tmp_path / "fake-editor"
    editor.write_text(f'#!/bin/sh\ncp "$1" {seen}; echo "$1" >> {seen}.name; printf "edited\\n" > "$1"\n')
    editor.chmod(0o755)
    ink = start_ink(env={"EDITOR": str(editor)})
    ink.send("a draft")
    ink.wait_for(lambda: ink.editor_text() == "a draft", what="the draft")
    ink.send("\x07")  # Ctrl+G
    ink.wait_for(lambda: ink.editor_text() == "edited", what="the editor's text back, without its newline")
    assert seen.read_text() == "a draft\n"
    assert (tmp_path / "seen.name").read_text().strip().endswith(".md")


def test_tab_on_a_custom_command_says_what_it_does_and_the_scrollback_shows_what_was_typed(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / ".ink" / "commands").mkdir(parents=True)
    (project / ".ink" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: FILE\n---\nReview $ARGUMENTS carefully.\n"
    )
    fake_server.script(say("Reviewed."))
    ink = start_ink()
    ink.send("/rev\t")
    ink.wait_for(lambda: ink.editor_text() == "/review", what="the name completed")
    ink.wait_text("/review · Review a file for bugs")
    ink.send("app.py\r")  # the menu's pick ended the name with a space
    ink.wait_text("Reviewed.")
    assert fake_server.requests[0].user_texts() == ["Review app.py carefully."]
    ink.wait_printed("› /review app.py")
    assert "Review app.py carefully." not in "\n".join(ink.scrollback())


def test_after_model_to_a_priced_model_the_cost_counts_again(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """Issue 30: one reply of a model without known prices made the session's cost unknown for good, so
    after /model to a priced model nothing was counted; the priced part shows now, as a lower bound."""
    fake_server.script(say("unpriced reply"), say("priced reply"))
    ink = start_ink("--model", "no-such-priced-model")
    ink.type_line("first")
    ink.wait_text("unpriced reply")
    ink.wait_text("○ idle")
    ink.wait_for(lambda: "20 in" in status_line(ink) or "10 in" in status_line(ink), what="the status")
    assert "$" not in status_line(ink)  # the cost is unknown: not shown as $0.00
    ink.type_line("/model gpt-4.1")
    ink.wait_text("model: gpt-4.1")
    ink.type_line("second")
    ink.wait_text("priced reply")
    ink.wait_for(lambda: "≥$0.00" in status_line(ink), what="the priced calls' cost, as a lower bound")


def status_line(ink: InkTerminal) -> str:
    return next((line for line in ink.lines() if line.startswith(("○ ", "● ", "◌ "))), "")
