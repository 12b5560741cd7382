"""Issue 30, light terminals: ``theme = "dark" | "light" | "auto"`` (auto asks the terminal for its
background), a light theme whose code and diffs read on a white background, ``NO_COLOR`` honoured, and
a code theme that is not fixed to monokai (``code_theme``)."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal, char_at

REPLY = "Code:\n\n```python\nvalue = compute(1)\n```\n\nDone."
WHITE, BLACK = "ffff/ffff/ffff", "0000/0000/0000"


def brightness(color: str) -> float:
    """0 (black) to 1 (white) for pyte's hex colours; None-like names count as the default."""
    if len(color) != 6:
        return -1.0
    red, green, blue = (int(color[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def code_and_diff(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path, **options: object
) -> InkTerminal:
    """A reply with code, then a write's question with its diff on screen."""
    (project / "notes.py").write_text("value = 1\n")
    fake_server.script(
        say(REPLY),
        Reply([tool_call("write", {"path": "notes.py", "content": "value = 2\n"}, id="w1")]),
        say("Written."),
    )
    ink = start_ink(permission_mode="ask", **options)
    ink.type_line("show code")
    ink.wait_printed("Done.")
    ink.type_line("change it")
    ink.wait_text("+value = 2")
    return ink


def test_the_light_theme_reads_on_a_white_terminal(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    ink = code_and_diff(fake_server, start_ink, project, config='theme = "light"\n')
    code = char_at(ink, "compute")
    assert brightness(code.fg) < 0.7  # monokai's text was near white (f8f8f2): unreadable on white
    added = char_at(ink, "+value = 2")
    assert brightness(added.bg) > 0.8  # a light green shade, not a dark one
    context = char_at(ink, "--- a/notes.py")
    assert brightness(context.fg) < 0.9


def test_auto_asks_the_terminal_and_follows_its_background(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    ink = code_and_diff(fake_server, start_ink, project, background=WHITE)
    assert brightness(char_at(ink, "compute").fg) < 0.7
    assert brightness(char_at(ink, "+value = 2").bg) > 0.8


def test_auto_on_a_dark_terminal_and_without_an_answer_is_dark(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    ink = code_and_diff(fake_server, start_ink, project, background=BLACK)
    assert brightness(char_at(ink, "+value = 2").bg) < 0.3  # a dark green shade


def test_no_color_means_no_colour_at_all(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    ink = code_and_diff(fake_server, start_ink, project, env={"NO_COLOR": "1"})
    colours = {
        (char.fg, char.bg)
        for row in range(ink.rows)
        for char in ink.screen.buffer[row].values()
        if char.data.strip()
    }
    assert colours == {("default", "default")}
    ink.answer("n")
    ink.wait_text("Written.")


def test_code_theme_picks_the_style_of_code(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    fake_server.script(say(REPLY), say(REPLY))
    dark = start_ink(config='theme = "dark"\n')
    dark.type_line("show code")
    dark.wait_printed("Done.")
    monokai = char_at(dark, "compute").fg
    other = start_ink(config='theme = "dark"\ncode_theme = "vim"\n')
    other.type_line("show code")
    other.wait_printed("Done.")
    assert char_at(other, "compute").fg != monokai
