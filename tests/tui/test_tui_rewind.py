"""Issue 14 in the TUI, in a pseudo-terminal: Esc Esc on an empty input (or ``/rewind``) opens the list of
inputs, newest first, with the files each run changed; Enter rewinds files and conversation (the input
comes back into the editor), ``f`` the files only, ``c`` the conversation only; files changed outside ink
are named and overwritten only after ``y``. The real ``ink`` and bash against the fake model server."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, call, say
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal

ESC = "\x1b"
EDITS = "echo edited > notes.txt; rm doomed.txt; echo new > made.txt"


def after_one_changing_run(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path, *later: Reply
) -> InkTerminal:
    """ink, idle after "change the files" ran ``EDITS`` through bash; ``later`` replies come next."""
    (project / "notes.txt").write_text("original\n")
    (project / "doomed.txt").write_text("doomed\n")
    fake_server.script(call("bash", {"command": EDITS}), say("All changed."), *later)
    ink = start_ink()
    ink.type_line("change the files")
    ink.wait_text("All changed.")
    ink.wait_text("○ idle")
    return ink


def test_esc_esc_opens_the_list_and_enter_rewinds_files_and_conversation(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    ink = after_one_changing_run(fake_server, start_ink, project, say("Second answer."))
    ink.type_line("just talk")
    ink.wait_text("Second answer.")
    ink.wait_text("○ idle")
    ink.send(ESC)
    ink.send(ESC)
    ink.wait_text("rewind to just before")
    ink.wait_text("3 files: doomed.txt, made.txt, notes.txt")  # what the first run changed
    ink.wait_text("no files changed")
    lines = ink.lines()
    newest = next(i for i, line in enumerate(lines) if "just talk" in line and "ago" in line)
    oldest = next(i for i, line in enumerate(lines) if "change the files" in line and "ago" in line)
    assert newest < oldest and lines[newest].startswith("› ")  # newest first, and chosen
    ink.send("x")  # swallowed while the list is open: nothing types into the editor behind it
    ink.send("\x1b[B")  # Down: the older input
    ink.wait_for(lambda: ink.lines()[oldest].startswith("› "), what="the older input chosen")
    ink.send("\r")
    ink.wait_text("⟲ rewound to just before “change the files”")
    ink.wait_for(lambda: ink.editor_text() == "change the files\n\njust talk", what="both inputs back")
    assert (project / "notes.txt").read_text() == "original\n"
    assert (project / "doomed.txt").read_text() == "doomed\n" and not (project / "made.txt").exists()
    shown = "\n".join(ink.scrollback())
    assert "2 files restored, 1 removed" in shown


def test_slash_rewind_files_only_keeps_the_conversation_and_can_be_undone(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    ink = after_one_changing_run(fake_server, start_ink, project, say("Still here."))
    ink.type_line("/rewind")
    ink.wait_text("rewind to just before")
    ink.send("f")
    ink.wait_text("files restored")
    assert not (project / "made.txt").exists() and ink.editor_text() == ""
    ink.type_line("/rewind")  # the rewind itself is the newest entry: choosing it undoes the rewind
    ink.wait_text("before the rewind to: change the files")
    ink.send("\r")

    def undone() -> bool:  # git writes made.txt back first, then notes.txt
        return (project / "made.txt").exists() and (project / "notes.txt").read_text() == "edited\n"

    ink.wait_for(undone, what="the rewind undone")
    assert (project / "notes.txt").read_text() == "edited\n"
    ink.type_line("and now?")
    ink.wait_text("Still here.")
    assert fake_server.user_texts()[-1] == ["change the files", "and now?"]  # the conversation was kept


def test_files_changed_outside_ink_are_named_and_overwritten_only_after_y(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    ink = after_one_changing_run(fake_server, start_ink, project)
    ink.type_line("/rewind")  # the list opens once the run's end snapshot is taken
    ink.wait_text("3 files: doomed.txt, made.txt, notes.txt")
    ink.send(ESC)
    ink.wait_for(lambda: "rewind to just before" not in ink.text(), what="the list closed")
    (project / "made.txt").write_text("my own words\n")
    ink.send(ESC)
    ink.send(ESC)
    ink.wait_text("rewind to just before")
    ink.send("f")
    ink.wait_text("1 file changed outside ink would be overwritten")
    ink.wait_text("made.txt")
    ink.send("n")
    ink.wait_text("rewind cancelled: nothing was changed")
    assert (project / "made.txt").read_text() == "my own words\n"
    ink.send(ESC)
    ink.send(ESC)
    ink.wait_text("rewind to just before")
    ink.send("f")
    ink.wait_text("changed outside ink would be overwritten")
    ink.send("y")
    ink.wait_for(lambda: not (project / "made.txt").exists(), what="the overwrite")
    ink.wait_text("files restored")


def test_an_interrupted_run_names_the_files_it_changed_and_esc_esc_rewinds_them(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path, marks: Path
) -> None:
    started = marks / "started"
    fake_server.script(call("bash", {"command": f"echo x > made.txt; echo up > {started}; sleep 60"}))
    ink = start_ink()
    ink.type_line("slow work")
    ink.wait_for(started.exists, what="the command to start")
    ink.send(ESC)
    ink.wait_text("the run changed 1 file: made.txt · esc esc rewinds")
    ink.wait_text("○ idle")
    ink.send(ESC)
    ink.send(ESC)
    ink.wait_text("rewind to just before")
    ink.send("\r")
    ink.wait_text("⟲ rewound to just before “slow work”")
    assert not (project / "made.txt").exists()
    ink.wait_for(lambda: ink.editor_text() == "slow work", what="the input back in the editor")


def test_the_list_says_what_was_typed_offers_no_cut_input_and_the_rewind_line_comes_first(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """Issue 30: the list showed the attachment envelope (<attached path=…>) of a prompt with a mention
    and offered inputs an earlier rewind had cut; "inputs put back" printed before the "rewound" line."""
    (project / "notes.txt").write_text("some notes\n")
    fake_server.script(say("First."), say("Second."), say("Third."))
    ink = start_ink()
    ink.type_line("read @notes.txt")
    ink.wait_text("First.")
    ink.type_line("second input")
    ink.wait_text("Second.")
    ink.type_line("third input")
    ink.wait_text("Third.")
    ink.wait_text("○ idle")
    ink.type_line("/rewind")
    ink.wait_text("rewind to just before")
    listed = "\n".join(line for line in ink.lines() if " ago" in line)  # the list's rows
    assert "<attached" not in listed and "read @notes.txt" in listed and "third input" in listed
    ink.send("\x1b[B")  # Down: "second input"
    ink.wait_for(lambda: any(line.startswith("› second input") for line in ink.lines()), what="chosen")
    ink.send("c")  # the conversation only
    ink.wait_printed("⟲ rewound to just before “second input”", whole_line=False)
    ink.wait_for(lambda: ink.editor_text() == "second input\n\nthird input", what="the inputs back")
    shown = ink.scrollback()
    rewound = next(i for i, line in enumerate(shown) if "⟲ rewound" in line)
    put_back = next(i for i, line in enumerate(shown) if "put back in the editor" in line)
    assert rewound < put_back
    ink.send("\x03")  # Ctrl+C, idle: the input cleared
    ink.wait_for(lambda: ink.input_line() == "›", what="the editor emptied")
    ink.type_line("/rewind")
    ink.wait_text("rewind to just before")
    listed = "\n".join(line for line in ink.lines() if " ago" in line)  # the list's rows
    assert "read @notes.txt" in listed and "second input" not in listed and "third input" not in listed
