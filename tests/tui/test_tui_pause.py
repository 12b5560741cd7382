"""R44 in the terminal UI (the real ``ink`` in a pseudo-terminal): Ctrl+S reaches ink (the terminal's
XON/XOFF flow control is off in its raw mode) and pauses the run at its next safe point, the status line
says ``⏸ pausing`` then ``⏸ paused``, input typed meanwhile is queued, Ctrl+S again resumes; ``/pause``
does the same, and says so while idle; Esc during a pause interrupts as always."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal

CTRL_S = "\x13"
ESC = "\x1b"


def status_line(lines: list[str]) -> str:
    return next((line for line in reversed(lines) if line.startswith(("⏸ ", "● ", "○ ", "◌ "))), "")


def test_R44_ctrl_s_pauses_at_the_next_safe_point_and_resumes(
    fake_server: FakeModelServer, start_ink: StartInk, marks: Path
) -> None:
    g = Gate()
    command = f"echo ran > {marks / 'b1'}"
    fake_server.script(
        Reply([text("Looking first."), g, tool_call("bash", {"command": command}, id="b1")]), say("All done.")
    )
    ink = start_ink()
    ink.type_line("/pause")
    ink.wait_printed("nothing is running: ctrl+s (or /pause) holds a run at its next safe point")
    ink.type_line("go")
    g.wait_reached()
    ink.send(CTRL_S)
    ink.wait_for(lambda: status_line(ink.lines()).startswith("⏸ pausing"), what="⏸ pausing")
    ink.wait_text("ctrl+s resume")  # the hint line
    g.open()  # the reply finishes; its bash call does not start
    ink.wait_for(lambda: status_line(ink.lines()).startswith("⏸ paused"), what="⏸ paused (held)")
    ink.wait_printed("⏸ paused:", whole_line=False)
    assert not (marks / "b1").exists() and len(fake_server.requests) == 1
    # the held call has not started: its line says so, and nothing says it runs
    ink.wait_text("held: starts when you resume")
    assert not [line for line in ink.lines() if "running " in line or "bash 0" in line], ink.lines()
    ink.type_line("and mention the file")  # queued as a steer while paused
    ink.wait_text("queued (1)")
    ink.send(CTRL_S)
    ink.wait_printed("▶ resumed")
    ink.wait_text("All done.")
    ink.wait_text("○ idle")
    assert (marks / "b1").read_text() == "ran\n"
    assert fake_server.requests[1].user_texts()[-1] == "and mention the file"


def test_R44_esc_during_a_pause_interrupts_and_slash_pause_resumes_nothing_then(
    fake_server: FakeModelServer, start_ink: StartInk, marks: Path
) -> None:
    g = Gate()
    command = f"echo ran > {marks / 'b1'}"
    fake_server.script(Reply([g, tool_call("bash", {"command": command}, id="b1")]), say("never"))
    ink = start_ink()
    ink.type_line("go")
    g.wait_reached()
    ink.type_line("/pause")
    ink.wait_for(lambda: status_line(ink.lines()).startswith("⏸ pausing"), what="⏸ pausing")
    g.open()
    ink.wait_for(lambda: status_line(ink.lines()).startswith("⏸ paused"), what="⏸ paused (held)")
    ink.send(ESC)
    ink.wait_text("⏹ interrupted · 1 tool call not started")
    ink.wait_text("○ idle")
    assert not (marks / "b1").exists()


def test_R44_agents_pause_holds_one_sub_agent_and_its_line_says_so(
    fake_server: FakeModelServer, start_ink: StartInk, marks: Path
) -> None:
    ink, hold = one_sub_agent_held(fake_server, start_ink, marks)
    ink.type_line("/agents pause 1")
    ink.wait_text("⏸ pausing [1] general")
    hold.open()
    ink.wait_for(lambda: "[1] general · paused" in ink.text(), what="its line says it is held")
    assert not (marks / "a1").exists()
    assert status_line(ink.lines()).startswith("● running")  # the run itself is not paused
    ink.type_line("/agents resume 1")
    ink.wait_text("▶ [1] general resumed")
    ink.wait_text("Reported back.")
    assert (marks / "a1").read_text() == "ran\n"


def task(call_id: str, prompt: str) -> Any:
    return tool_call("task", {"description": prompt, "prompt": prompt, "agent": "general"}, id=call_id)


def one_sub_agent_held(
    fake_server: FakeModelServer, start_ink: StartInk, marks: Path
) -> tuple[InkTerminal, Gate]:
    """A run whose one sub-agent [1] is held by the gate before its bash call (which marks ``a1``), its
    nested line on screen; the main agent says "Reported back." once it returned."""
    hold = Gate()
    command = f"echo ran > {marks / 'a1'}"

    def answer(request: Any) -> Reply:
        if request.system.startswith("You are ink"):  # the main agent
            return say("Reported back.") if request.tool_results() else Reply([task("t1", "job A")])
        if request.tool_results():
            return say("A done.")
        return Reply([text("A starts"), hold, tool_call("bash", {"command": command}, id="a1")])

    fake_server.responder = answer
    ink = start_ink()
    ink.type_line("do the job")
    hold.wait_reached()
    ink.wait_for(lambda: "[1] general" in ink.text(), what="the sub-agent's nested line")
    return ink, hold


def test_agents_verbs_naming_a_sub_agent_that_does_not_run_act_on_no_other(
    fake_server: FakeModelServer, start_ink: StartInk, marks: Path
) -> None:
    # [1] is picked; "/agents stop 5" (a typo, or [5] just ended) used to stop the picked [1] instead,
    # and "/agents pause 5" to pause it
    ink, hold = one_sub_agent_held(fake_server, start_ink, marks)
    ink.type_line("/agents 1")
    ink.wait_text("[1] general picked")
    for verb in ("stop", "pause"):
        ink.type_line(f"/agents {verb} 5")
    ink.wait_for(lambda: ink.text().count("no running sub-agent [5]") == 2, what="both refused")
    hold.open()
    ink.wait_text("Reported back.")
    assert (marks / "a1").read_text() == "ran\n"  # [1] was neither stopped nor held
    assert "stopping [1]" not in ink.text() and "pausing [1]" not in ink.text()
