"""Ctrl+R on an idle prompt searches the prompt history, newest first, as bash's reverse-i-search does
(issue 30, discoverability); while a run goes on Ctrl+R stays interrupt-and-redirect (R24,
test_tui_flows.py). A prompt brought back with Up opens no menu: Up goes on walking the history."""

from __future__ import annotations

from tests.fakeserver import FakeModelServer, say
from tests.tui.conftest import StartInk

CTRL_R, ESC, BACKSPACE, UP = "\x12", "\x1b", "\x7f", "\x1b[A"


def test_ctrl_r_when_idle_searches_the_prompt_history(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(say("One."), say("Two."), say("Three."))
    ink = start_ink()
    for prompt, reply in (
        ("deploy the staging server", "One."),
        ("fix the parser", "Two."),
        ("deploy prod", "Three."),
    ):
        ink.type_line(prompt)
        ink.wait_text(reply)
        ink.wait_text("○ idle")
    ink.send("draft")
    ink.wait_for(lambda: ink.editor_text() == "draft", what="the draft")
    ink.send(CTRL_R)  # the search starts from what the input holds
    ink.wait_text("search prompts: draft▏ no match")
    ink.send(BACKSPACE * 5 + "DEPLOY")  # case ignored; typed into the search, not the input
    ink.wait_text("search prompts: DEPLOY▏ 1/2")
    assert "type to search · ctrl+r/↑ older" in ink.text()
    ink.send(CTRL_R)  # an older match
    ink.wait_text("search prompts: DEPLOY▏ 2/2")
    ink.send("\r")  # into the input; nothing is sent
    ink.wait_for(lambda: ink.editor_text() == "deploy the staging server", what="the older prompt taken")
    assert len(fake_server.requests) == 3
    assert "search prompts" not in ink.text()
    ink.send(CTRL_R + "parser")
    ink.wait_text("search prompts: deploy the staging serverparser▏ no match")
    ink.send(ESC)  # back to the input as it was
    ink.wait_for(
        lambda: "search prompts" not in ink.text() and ink.editor_text() == "deploy the staging server",
        what="the input given back",
    )
    assert "○ idle" in ink.text()


def test_a_command_brought_back_with_up_opens_no_menu(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(say("Hi."))
    ink = start_ink()
    ink.type_line("hello")
    ink.wait_text("Hi.")
    ink.type_line("/status")
    ink.wait_printed("Status:")
    ink.send(UP)
    ink.wait_for(lambda: ink.editor_text() == "/status", what="the command back")
    assert "↑↓ choose" not in ink.text()
    ink.send(UP)  # still the history, not a menu
    ink.wait_for(lambda: ink.editor_text() == "hello", what="the prompt before it")
