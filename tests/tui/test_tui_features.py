"""Keys and completion a daily user reaches for (issue 12): Shift+Tab switches the permission mode,
Tab completes paths after @ (the file then goes with the prompt), commands' arguments and names,
prompt history per project across sessions, Ctrl+G writes the input in $EDITOR."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk

SHIFT_TAB, TAB, UP, CTRL_G, CTRL_C = "\x1b[Z", "\t", "\x1b[A", "\x07", "\x03"


def test_shift_tab_cycles_the_permission_mode_shown_in_the_status_line(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(Reply([tool_call("bash", {"command": "touch made-it"}, id="c1")]), say("Made."))
    ink = start_ink(permission_mode="ask")
    ink.wait_for(lambda: "ask · gpt-4.1" in ink.text(), what="the mode in the status line")
    ink.send(SHIFT_TAB)
    ink.wait_text("accept-edits · gpt-4.1")
    ink.send(SHIFT_TAB)
    ink.wait_text("yolo · gpt-4.1")
    ink.type_line("make it")  # yolo: the command runs without a question
    ink.wait_text("Made.")
    assert (project / "made-it").exists()
    assert "allow bash?" not in "\n".join(ink.scrollback())
    ink.send(SHIFT_TAB)
    ink.wait_text("ask · gpt-4.1")


def test_at_and_tab_complete_a_path_and_the_file_goes_with_the_prompt(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "parser_main.py").write_text("def parse():\n    return 42\n")
    (project / "build").mkdir()
    (project / "build" / "out.txt").write_text("generated")
    (project / ".gitignore").write_text("build/\n")
    fake_server.script(say("Read it."))
    ink = start_ink()
    ink.send("look at @sr")
    ink.wait_text("@sr")
    ink.send(TAB)
    ink.wait_for(lambda: ink.editor_text() == "look at @src/", what="the folder completed")
    ink.send("pa" + TAB)
    ink.wait_for(lambda: ink.editor_text() == "look at @src/parser_main.py", what="the file completed")
    ink.send("\r")
    ink.wait_text("Read it.")
    [prompt] = fake_server.requests[0].user_texts()
    assert prompt.startswith("look at @src/parser_main.py")
    assert "return 42" in prompt  # the file's text went with it
    ink.wait_printed("› look at @src/parser_main.py  (+1 attached)")
    ink.send("@bu" + TAB)  # ignored by .gitignore: nothing to complete
    ink.wait_text("@bu")
    ink.wait_for(lambda: ink.editor_text() == "@bu", what="no completion for an ignored folder")


def test_prompt_history_is_kept_per_project_across_sessions(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(say("First."), say("Second."))
    ink = start_ink()
    ink.type_line("remember this prompt")
    ink.wait_text("First.")
    ink.type_line("/quit")
    assert ink.wait_exit() == 0
    again = start_ink()
    again.send(UP)
    again.wait_for(lambda: again.editor_text() == "/quit", what="the last session's last input")
    again.send(UP)
    again.wait_for(lambda: again.editor_text() == "remember this prompt", what="the one before")
    again.send(CTRL_C)
    again.wait_for(lambda: again.input_line() == "›", what="the input cleared")
    again.send("rem" + UP)  # with text: the earlier prompts that start with it
    again.wait_for(lambda: again.editor_text() == "remember this prompt", what="found by its start")


def test_ctrl_g_writes_the_input_in_the_editor(start_ink: StartInk, tmp_path: Path) -> None:
    editor = tmp_path / "fake-editor"
    editor.write_text('#!/bin/sh\nprintf "written in the editor" > "$1"\n')
    editor.chmod(0o755)
    ink = start_ink(env={"EDITOR": str(editor)})
    ink.send("draft")
    ink.wait_text("draft")
    ink.send(CTRL_G)
    ink.wait_for(lambda: ink.editor_text() == "written in the editor", what="the editor's text back")


def test_an_image_mention_goes_as_image_content_or_is_refused_plainly(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    )
    (project / "shot.png").write_bytes(png)
    fake_server.script(say("A red dot."), say("Only text here."))
    ink = start_ink()
    ink.type_line("what is in @shot.png")
    ink.wait_text("A red dot.")
    ink.wait_printed("› what is in @shot.png  (+1 attached)")
    user = fake_server.requests[0].body["messages"][-1]
    assert user["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
    }
    ink.type_line("/model o3-mini")  # a model that takes no images: told, and only the text goes
    ink.wait_text("model: o3-mini")
    ink.type_line("and @shot.png")
    ink.wait_text("Only text here.")
    ink.wait_printed("shot.png: o3-mini does not take images; the image was not sent", whole_line=False)
    assert fake_server.requests[1].body["messages"][-1]["content"] == "and @shot.png"
