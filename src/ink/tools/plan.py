"""plan: the model's checklist for a task of several steps, shown to the user as it goes (docs/plans.md).

Every call gives the whole plan (``entries: [{content, status}]``, optional ``explanation``) and emits it
as a ``plan_update`` event through the call's context (``ctx.emit``; a sub-agent's carries its
``source``). The frontends draw it (a checklist in the terminal UI, ACP's ``plan`` update), the session
keeps the latest, and a resumed session shows it again. It changes nothing and reaches nothing, so it is
judged like a read: it never asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ink.agent.events import PLAN_STATUSES, PlanEntry, PlanUpdate
from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.tools.base import ArgumentError, BaseTool, object_schema

MAX_ENTRIES = 50
MAX_CONTENT = 500  # characters of one step
MAX_EXPLANATION = 1000

DESCRIPTION = """Keep a short checklist of your plan for a task of several steps, shown to the user as \
you work.
- Use it when the task has several distinct steps (3 or more, or the user gave a list): write the \
steps first, then call it again as each one starts (in_progress) and ends (completed).
- Do not use it for a one-step task, a question you can answer at once, or pure conversation.
- Each call gives the whole plan: every step with its status (pending, in_progress, completed); \
at most one step is in_progress at a time. Steps are short (one line each).
- explanation: optional, why the plan changed."""


class PlanTool(BaseTool):
    name = "plan"
    description = DESCRIPTION
    parameters = object_schema(
        {
            "entries": {
                "type": "array",
                "description": "Every step of the plan, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The step, in one short line."},
                        "status": {"type": "string", "enum": list(PLAN_STATUSES)},
                    },
                    "required": ["content", "status"],
                },
            },
            "explanation": {"type": "string", "description": "Why the plan changed (optional)."},
        },
        ["entries"],
    )
    safe = True
    kind = "read"  # changes nothing, reaches nothing: runs without a question, in every mode

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        entries = args.get("entries")
        count = len(entries) if isinstance(entries, list) else 0
        return CallDescription(f"plan ({count} step{'s' if count != 1 else ''})")

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        update = plan_from(args)
        ctx.emit(PlanUpdate(update.entries, update.explanation))
        done = sum(entry.status == "completed" for entry in update.entries)
        now = next((entry.content for entry in update.entries if entry.status == "in_progress"), None)
        text = f"Plan updated: {done} of {len(update.entries)} steps completed."
        return ToolOutput(text + (f" In progress: {now}" if now else ""))


def plan_from(args: Mapping[str, Any]) -> PlanUpdate:
    """The plan a call's arguments give. Raises ``ArgumentError`` saying what is wrong."""
    raw = args.get("entries")
    if not isinstance(raw, list) or not raw:
        raise ArgumentError("entries must be a non-empty list of {content, status}")
    if len(raw) > MAX_ENTRIES:
        raise ArgumentError(f"a plan has at most {MAX_ENTRIES} steps; merge some")
    entries = tuple(_entry(item, number) for number, item in enumerate(raw, start=1))
    if sum(entry.status == "in_progress" for entry in entries) > 1:
        raise ArgumentError("at most one step may be in_progress at a time")
    explanation = args.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        raise ArgumentError("explanation must be a string")
    explained = explanation.strip()[:MAX_EXPLANATION] if explanation else None
    return PlanUpdate(entries, explained or None)


def _entry(item: object, number: int) -> PlanEntry:
    if not isinstance(item, dict):
        raise ArgumentError(f"step {number} must be an object {{content, status}}")
    content, status = item.get("content"), item.get("status")
    if not isinstance(content, str) or not content.strip():
        raise ArgumentError(f"step {number} needs content: a short line")
    if status not in PLAN_STATUSES:
        raise ArgumentError(f"step {number}: status must be one of {', '.join(PLAN_STATUSES)}")
    text = " ".join(content.split())  # one line: a step is a line of the checklist
    return PlanEntry(text[:MAX_CONTENT], status)
