"""Sub-agents in the TUI (issue 18, R7): each running one is a nested line under its task call with its
current activity; Ctrl+T or /agents picks one (its line opens on its finished calls), and /agents steers
or stops that one alone while the other goes on and the parent gets an honest interrupted result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psutil

from tests.fakeserver import FakeModelServer, Gate, Reply, say, text, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal
from tests.waiting import wait_for_file

CTRL_T = "\x14"
WAIT_FOR_GO = "while [ ! -e go-a ]; do sleep 0.05; done; echo a finished"


def task(call_id: str, prompt: str) -> Any:
    return tool_call("task", {"description": prompt, "prompt": prompt, "agent": "general"}, id=call_id)


def nested_line(ink: InkTerminal, job: str) -> str:
    """The row under the task call of ``job``: its sub-agent's nested line."""
    lines = ink.lines()
    at = next((i for i, line in enumerate(lines) if f"general: {job}" in line), None)
    return lines[at + 1] if at is not None and at + 1 < len(lines) else ""


def sleeping(marker: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]


def test_each_sub_agent_has_a_nested_line_and_one_is_steered_and_one_stopped(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    def answer(request: Any) -> Reply:
        first = request.user_texts()[0]
        if request.system.startswith("You are ink"):  # the main agent
            if not request.tool_results():
                return Reply([task("t1", "job A"), task("t2", "job B")])
            return say("Both reported back.")
        if first == "job A":
            if not request.tool_results():
                return Reply([tool_call("bash", {"command": f"echo a > a-up; {WAIT_FOR_GO}"}, id="a1")])
            steered = "hurry up" in request.user_texts()
            return say("A done, hurried." if steered else "A done.")
        return Reply([tool_call("bash", {"command": "echo b > b-up; sleep 61.39"}, id="b1")])

    fake_server.responder = answer
    ink = start_ink()
    ink.type_line("do both jobs")
    wait_for_file(project / "a-up")
    wait_for_file(project / "b-up")
    ink.wait_for(
        lambda: "running bash" in nested_line(ink, "job A") and "running bash" in nested_line(ink, "job B"),
        what="a nested line with its activity under each task call",
    )
    number_a = nested_line(ink, "job A").split("[", 1)[1][0]
    number_b = nested_line(ink, "job B").split("[", 1)[1][0]
    assert {number_a, number_b} == {"1", "2"}

    ink.send(CTRL_T)  # picks [1]: its line opens and the status line says what to do with it
    ink.wait_text("[1] general picked: /agents steer TEXT · /agents stop · ctrl+t next")
    ink.wait_for(lambda: "▸ [1] general" in ink.text(), what="the picked line marked")

    ink.type_line(f"/agents steer {number_a} hurry up")
    ink.wait_text(f"→ [{number_a}] general: hurry up")
    ink.type_line(f"/agents stop {number_b}")
    ink.wait_text(f"⏹ stopping [{number_b}] general")
    ink.wait_for(lambda: not sleeping("sleep 61.39"), what="the stopped sub-agent's command killed")
    ink.wait_for(lambda: "running bash" in nested_line(ink, "job A"), what="the other one still running")
    (project / "go-a").write_text("")
    ink.wait_text("Both reported back.", timeout=30)

    results = dict(fake_server.requests[-1].tool_results())
    assert results["t1"] == "A done, hurried."  # the steer reached that sub-agent's next call
    assert results["t2"].startswith("Interrupted by the user: the general sub-agent was stopped")
    shown = "\n".join(ink.scrollback())
    assert f"[{number_a}] general 1 tool call" in shown and f"[{number_b}] general 1 tool call" in shown
    assert '"description"' not in shown  # the task call is named by its agent and job, not its JSON
    ink.wait_text("○ idle")


def test_agents_without_any_running_says_so(start_ink: StartInk) -> None:
    ink = start_ink()
    ink.type_line("/agents")
    ink.wait_text("no sub-agent is running")
    ink.type_line("/agents stop")
    ink.wait_text("no sub-agent picked: name one by number (/agents lists them) or ctrl+t")


def test_a_sub_agents_question_names_it_and_its_picked_reply_streams_in_view(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    """Issue 30: the question named a raw call id, the approved call printed untagged in the main flow,
    the task call said "running" while the question waited, and a picked sub-agent's text never showed."""
    gate = Gate()

    def answer(request: Any) -> Reply:
        if request.system.startswith("You are ink"):  # the main agent
            return say("All reported.") if request.tool_results() else Reply([task("t1", "job A")])
        if not request.tool_results():
            return Reply([tool_call("bash", {"command": "echo sub > sub-ran"}, id="s1")])
        return Reply([text("Looking at the results line by line"), gate, text(" and done.")])

    fake_server.responder = answer
    ink = start_ink(permission_mode="ask")
    ink.type_line("delegate it")
    ink.wait_text("allow bash? ([1] general)")
    ink.wait_for(lambda: "general: job A · waiting for your answer" in ink.text(), what="the task call waits")
    ink.answer("y")
    ink.wait_printed("[1] general: bash echo sub > sub-ran: allowed once")
    wait_for_file(project / "sub-ran")
    ink.wait_for(lambda: "writing" in nested_line(ink, "job A"), what="the sub-agent writing")
    ink.send(CTRL_T)
    ink.wait_text("Looking at the results line by line")  # its reply, under its open line
    gate.open()
    ink.wait_text("All reported.")
