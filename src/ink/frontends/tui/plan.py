"""The model's plan as a checklist above the queue (docs/plans.md): ✓ done, ▸ the step in progress, ○ to
do. A long plan is folded around the step in progress (the done ones before it counted on one line, the
rest after ``PLAN_ROWS``), so it never pushes the editor off the screen. A plan whose steps are all done
is not shown: the work it described is over. The plan is the app's (``ink.app.plan.PlanKeeper``), so a
resumed session's shows at once; nothing here keeps a state of its own.
"""

from __future__ import annotations

from prompt_toolkit.formatted_text import StyleAndTextTuples

from ink.agent.events import PlanEntry, PlanUpdate
from ink.frontends.tui.blocks import sanitize

PLAN_ROWS = 6  # steps shown at most; the others are counted
MARKS = {"completed": "✓", "in_progress": "▸", "pending": "○"}


def showing(plan: PlanUpdate | None) -> bool:
    return plan is not None and any(entry.status != "completed" for entry in plan.entries)


def plan_rows(plan: PlanUpdate | None) -> int:
    """How many rows ``plan_fragments`` takes (0 when the plan is not shown)."""
    return len(_lines(plan, 80)) if showing(plan) else 0


def plan_fragments(plan: PlanUpdate | None, width: int) -> StyleAndTextTuples:
    if plan is None or not showing(plan):
        return []
    out: StyleAndTextTuples = []
    for style, text in _lines(plan, width):
        out.append((style, text + "\n"))
    out[-1] = (out[-1][0], out[-1][1].rstrip("\n"))
    return out


def _lines(plan: PlanUpdate | None, width: int) -> list[tuple[str, str]]:
    if plan is None:
        return []
    entries = plan.entries
    done = sum(entry.status == "completed" for entry in entries)
    lines = [("class:plan.title", f"plan ({done}/{len(entries)} done)")]
    first, last = _window(entries)
    if first > 0:
        lines.append(("class:plan.done", f"  ✓ … {first} done before"))
    lines += [_line(entry, width) for entry in entries[first:last]]
    if last < len(entries):
        lines.append(("class:plan.pending", f"  … {len(entries) - last} more"))
    return lines


def _window(entries: tuple[PlanEntry, ...]) -> tuple[int, int]:
    """The steps shown: all of a short plan; of a long one, from just before the first unfinished step."""
    if len(entries) <= PLAN_ROWS:
        return 0, len(entries)
    current = next((i for i, e in enumerate(entries) if e.status != "completed"), len(entries))
    first = max(0, min(current - 1, len(entries) - (PLAN_ROWS - 2)))
    return first, min(len(entries), first + PLAN_ROWS - 2)


def _line(entry: PlanEntry, width: int) -> tuple[str, str]:
    text = sanitize(entry.content)
    room = width - 6
    if len(text) > room > 0:
        text = text[: room - 1] + "…"
    return f"class:plan.{entry.status.replace('_', '-')}", f"  {MARKS[entry.status]} {text}"
