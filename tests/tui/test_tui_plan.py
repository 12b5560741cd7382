"""The plan in the terminal UI (docs/plans.md), the real ``ink`` in a pseudo-terminal: a checklist above
the queue that follows each ``plan`` call, folded when long, and shown again by ``--continue``."""

from __future__ import annotations

from tests.fakeserver import FakeModelServer, Gate, Reply, call, say, text, tool_call
from tests.tui.conftest import StartInk

STEPS = [
    "read the code",
    "write the test",
    "fix the parser",
    "run the suite",
    "update docs",
    "tidy",
    "ship it",
]


def plan(done: int) -> dict[str, object]:
    """``STEPS`` with the first ``done`` completed and the next one in progress."""
    entries = [
        {"content": step, "status": "completed" if i < done else "in_progress" if i == done else "pending"}
        for i, step in enumerate(STEPS)
    ]
    return {"entries": entries}


def panel(lines: list[str]) -> list[str]:
    """The plan's rows: from its title to the queue or the rule above the editor."""
    start = next(i for i, line in enumerate(lines) if line.startswith("plan ("))
    rows = []
    for line in lines[start:]:
        if line.startswith("queued") or (line and set(line) == {"─"}):
            break
        rows.append(line)
    return rows


def test_the_plan_is_a_checklist_above_the_queue_folded_when_long_and_back_on_continue(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    g = Gate()
    fake_server.script(
        call("plan", plan(0), id="p1"),
        Reply([tool_call("plan", plan(4), id="p2")]),
        Reply([text("Working on it."), g]),
        say("later"),
    )
    ink = start_ink()
    ink.type_line("a long task")
    g.wait_reached()
    ink.wait_text("plan (4/7 done)")
    assert panel(ink.lines()) == [
        "plan (4/7 done)",
        "  ✓ … 3 done before",  # folded: the done steps before the current one are counted
        "  ✓ run the suite",
        "  ▸ update docs",
        "  ○ tidy",
        "  ○ ship it",
    ]
    ink.type_line("and then this")  # the queue comes below the plan
    ink.wait_text("queued (1)")
    lines = ink.lines()
    plan_row = next(i for i, line in enumerate(lines) if "plan (4/7 done)" in line)
    queue_row = next(i for i, line in enumerate(lines) if "queued (1)" in line)
    assert plan_row < queue_row
    g.open()
    ink.wait_text("○ idle")
    ink.close()
    again = start_ink("--continue")
    again.wait_text("plan (4/7 done)")
    assert "  ▸ update docs" in panel(again.lines())


def test_a_long_plan_is_folded_around_its_current_step_and_a_finished_one_is_not_shown() -> None:
    from ink.agent.events import PlanEntry, PlanUpdate
    from ink.frontends.tui.plan import plan_fragments, plan_rows

    steps = [PlanEntry(f"step {n}", "completed" if n < 2 else "pending") for n in range(12)]
    steps[2] = PlanEntry("step 2 " + "x" * 200, "in_progress")
    shown = "".join(text for _, text in plan_fragments(PlanUpdate(tuple(steps)), 40)).splitlines()
    assert shown == ["plan (2/12 done)", "  ✓ … 1 done before", "  ✓ step 1", "  ▸ step 2 " + "x" * 26 + "…",
                     "  ○ step 3", "  ○ step 4", "  … 7 more"]  # fmt: skip
    assert plan_rows(PlanUpdate(tuple(steps))) == len(shown)
    finished = PlanUpdate(tuple(PlanEntry(e.content, "completed") for e in steps))
    assert plan_fragments(finished, 40) == [] and plan_rows(finished) == 0
