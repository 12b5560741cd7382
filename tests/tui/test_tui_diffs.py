"""Issue 12: a change is shown as the real diff of the file, in the permission question and after the
call, highlighted for its language with the words that changed marked, for edit and write alike."""

from __future__ import annotations

from pathlib import Path

import pyte

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal, char_at


def chars_of(ink: InkTerminal, line_text: str, part: str) -> list[pyte.screens.Char]:
    """The styled characters of ``part`` in the first screen line holding ``line_text``."""
    for y, line in enumerate(ink.lines()):
        x = line.find(line_text)
        if x >= 0:
            start = x + line_text.index(part)
            return [ink.screen.buffer[y][i] for i in range(start, start + len(part))]
    raise AssertionError(f"{line_text!r} is not on the screen:\n{ink.text()}")


def asked(
    fake_server: FakeModelServer, start_ink: StartInk, tool: str, args: dict[str, str], shown: str
) -> InkTerminal:
    """ink in ``ask`` mode, its model calling ``tool`` once (then saying "Done."), the question open
    until ``shown`` is on the screen."""
    fake_server.script(Reply([tool_call(tool, args, id="c1")]), say("Done."))
    ink = start_ink(permission_mode="ask")
    ink.type_line("change it")
    ink.wait_text(f"allow {tool}?")
    ink.wait_text(shown)
    return ink


def answer_yes(ink: InkTerminal, tool_line: str) -> str:
    """Allow the call once the keys answer; the scrollback once the run is over and the tool's block
    (``tool_line`` starts it) is printed."""
    ink.answer("y")
    ink.wait_text("Done.")
    ink.wait_printed(tool_line, whole_line=False)
    return "\n".join(ink.scrollback())


def test_an_edit_shows_the_files_diff_with_context_syntax_and_changed_words(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / "calc.py").write_text("def area(w, h):\n    scale = 1\n    return w * h * scale\n")
    edit = {"path": "calc.py", "old_text": "scale = 1", "new_text": "scale = 10"}
    ink = asked(fake_server, start_ink, "edit", edit, "+    scale = 10")
    screen = ink.text()
    assert "@@ -1,3 +1,3 @@" in screen  # the file's own hunk, not old_text against new_text
    assert " def area(w, h):" in screen and "     return w * h * scale" in screen  # its context
    assert char_at(ink, "-    scale = 1").fg == "red" and char_at(ink, "+    scale = 10").fg == "green"
    [changed_a, changed_b] = chars_of(ink, "+    scale = 10", "10")
    kept = chars_of(ink, "+    scale = 10", "scale")[0]
    assert changed_a.bg == changed_b.bg != kept.bg  # the changed word is marked, not the whole line alike
    assert kept.bg != "default"  # an added line is shaded
    [keyword] = chars_of(ink, " def area(w, h):", "d")
    [name] = chars_of(ink, " def area(w, h):", "a")
    assert keyword.fg not in ("default", name.fg)  # highlighted as Python
    shown = answer_yes(ink, "✓ edit calc.py")
    assert (project / "calc.py").read_text().count("scale = 10") == 1
    assert "✓ edit calc.py" in shown and "+    scale = 10" in shown  # the result's diff, printed too
    after = chars_of(ink, "+    scale = 10", "10")[0]
    assert after.bg != chars_of(ink, "+    scale = 10", "scale")[0].bg  # and its words marked


def test_overwriting_a_file_shows_the_diff_against_its_old_content_before_and_after(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / "notes.md").write_text("one\ntwo\nthree\n")
    write = {"path": "notes.md", "content": "one\n2\nthree\n"}
    ink = asked(fake_server, start_ink, "write", write, "+2")
    screen = ink.text()
    assert "-two" in screen and " one" in screen and "+one" not in screen  # a diff, not the whole file as +
    shown = answer_yes(ink, "✓ write notes.md")
    assert "✓ write notes.md" in shown
    result = shown[shown.index("✓ write notes.md") :]
    assert "-two" in result and "+2" in result  # the change it made, after it ran


def test_at_40_columns_a_long_changed_line_is_wrapped_inside_the_question(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """Graceful layout at 40 columns (issue 12): the diff's rows are wrapped by ink, indented, within the
    width, never cut or left to the terminal's own wrapping."""
    (project / "msg.py").write_text("greeting = 'hello'\n")
    new = "greeting = 'hello there, this line is longer than forty columns'"
    fake_server.script(
        Reply(
            [
                tool_call(
                    "edit", {"path": "msg.py", "old_text": "greeting = 'hello'", "new_text": new}, id="c1"
                )
            ]
        ),
        say("Done."),
    )
    ink = start_ink(permission_mode="ask")
    ink.child.setwinsize(30, 40)
    ink.screen.resize(30, 40)
    ink.columns = 40
    ink.type_line("longer")
    ink.wait_text("allow edit?")
    ink.wait_text("+greeting = 'hello there, this")
    lines = ink.lines()
    top = next(i for i, line in enumerate(lines) if line.startswith("  --- a/msg.py")) - 1
    keys = next(i for i, line in enumerate(lines) if line.lstrip().startswith(("y  allow once", "y  once")))
    rows = [line for line in lines[top + 1 : keys] if line]
    assert all(line.startswith("  ") and len(line) <= 40 for line in rows), rows
    added = next(i for i, line in enumerate(rows) if "+greeting" in line)
    assert new in "".join(row[2:] for row in rows[added : added + 3])[1:]  # the rest on the rows below


def test_a_new_files_preview_names_it_as_its_result_does(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """Issue 30: the write preview named b//abs/path/newfile.py while the diff after it said a/newfile.py."""
    ink = asked(fake_server, start_ink, "write", {"path": "newfile.py", "content": "x = 1\n"}, "+x = 1")
    screen = ink.text()
    question = screen[screen.index("allow write?") :]
    assert "+++ b/newfile.py" in question and "b//" not in question and str(project) not in question
    shown = answer_yes(ink, "✓ write newfile.py")
    assert "+++ b/newfile.py" in shown[shown.index("✓ write newfile.py") :]
