"""The TUI in a real pseudo-terminal (issue 4 "what it must show"): typing while text streams, queueing
steers and follow-ups, interrupting with the queue handed back, the forced exit, quitting, /help.

Each test drives the real ``ink`` process with keys and reads the screen a terminal emulator renders;
the fake model server's gates hold a reply open for exactly as long as a test needs.
"""

from __future__ import annotations

import signal
import time

import psutil

from ink.frontends.tui.keys import KEYS
from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.tui.conftest import StartInk
from tests.waiting import poll_until

CTRL_C, ALT_ENTER, UP, ESC = "\x03", "\x1b\r", "\x1b[A", "\x1b"


def test_typing_while_the_reply_streams_reaches_the_editor(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    words = [text(f"w{i} ") for i in range(60)]
    fake_server.script(Reply([*words, gate, text("end.")], chunk_delay=0.02))
    ink = start_ink()
    ink.type_line("stream something")
    ink.wait_text("w3 ")  # the reply is streaming into the live area
    ink.send("typed meanwhile")
    ink.wait_for(lambda: ink.input_line() == "› typed meanwhile", what="the typed text in the editor")
    assert fake_server.requests[0].outcome == "in_progress"  # echoed while the stream was still open
    gate.open()
    ink.wait_text("end.")
    ink.wait_text("○ idle")
    ink.wait_for(lambda: ink.input_line() == "› typed meanwhile", what="the typed text kept, not sent")
    assert len(fake_server.requests) == 1


def test_enter_while_running_queues_a_steer_shown_in_the_panel(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("Working on it."), gate, text(" Done.")]), say("Tests fixed too."))
    ink = start_ink()
    ink.type_line("fix the parser")
    gate.wait_reached()
    ink.type_line("fix the tests too")
    ink.wait_text("steer      fix the tests too")  # R8: the queue is shown at once, with its mode
    ink.wait_for(lambda: ink.input_line() == "›", what="the editor emptied")
    gate.open()
    ink.wait_text("Tests fixed too.")
    assert fake_server.requests[1].user_texts() == ["fix the parser", "fix the tests too"]  # R9 (b)
    ink.wait_printed("› steer: fix the tests too")
    ink.wait_for(lambda: "queued" not in ink.text(), what="the panel to empty")


def test_alt_enter_queues_a_follow_up(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    gate = Gate()
    fake_server.script(Reply([text("First answer."), gate]), say("Second answer."))
    ink = start_ink()
    ink.type_line("question one")
    gate.wait_reached()
    ink.send("and then this")
    ink.wait_text("and then this")
    ink.send(ALT_ENTER)
    ink.wait_text("follow-up  and then this")
    gate.open()
    ink.wait_text("Second answer.")
    assert fake_server.requests[1].user_texts() == ["question one", "and then this"]  # R10: same run
    ink.wait_printed("› follow-up: and then this")


def test_up_on_an_empty_input_takes_the_last_queued_entry_back(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("Busy."), gate]), say("Got both."))
    ink = start_ink()
    ink.type_line("start")
    gate.wait_reached()
    ink.type_line("first note")
    ink.type_line("second nite")
    ink.wait_text("queued (2)")
    ink.send(UP)  # R32: edit a queued entry
    ink.wait_for(lambda: ink.input_line() == "› second nite", what="the entry back in the editor")
    ink.wait_text("queued (1)")
    ink.send("\x7f\x7f\x7fote")  # backspace three times: "second n" + "ote"
    ink.wait_text("second note")
    ink.send("\r")
    ink.wait_text("queued (2)")
    gate.open()
    ink.wait_text("Got both.")
    assert fake_server.requests[1].user_texts() == ["start", "first note", "second note"]


def test_a_follow_up_taken_back_with_up_is_queued_again_as_a_follow_up(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("Busy."), gate]), say("Later."))
    ink = start_ink()
    ink.type_line("start")
    gate.wait_reached()
    ink.send("after that, tidy")
    ink.wait_text("after that, tidy")
    ink.send(ALT_ENTER)
    ink.wait_text("follow-up  after that, tidy")
    ink.send(UP)
    ink.wait_for(lambda: ink.input_line() == "› after that, tidy", what="the follow-up back in the editor")
    ink.wait_text("enter queues it again as a follow-up")
    ink.send(" up\r")  # Enter, which queues a steer, keeps the mode the input was queued with
    ink.wait_text("follow-up  after that, tidy up")
    gate.open()
    ink.wait_text("Later.")
    ink.wait_printed("› follow-up: after that, tidy up")


def test_ctrl_c_aborts_and_the_queued_text_comes_back_into_the_editor(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("Partial answer"), gate, text(" never shown")]))
    ink = start_ink()
    ink.type_line("long task")
    gate.wait_reached()
    ink.type_line("steer me")
    ink.send("then this")
    ink.wait_text("then this")
    ink.send(ALT_ENTER)
    ink.wait_text("queued (2)")
    ink.send("still typing")
    ink.wait_text("still typing")
    ink.send(CTRL_C)
    ink.wait_text("⏹ interrupted")
    fake_server.requests[0].wait_finished()
    assert fake_server.requests[0].wait_finished() == "client_left"  # R17: the model stream was closed
    # R22, R30: in submission order, one paragraph each, before what was being typed (kept).
    ink.wait_for(lambda: ink.editor_text() == "steer me\n\nthen this\n\nstill typing", what="restored input")
    ink.wait_text("○ idle")
    scrollback = "\n".join(ink.scrollback())
    assert "Partial answer" in scrollback and "never shown" not in scrollback
    assert "error" not in scrollback.lower()  # R18: an abort is not an error
    assert len(fake_server.requests) == 1  # nothing queued was sent


def test_esc_aborts_a_running_tool(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    fake_server.script(Reply([tool_call("bash", {"command": "echo started; sleep 60"}, id="c1")]))
    ink = start_ink()
    ink.type_line("run it")
    ink.wait_text("sleep 60 · running ")
    # the command's own output: it runs (a call first waits for the workspace checkpoint, docs/rewind.md)
    ink.wait_text("│ started")
    ink.send(ESC)
    ink.wait_text("⏹ interrupted")
    ink.wait_text("○ idle")
    ink.wait_printed("⏹ bash echo started; sleep 60 · interrupted after", whole_line=False)


def test_esc_closes_the_model_stream_without_waiting_for_a_second_key(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """Issue 12: Esc used to wait 0.4 s for an Enter (Esc then Enter was Alt+Enter). Now the stream is
    closed within the escape timeout (10 ms); the bound here leaves room for a loaded machine, and
    bench/run.py tui-keys measures the real figure."""
    gate = Gate()
    fake_server.script(Reply([text("Streaming"), gate]))
    ink = start_ink()
    ink.type_line("go")
    gate.wait_reached()
    ink.wait_text("Streaming")
    sent = time.monotonic()
    ink.send(ESC)
    assert fake_server.requests[0].wait_finished() == "client_left"
    left_at = fake_server.requests[0].client_left_at
    assert left_at is not None and left_at - sent < 0.3
    ink.wait_text("⏹ interrupted")


def test_a_second_ctrl_c_while_the_abort_settles_exits_130(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """R21. The abort is slow on purpose: the command ignores SIGTERM, so it lives until the kill delay
    (2 s, the most the config allows) ends with SIGKILL; the second Ctrl+C comes before that."""
    command = "trap '' TERM; sleep 101.25"
    fake_server.script(Reply([tool_call("bash", {"command": command}, id="c1")]))
    ink = start_ink(config="kill_delay = 2\n")
    ink.type_line("run the stubborn command")
    ink.wait_text("sleep 101.25 · running ")
    ink.wait_for(_stubborn_sleeps, what="the command started")  # its trap set: SIGTERM is ignored
    ink.send(CTRL_C)
    ink.wait_text("◌ aborting")
    ink.send(CTRL_C)
    assert ink.wait_exit() == 130
    poll_until(lambda: not _stubborn_sleeps(), 5, "the SIGKILLed command gone")  # delivered, not instant
    # The terminal is left clean (issue 12): the app's rows erased, the note on a line of its own, the
    # cursor shown at the start of the next line, cooked mode back.
    lines = ink.lines()
    assert "ink: quit without waiting for the interrupted run to stop" in lines
    assert not [line for line in lines if "ctrl+c again" in line or "─" * 20 in line or "aborting" in line]
    assert (ink.screen.cursor.x, ink.screen.cursor.hidden) == (0, False)
    assert lines[ink.screen.cursor.y] == ""


def _stubborn_sleeps() -> list[psutil.Process]:
    found = psutil.process_iter(["cmdline", "status"])
    return [p for p in found if p.info["cmdline"] == ["sleep", "101.25"] and p.info["status"] != "zombie"]


def test_ctrl_c_when_idle_clears_the_input_and_twice_on_empty_quits(start_ink: StartInk) -> None:
    ink = start_ink()
    ink.send("some draft")
    ink.wait_text("some draft")
    ink.send(CTRL_C)
    ink.wait_for(lambda: ink.input_line() == "›", what="the input cleared")
    assert ink.child.isalive()
    ink.send(CTRL_C)
    ink.wait_text("press ctrl+c again to quit")
    ink.send(CTRL_C)
    assert ink.wait_exit() == 0


def test_help_lists_the_keys_and_commands(start_ink: StartInk) -> None:
    ink = start_ink()
    ink.type_line("/help")
    ink.wait_text("A line starting with ! runs in the shell.")
    shown = "\n".join(ink.scrollback())
    flowing = " ".join(shown.split())  # a description wraps beside its key
    for key, what in KEYS:
        assert key in shown and " ".join(what.split()) in flowing
    for command in ("/model", "/modes", "/clear", "/quit", "/sessions", "/resume", "/compact"):
        assert command in shown


def test_a_long_reply_is_complete_and_in_order_in_the_scrollback(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    """Hundreds of paragraphs, streamed in small chunks: every word reaches the terminal's scrollback,
    once, in order (the live area's redraws and the printed blocks never lose or repeat text)."""
    paragraphs = [" ".join(f"p{p}w{w}" for w in range(12)) for p in range(300)]
    reply = "\n\n".join(paragraphs)
    chunks = [reply[i : i + 7] for i in range(0, len(reply), 7)]
    fake_server.script(Reply([text(c) for c in chunks]))
    ink = start_ink()
    ink.type_line("write a lot")
    ink.wait_for(lambda: "p299w11" in "\n".join(ink.scrollback()), what="the last word")
    ink.wait_text("○ idle")
    words = [w for line in ink.scrollback() for w in line.split() if w.startswith("p") and "w" in w]
    assert words == [f"p{p}w{w}" for p in range(300) for w in range(12)]


def test_sigint_from_outside_acts_like_ctrl_c(fake_server: FakeModelServer, start_ink: StartInk) -> None:
    """prompt_toolkit turns SIGINT into a key it ignores by default: ink binds it (kill -INT aborts)."""
    gate = Gate()
    fake_server.script(Reply([text("Streaming"), gate]))
    ink = start_ink()
    ink.type_line("go")
    gate.wait_reached()
    ink.child.kill(signal.SIGINT)
    ink.wait_text("⏹ interrupted")
    ink.wait_text("○ idle")
    assert ink.child.isalive()


def test_sigterm_aborts_and_exits_143_handing_queued_input_back(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("Streaming"), gate]))
    ink = start_ink()
    ink.type_line("go")
    gate.wait_reached()
    ink.type_line("do not lose me")
    ink.wait_text("queued (1)")
    ink.child.kill(signal.SIGTERM)
    assert ink.wait_exit() == 143
    fake_server.requests[0].wait_finished()
    assert fake_server.requests[0].outcome == "client_left"
    assert "not sent: do not lose me" in ink.scrollback()  # R30: never dropped silently
