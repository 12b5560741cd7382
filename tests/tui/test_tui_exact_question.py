"""R38: what a question asks to approve is seen as it is. A command holding a bidi override (which a
terminal with bidi, VTE or Konsole, uses to draw the rest of the line reversed: ``~ fr- mr`` shows as
``rm -rf ~``), a zero-width space, a no-break space (bash reads ``rm\\u00a0-rf`` as one word) or an
escape sequence reached the terminal as it was: invisible, or dropped. Now each is written as its
escape, in the question and in the call's line, and none reaches the terminal raw."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ink.frontends.tui.blocks import shown_exactly
from tests.fakeserver import FakeModelServer, call, say
from tests.tui.conftest import StartInk

INVISIBLE = "\u202e\u2066\u2069\u200b\u00a0\ufeff\u00ad"
COMMAND = "echo hello #\u202e\u2066 ~ fr- mr ;\u2069 \u200bx\u00a0y \x1b[8mz"


def test_a_question_shows_every_invisible_character_of_a_command_as_its_escape(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(call("bash", {"command": COMMAND}, id="c1"), say("ok"))
    ink = start_ink(permission_mode="ask")
    mark = len(ink.raw)
    ink.type_line("go")
    ink.wait_text("allow bash?")
    shown = "echo hello #\\u202e\\u2066 ~ fr- mr ;\\u2069 \\u200bx\\xa0y \\x1b[8mz"
    ink.wait_for(lambda: sum(shown in line for line in ink.lines()) == 2, what="the call's line and body")
    written = bytes(ink.raw[mark:]).decode("utf-8", "replace")
    assert not any(char in written for char in INVISIBLE), [c for c in INVISIBLE if c in written]
    ink.send("\x1b")  # R38: Esc interrupts the run, the call is not run
    ink.wait_text("⏹ interrupted")


@given(st.text())
def test_shown_exactly_leaves_nothing_invisible_and_printable_text_as_it_is(text: str) -> None:
    shown = shown_exactly(text)
    assert all(char.isprintable() or char == "\n" for char in shown)
    if text.isprintable():
        assert shown is text
    assert shown.count("\n") == text.count("\n")
