"""Custom slash commands (docs/commands.md): files in .ink/commands/ and $INK_HOME/commands/ become
``/name args``, the same through the TUI (a real pty), RPC and ACP."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ink.config.commands import CustomCommand, load_commands
from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.rpc.conftest import StartRpc
from tests.tui.conftest import StartInk

REVIEW = """---
description: Review a file for bugs
argument-hint: FILE
---
Review $ARGUMENTS for bugs. Start with $1.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_project_and_user_commands_load_and_the_project_wins(tmp_path: Path) -> None:
    home, project = tmp_path / "inkhome", tmp_path / "proj"
    write(home / "commands" / "review.md", "user review $ARGUMENTS")
    write(home / "commands" / "mine.md", "only mine")
    write(project / ".ink" / "commands" / "review.md", REVIEW)
    write(project / ".ink" / "commands" / "git" / "commit.md", "commit it")
    write(project / ".ink" / "commands" / "broken.md", "---\nthis is not a key value\n---\nbody")
    book = load_commands(project, home)
    assert sorted(book.commands) == ["git:commit", "mine", "review"]
    assert book.commands["review"].scope == "project"
    assert book.commands["review"].description == "Review a file for bugs"
    assert [w for w in book.warnings if "broken" in w and ":2:" in w]  # reported with its line, skipped
    expansion = book.expand("/review a.py b.py")
    assert expansion is not None and expansion.text == "Review a.py b.py for bugs. Start with a.py."
    assert book.expand("/review a.py", reserved=["review"]) is None  # the frontend's own command wins
    assert book.expand("//review a.py") is None and book.expand("/nope x") is None
    assert book.expand("plain text") is None


def test_a_body_without_placeholder_keeps_the_arguments() -> None:
    command = CustomCommand("fix", "Fix the tests.", Path("fix.md"), "user")
    assert command.expand("") == "Fix the tests."
    assert command.expand("only unit ones") == "Fix the tests.\n\nARGUMENTS: only unit ones"


@given(st.text(min_size=1).filter(lambda s: s.strip()))
def test_the_arguments_arrive_verbatim(arguments: str) -> None:
    """Hostile arguments (quotes, $1, $ARGUMENTS, newlines) are inserted as they are, never re-expanded."""
    command = CustomCommand("x", "<<$ARGUMENTS>>", Path("x.md"), "user")
    assert command.expand(arguments) == f"<<{arguments.strip()}>>"


def test_a_custom_command_through_rpc(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    write(project / ".ink" / "commands" / "review.md", REVIEW)
    fake_server.script(say("Looks fine."), say("ok"))
    ink = start_rpc()
    ink.ok("prompt", text="/review notes.txt")
    ink.wait_event("run_end", stopReason="completed")
    assert fake_server.requests[0].user_texts() == ["Review notes.txt for bugs. Start with notes.txt."]
    mark = ink.mark()
    ink.ok("prompt", text="/unknown stays text")  # not a command: sent as it is
    ink.wait_event("run_end", stopReason="completed", after=mark)
    assert fake_server.requests[1].user_texts()[-1] == "/unknown stays text"


def test_allowed_tools_limit_what_the_model_may_call(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    look = "---\nallowed-tools: Read, Grep\n---\nLook at $ARGUMENTS"
    write(project / ".ink" / "commands" / "look.md", look)
    fake_server.script(
        Reply([tool_call("read", {"path": "notes.txt"}, id="c1")]),
        Reply([tool_call("bash", {"command": "echo hi > out.txt"}, id="c2")]),
        say("done"),
    )
    ink = start_rpc("--permission-mode", "yolo")
    ink.ok("prompt", text="/look notes.txt")
    ink.wait_event("run_end", stopReason="completed")
    [(_, read)] = fake_server.requests[1].tool_results()
    assert "the secret is 42" in read
    _, refused = fake_server.requests[2].tool_results()[-1]
    assert "the /look command allows only these tools: grep, read" in refused
    assert not (project / "out.txt").exists()


def test_a_custom_command_with_arguments_in_the_tui(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    write(project / ".ink" / "commands" / "review.md", REVIEW)
    fake_server.script(say("Reviewed it."))
    ink = start_ink()
    ink.send("/hel")
    ink.send("\t")  # completion: the built-in /help comes first
    ink.wait_for(lambda: ink.input_line().endswith("/help"), what="/help completed")
    ink.send("\r")
    ink.wait_text("/review FILE")  # /help lists the custom command with its hint and description
    ink.wait_text("Review a file for bugs")
    ink.send("/rev")
    ink.send("\t")
    ink.wait_for(lambda: ink.input_line().endswith("/review"), what="/review completed")
    ink.type_line(" parser.py")
    ink.wait_text("Reviewed it.")
    assert fake_server.requests[0].user_texts() == ["Review parser.py for bugs. Start with parser.py."]


def test_acp_advertises_the_commands_and_runs_them(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    write(project / ".ink" / "commands" / "review.md", REVIEW)
    fake_server.script(say("Reviewed."))
    ink = start_acp()
    session = open_session(ink, project)
    update = ink.wait_update("available_commands_update")
    commands = update["availableCommands"]
    review = {"name": "review", "description": "Review a file for bugs", "input": {"hint": "FILE"}}
    assert commands[0] == review and [c["name"] for c in commands] == ["review", "rewind"]  # ink's own last
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("/review a.py"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert fake_server.user_texts() == [["Review a.py for bugs. Start with a.py."]]
