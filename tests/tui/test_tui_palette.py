"""The palette (issue 30, discoverability): ``/`` opens a menu of commands with what each does, filtered
fuzzily as you type (custom commands included); ``@`` finds a file anywhere in the workspace by a part
of its name (.gitignore honoured); Esc closes the menu and interrupts nothing, while Esc with no menu
open still interrupts a run (R17)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from ink.frontends.tui.file_index import FileIndex, walk
from ink.frontends.tui.fuzzy import rank
from ink.frontends.tui.palette import context_of
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal
from tests.waiting import poll_until

TAB, ESC, DOWN = "\t", "\x1b", "\x1b[B"


def menu_rows(ink: InkTerminal) -> list[str]:
    """The rows between the live area and the rule above the input that look like menu entries."""
    lines = ink.lines()
    rules = [i for i, line in enumerate(lines) if line and set(line) == {"─"}]
    if not rules:
        return []
    rows = []
    for line in reversed(lines[: rules[-1]]):
        if not line.startswith(("  /", "› /", "  @", "› @", "  gpt", "› gpt")):
            break
        rows.append(line)
    return rows[::-1]


def test_slash_opens_a_menu_of_commands_filtered_as_you_type(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / ".ink" / "commands").mkdir(parents=True)
    (project / ".ink" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: FILE\n---\nReview $ARGUMENTS.\n"
    )
    fake_server.script(say("Reviewed."))
    ink = start_ink()
    ink.send("/")
    ink.wait_for(
        lambda: any("/help" in row and "keys and commands" in row for row in menu_rows(ink)), what="menu"
    )
    assert re.search(r"↑↓ choose \(1/\d+\) · tab pick · enter run · esc close", ink.text())
    ink.send("rvw")  # fuzzy: the letters in order
    ink.wait_for(
        lambda: menu_rows(ink)[:1] == ["› /review FILE  Review a file for bugs"], what="/review first"
    )
    ink.send(ESC)  # closes the menu; the text stays
    ink.wait_for(
        lambda: not menu_rows(ink) and ink.editor_text() == "/rvw" and "○ idle" in ink.text(),
        what="the menu closed, the text kept",
    )
    ink.send(TAB)  # opens it again, then picks
    ink.wait_for(lambda: bool(menu_rows(ink)), what="the menu again")
    ink.send(TAB)
    ink.wait_for(lambda: ink.editor_text() == "/review", what="the name picked")
    ink.wait_text("/review · Review a file for bugs")  # the status line says what it does
    ink.send("app.py\r")
    ink.wait_text("Reviewed.")
    assert fake_server.requests[0].user_texts() == ["Review app.py."]
    ink.send("/hel\r")  # Enter runs the chosen command
    ink.wait_printed("Keys:")


def test_esc_closes_the_menu_without_interrupting_and_esc_again_interrupts(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("Working on it."), gate, text(" Done.")]))
    ink = start_ink()
    ink.type_line("go")
    gate.wait_reached()
    ink.send("/mo")
    ink.wait_for(lambda: any("/model" in row for row in menu_rows(ink)), what="the menu while running")
    ink.send(ESC)  # R17 is for Esc with no menu open: this one only closes the menu
    ink.wait_for(
        lambda: not menu_rows(ink) and ink.editor_text() == "/mo" and "↑↓ choose" not in ink.text(),
        what="the menu closed, the text kept",
    )
    assert "● running" in ink.text()
    assert fake_server.requests[0].outcome == "in_progress"
    ink.send(ESC)  # no menu open: interrupts (R17)
    ink.wait_text("⏹ interrupted")
    assert fake_server.requests[0].wait_finished() == "client_left"


def test_at_finds_a_file_anywhere_by_a_part_of_its_name(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / "src" / "ink" / "ai").mkdir(parents=True)
    (project / "src" / "ink" / "ai" / "models.py").write_text("MODELS = ['m1']\n")
    (project / "docs").mkdir()
    (project / "docs" / "modes.md").write_text("modes\n")
    (project / "build").mkdir()
    (project / "build" / "models.py").write_text("generated\n")
    (project / ".gitignore").write_text("build/\n")
    fake_server.script(say("Read it."))
    ink = start_ink()
    ink.send("look at @models")
    ink.wait_for(lambda: any("@src/ink/ai/models.py" in row for row in menu_rows(ink)), what="the file")
    assert not any("build/" in row for row in menu_rows(ink))  # ignored by .gitignore
    assert menu_rows(ink)[0].startswith("› @src/ink/ai/models.py")  # the name matches: first
    ink.send(TAB)
    ink.wait_for(lambda: ink.editor_text() == "look at @src/ink/ai/models.py", what="the path picked")
    ink.send("\r")
    ink.wait_text("Read it.")
    [prompt] = fake_server.requests[0].user_texts()
    assert "MODELS = ['m1']" in prompt  # the file went with the prompt


def test_enter_after_at_sends_as_typed_unless_an_entry_was_chosen(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / "notes.md").write_text("n\n")
    (project / "names.md").write_text("m\n")
    fake_server.script(say("Sent."))
    ink = start_ink()
    ink.send("@n")
    ink.wait_for(lambda: len(menu_rows(ink)) == 2, what="two files")
    ink.send(DOWN + "\r")  # chosen with the arrows: Enter picks it, and sends nothing
    ink.wait_for(lambda: ink.editor_text() == "@notes.md", what="the chosen file")
    assert not fake_server.requests
    ink.send("please\r")  # the pick ended the word with a space
    ink.wait_text("Sent.")
    assert fake_server.requests[0].user_texts()[0].startswith("@notes.md please")


def test_the_menu_fits_a_40_column_terminal(start_ink: StartInk, project: Path) -> None:
    (project / ".ink" / "commands").mkdir(parents=True)
    (project / ".ink" / "commands" / "wide.md").write_text(
        "---\ndescription: A command whose description is much longer than forty columns\n---\nx\n"
    )
    ink = start_ink(columns=40)
    ink.send("/w")
    ink.wait_for(lambda: any("/wide" in row for row in menu_rows(ink)), what="the menu")
    [row] = [r for r in menu_rows(ink) if "/wide" in r]
    assert row.endswith("…") and len(row) <= 40  # cut to the width with a mark, never wrapped
    lines = ink.lines()
    below = lines[lines.index(row) + 1]
    assert below.startswith(("  /", "› /", "─")), below  # no wrapped rest of the row


# -- the parts, without a terminal ---------------------------------------------------------------


def test_fuzzy_ranking_puts_the_name_first() -> None:
    paths = ["docs/modes.md", "src/ink/frontends/models.py", "src/ink/ai/models.py", "tests/test_models.py"]
    ranked = rank("models", paths, str, 10)
    assert ranked[:2] == ["src/ink/ai/models.py", "src/ink/frontends/models.py"]
    assert rank("mdls", paths, str, 10)[0] == "src/ink/ai/models.py"
    assert rank("zz", paths, str, 10) == []
    assert rank("mo", ["model", "modes", "mcp_tool", "compact"], str, 10) == ["model", "modes", "mcp_tool"]


def test_the_menu_context_of_the_text_before_the_cursor() -> None:
    arguments = {"model": None}
    assert context_of("/mo", arguments) == context_of("/mo", {})  # a name
    assert context_of("/model gpt", arguments) is not None
    assert context_of("/model gpt", {}) is None  # no values for it
    assert context_of("//tmp", arguments) is None
    assert context_of("see @src/a", arguments) is not None
    assert context_of("see @src/a ", arguments) is None  # a space ends the word
    assert context_of("mail me@x", arguments) is None


def test_the_walk_is_bounded_breadth_first_and_honours_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "x.py").write_text("")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "y.py").write_text("")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    for i in range(50):
        (deep / f"f{i}.py").write_text("")
    (tmp_path / "top.py").write_text("")
    (tmp_path / "a" / "loop").symlink_to(tmp_path)  # a symlinked folder is listed, never entered
    found, cut = walk(tmp_path, 10_000, 10.0, time.monotonic)
    assert not cut and "top.py" in found and "a/b/f7.py" in found and "a/loop" in found
    assert not any(p.startswith(("ignored", ".venv", "a/loop/")) for p in found)
    found, cut = walk(tmp_path, 5, 10.0, time.monotonic)
    assert cut and found[:2] == ["a/", "top.py"]  # shallow first: the capped walk keeps the top


def test_the_index_answers_at_once_and_walks_in_a_thread(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text("")
    done: list[bool] = []
    walking = threading.Event()

    def clock() -> float:  # holds the walk (in its thread) until the test has asked
        if threading.current_thread() is not threading.main_thread():
            walking.wait(10)
        return time.monotonic()

    index = FileIndex(tmp_path, lambda: done.append(True), clock=clock)
    assert index.paths() == ()  # nothing known yet: never waits for the walk
    assert index.walking
    walking.set()
    poll_until(lambda: done, what="the walk's end")
    assert index.paths() == ("one.py",)
