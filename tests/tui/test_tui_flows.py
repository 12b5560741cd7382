"""The TUI in a pseudo-terminal: permission questions, redirect, bang lines, failures, tool output,
slash commands and sessions. The real ``ink`` against the fake model server; waits are on the screen."""

from __future__ import annotations

from pathlib import Path

from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, say, text, thinking, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import char_at

CTRL_C, CTRL_O, CTRL_R = "\x03", "\x0f", "\x12"


def test_a_permission_question_shows_the_command_and_takes_y_or_n(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """Issue 7: inline prompt, allow once / deny; a denial is the call's error result and the run goes on."""
    fake_server.script(
        Reply([tool_call("bash", {"command": "echo allowed-ran"}, id="c1")]),
        Reply([tool_call("bash", {"command": "rm -rf build"}, id="c2")]),
        say("Understood."),
    )
    ink = start_ink(permission_mode="ask")
    ink.type_line("clean up")
    ink.wait_text("allow bash?")
    ink.wait_text("echo allowed-ran")
    # issue 30: the call waits, it does not run meanwhile; "always" says the rule it would store
    ink.wait_text("? bash echo allowed-ran · waiting for your answer")
    ink.wait_text("a: always allow stores the rule bash(echo *) for this project")
    ink.send("x")  # not an answer: typed into the editor, and then y types too
    ink.wait_for(lambda: ink.editor_text() == "x", what="the x typed")
    ink.send("\x7f")
    ink.answer("y")
    ink.wait_text("✓ bash echo allowed-ran")
    ink.wait_text("allow bash?")
    ink.wait_text("rm -rf build")
    ink.answer("n")
    ink.wait_text("Understood.")
    ink.wait_text("○ idle")
    shown = "\n".join(ink.scrollback())
    assert "bash echo allowed-ran: allowed once" in shown and "bash rm -rf build: denied" in shown
    ink.wait_for(lambda: ink.input_line() == "›", what="an empty editor")
    [(_, first)] = fake_server.requests[1].tool_results()
    _, second = fake_server.requests[2].tool_results()[-1]
    assert "allowed-ran" in first
    assert second.startswith("Not executed")
    assert not (project / "build").exists()


def test_ctrl_r_interrupts_and_redirects(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    """R24: the current work stops, and the new instruction runs next with what was done kept."""
    gate = Gate()
    fake_server.script(Reply([text("Going the wrong way"), gate]), say("Going the right way."))
    ink = start_ink()
    ink.type_line("do the thing")
    gate.wait_reached()
    ink.send("do the other thing")
    ink.wait_text("do the other thing")
    ink.send(CTRL_R)
    ink.wait_text("Going the right way.")
    ink.wait_printed("⏹ interrupted: redirecting", whole_line=False)
    texts = fake_server.requests[1].user_texts()
    assert texts[0] == "do the thing" and texts[-1] == "do the other thing"
    assert "[interrupted by the user]" in texts  # R23
    ink.wait_text("○ idle")


def test_a_bang_line_runs_in_the_shell_and_shows_its_output(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    ink = start_ink()
    ink.type_line("!echo from-the-shell; exit 3")
    ink.wait_text("$ echo from-the-shell; exit 3")
    ink.wait_text("exit status 3")
    ink.wait_printed("  from-the-shell")
    assert fake_server.requests == []  # R14: never sent to the model


def test_a_failure_shows_the_providers_message_and_continue_retries(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(Fault.http(400, "The model `nope` does not exist"), say("Back on track."))
    ink = start_ink()
    ink.type_line("hello")
    ink.wait_text("the run failed")
    shown = "\n".join(ink.scrollback())
    assert "The model `nope` does not exist" in shown and "type `continue`" in shown
    assert char_at(ink, "✗ the run failed").fg == "red"
    ink.wait_text("○ idle")
    ink.type_line("continue")
    ink.wait_text("Back on track.")
    assert fake_server.requests[1].user_texts() == ["hello", "continue"]


def test_tool_output_is_folded_and_ctrl_o_shows_all_of_it(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(Reply([tool_call("bash", {"command": "seq 101 130"}, id="c1")]), say("Counted."))
    ink = start_ink()
    ink.type_line("count")
    ink.wait_text("Counted.")
    ink.wait_text("more lines (ctrl+o to expand)")
    assert "  130" not in ink.scrollback()
    assert char_at(ink, "✓ bash seq 101 130").fg == "green"
    ink.send(CTRL_O)
    ink.wait_text("  130")


def test_thinking_is_dimmed_and_errors_are_red(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    fake_server.script(
        Reply([thinking("Pondering the file"), tool_call("read", {"path": "missing.txt"}, id="c1")]),
        say("No such file."),
    )
    ink = start_ink()
    ink.type_line("read it")
    ink.wait_text("No such file.")
    assert char_at(ink, "Pondering the file").italics
    assert char_at(ink, "✗ read missing.txt · error").fg == "red"


def test_the_first_prompt_can_come_on_the_command_line(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(say("Hello from the start."))
    ink = start_ink("say hello", wait_ready=False)
    ink.wait_text("Hello from the start.")
    ink.wait_printed("› say hello")


def test_model_and_modes_commands(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    fake_server.script(say("ok"))
    ink = start_ink()
    ink.type_line("/model gpt-4.1-mini")
    ink.wait_text("model: gpt-4.1-mini")
    ink.type_line("/modes steer one-at-a-time follow-up all")
    ink.wait_text("steer: one-at-a-time · follow-up: all")
    ink.type_line("/modes sideways")
    ink.wait_text("usage: /modes")
    ink.type_line("/nope")
    ink.wait_text("unknown command /nope")
    ink.type_line("hi")
    ink.wait_text("ok")
    assert fake_server.requests[0].body["model"] == "gpt-4.1-mini"
    ink.wait_for(lambda: "gpt-4.1-mini ·" in ink.text(), what="the status line naming the model")


def test_clear_sessions_and_resume(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    fake_server.script(say("First answer."), say("Second answer."), say("Third answer."))
    ink = start_ink()
    ink.type_line("first conversation")
    ink.wait_text("First answer.")
    ink.type_line("/clear")
    ink.wait_text("── new conversation")
    ink.type_line("second conversation")
    ink.wait_text("Second answer.")
    assert fake_server.requests[1].user_texts() == ["second conversation"]
    ink.type_line("/sessions")
    ink.wait_text("resume one with /resume ID")
    listing = [line for line in ink.scrollback() if "conversation" in line and "  " in line]
    first_id = next(line.split()[0] for line in listing if line.strip().endswith("first conversation"))
    ink.type_line(f"/resume {first_id}")
    ink.wait_text(f"── resumed session {first_id}")
    ink.type_line("and now?")
    ink.wait_text("Third answer.")
    assert fake_server.requests[2].user_texts() == ["first conversation", "and now?"]


def test_compact_summarises_the_history(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    fake_server.script(say("One."), say("Two."), say("The summary of it all."), say("After."))
    ink = start_ink()
    ink.type_line("first")
    ink.wait_text("One.")
    ink.type_line("second")
    ink.wait_text("Two.")
    ink.type_line("/compact")
    ink.wait_text("compacting the history")
    ink.wait_for(lambda: len(fake_server.requests) == 3, what="the summary request")
    ink.wait_text("○ idle")
    ink.type_line("third")
    ink.wait_text("After.")
    assert any("The summary of it all." in t for t in fake_server.requests[3].user_texts())


def test_without_a_terminal_ink_says_what_to_use_instead(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    from tests.cli.inkproc import ink_env, one_line_error, run_ink

    done = run_ink(["--base-url", fake_server.openai_base_url, "--api-key", "k"], ink_env(tmp_path), tmp_path)
    assert done.returncode == 2
    assert "needs a terminal" in one_line_error(done.stderr) and "ink -p" in done.stderr
    assert fake_server.requests == []


def test_ctrl_c_while_a_question_is_open_cancels_it_and_the_run(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """Issue 7: an abort while asking answers the question as cancelled; the call never runs."""
    fake_server.script(Reply([tool_call("bash", {"command": "touch made-it"}, id="c1")]))
    ink = start_ink(permission_mode="ask")
    ink.type_line("make a file")
    ink.wait_text("allow bash?")
    ink.send(CTRL_C)
    ink.wait_text("⏹ interrupted")
    ink.wait_text("○ idle")
    ink.wait_printed("bash touch made-it: cancelled by the interrupt")
    assert not (project / "made-it").exists()


def test_ctrl_o_names_the_call_and_walks_back_through_every_fold(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.script(
        Reply([tool_call("bash", {"command": "seq 101 130"}, id="c1")]),
        Reply([tool_call("bash", {"command": "seq 201 230"}, id="c2")]),
        say("Counted twice."),
    )
    ink = start_ink()
    ink.type_line("count twice")
    ink.wait_text("Counted twice.")
    ink.send(CTRL_O)
    ink.wait_for(lambda: "── #2 bash seq 201 230 · whole output ──" in ink.scrollback(), what="fold 2")
    ink.wait_text("  230")
    ink.send(CTRL_O)  # again: the one before
    ink.wait_for(lambda: "── #1 bash seq 101 130 · whole output ──" in ink.scrollback(), what="fold 1")
    ink.wait_text("  130")
    ink.type_line("/folds")
    ink.wait_text("show one whole with /expand N")
    shown = "\n".join(ink.scrollback())
    assert "#1    bash seq 101 130 (folded)" in shown and "#2    bash seq 201 230 (folded)" in shown
