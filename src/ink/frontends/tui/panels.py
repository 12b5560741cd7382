"""The parts of the screen below the scrollback, as prompt_toolkit fragments: the live area (the
unfinished block raw, thinking, running tools), the permission question, the queue panel, the status line.

Pure functions of the view's state, the width and the time: redrawn at most ~20 times a second, each
bounded by the screen size, never by the length of the reply.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from prompt_toolkit.utils import get_cwidth

from ink.frontends.tui.blocks import sanitize
from ink.frontends.tui.subagents import sub_agent_rows
from ink.frontends.tui.view import ActiveTool, EventView
from ink.frontends.tui.wrapping import wrap_tail
from ink.run.events import QueuedInput

Fragments = list[tuple[str, str]]
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
THINKING_ROWS = 3
QUEUE_ROWS = 6
OUTPUT_ROWS = 5  # lines of a running tool's output shown under it
OUTPUT_TAIL_CHARS = 4096
SUB_AGENT_ROWS = 4  # finished calls shown under the picked sub-agent
MODE_LABELS = {"steer": "steer", "follow_up": "follow-up"}


def live_fragments(view: EventView, width: int, max_rows: int, now: float) -> Fragments:
    """Thinking (dim), the unfinished text block (raw), then one line per active tool, each with the
    last lines of its output under it while it runs."""
    tools = list(view.tools.values())[-max(1, max_rows // 2) :]
    # a call waits for an answer when its question is open, or its sub-agent's (R7): never "running"
    asking = {q.tool_call_id for q in view.questions} | {q.source.id for q in view.questions if q.source}
    asking |= {t.call_id for q in view.questions for t in view.held_by(q)}  # the project hooks' question
    printing = [t for t in tools if t.output and t.status != "queued"]
    per_tool = min(OUTPUT_ROWS, max(0, max_rows - len(tools) - 1) // max(1, len(printing)))
    tails = {t.call_id: output_tail(t.output, width, per_tool) for t in printing}
    nested = _nested_rows(view, [t.call_id for t in tools], width, now, max_rows - len(tools) - 1)
    used = sum(len(rows) for rows in (*tails.values(), *nested.values()))
    room = max(1, max_rows - len(tools) - used)
    out: Fragments = []
    thinking = wrap_tail([sanitize(t) for t in view.thinking_tail(THINKING_ROWS)], width, THINKING_ROWS)
    for row in thinking[-room:]:
        out.append(("class:thinking", row + "\n"))
    room -= len(thinking)
    if room > 0:
        for row in wrap_tail([sanitize(t) for t in view.text.live_lines(room)], width, room):
            out.append(("class:live", row + "\n"))
    for tool in tools:
        out.extend(_tool_line(tool, width, now, tool.call_id in asking))
        out.extend(("class:tool.output", f"  │ {row}\n") for row in tails.get(tool.call_id, ()))
        for row in nested.get(tool.call_id, ()):
            out.append(("class:tool.agent.open" if row.startswith("  ▸") else "class:tool.agent", row + "\n"))
    if out and out[-1][1].endswith("\n"):
        out[-1] = (out[-1][0], out[-1][1][:-1])
    return out


def _nested_rows(
    view: EventView, call_ids: Sequence[str], width: int, now: float, room: int
) -> dict[str, list[str]]:
    """The nested line of each running sub-agent under its task call (R7); the picked one open, with
    as many of its finished calls as there is room for (at most SUB_AGENT_ROWS)."""
    agents = view.sub_agents
    shown = [agents.running[i] for i in call_ids if i in agents.running]
    log_rows = min(SUB_AGENT_ROWS, max(0, room - len(shown)))
    return {
        line.agent_id: sub_agent_rows(line, line.agent_id == agents.selected, width, now, log_rows)
        for line in shown
    }


def output_tail(output: str, width: int, rows: int) -> list[str]:
    """The last ``rows`` lines of a running tool's output, each cut to the width (no wrapping: a live
    tail is a glance, the whole output comes with the result). A carriage return rewrites its line, as
    a progress bar does in a terminal."""
    if rows <= 0:
        return []
    lines = output[-OUTPUT_TAIL_CHARS:].replace("\r\n", "\n").rstrip("\n").split("\n")[-rows:]
    room = max(1, width - 5)
    return [sanitize(line.rsplit("\r", 1)[-1]).replace("\t", "    ")[:room] for line in lines]


def _tool_line(tool: ActiveTool, width: int, now: float, asking: bool) -> Fragments:
    elapsed = max(0.0, now - tool.since)
    if asking:
        mark, state = "?", "waiting for your answer"
    elif tool.status == "queued":
        mark, state = "◦", "queued"
    elif tool.status == "held":
        mark, state = "⏸", "held: starts when you resume"
    elif tool.status == "cancelling":
        mark, state = "⏹", f"stopping · waiting up to {tool.grace:g}s · {elapsed:.0f}s"
    else:
        mark, state = SPINNER[int(now * 10) % len(SPINNER)], f"running {elapsed:.1f}s"
    summary = tool.summary
    room = width - len(state) - 6
    if len(summary) > room > 0:
        summary = summary[: room - 1] + "…"
    return [("class:tool.mark", f"{mark} "), ("class:tool", summary), ("class:tool.state", f" · {state}\n")]


def queue_fragments(queue: Sequence[QueuedInput], width: int, max_rows: int = QUEUE_ROWS) -> Fragments:
    """One line per queued input with its mode (R8, R32); the newest ``max_rows`` when there are more."""
    if not queue:
        return []
    out: Fragments = [("class:queue.title", f"queued ({len(queue)}) · ↑ on an empty input edits the last\n")]
    if len(queue) > max_rows:
        out.append(("class:queue.title", f"  … {len(queue) - max_rows + 1} earlier\n"))
        queue = queue[-(max_rows - 1) :]
    for entry in queue:
        label = "!shell" if entry.text.lstrip().startswith("!") else MODE_LABELS[entry.mode]
        first = sanitize(entry.text.strip().split("\n", 1)[0])
        more = " …" if "\n" in entry.text.strip() else ""
        text = first + more
        room = width - 14
        if len(text) > room > 0:
            text = text[: room - 1] + "…"
        out.append((f"class:queue.{entry.mode}", f"  {label:<10}"))
        out.append(("class:queue.text", f" {text}\n"))
    out[-1] = (out[-1][0], out[-1][1].rstrip("\n"))
    return out


class Status(msgspec.Struct, frozen=True):
    state: str  # "idle", "running", "aborting", "pausing", "paused"
    activity: str
    activity_seconds: float
    model: str
    cwd: str
    tokens: str
    cost: str
    hint: str
    mode: str = ""  # the permission mode (Shift+Tab switches it)
    sandbox: str = ""  # what commands run in (--sandbox; Shift+Tab leaves it alone)
    jobs: str = ""  # background jobs running: "2 jobs" (R43)


def sandbox_label(mode: str) -> str:
    """``sandbox workspace-write``, ``sandbox read-only``, or ``no sandbox`` (R41): said even when off."""
    return "no sandbox" if mode == "off" else f"sandbox {mode}"


def fit_items(text: str, room: int, sep: str = " · ") -> str:
    """The leading ``sep``-separated items of ``text`` that fit in ``room`` columns: a narrow terminal
    loses whole items, never half a word."""
    items = text.split(sep)
    while items and get_cwidth(sep.join(items)) > room:
        items.pop()
    return sep.join(items)


def _fit_right(status: Status, room: int) -> str:
    """Mode, model, sandbox, cwd, tokens and cost; a long cwd is shortened from the left, then dropped;
    then cost, tokens, sandbox, model and mode go, in that order, until the rest fits."""
    cwd = status.cwd
    for _ in range(3):
        items = (status.mode, status.model, status.sandbox, cwd, status.tokens, status.cost)
        right = " · ".join(x for x in items if x)
        if get_cwidth(right) <= room:
            return right
        parts = cwd.split("/")
        cwd = "…/" + "/".join(parts[-2:]) if len(parts) > 3 and not cwd.startswith("…") else ""
    rest = " · ".join(x for x in (status.mode, status.model, status.sandbox, status.tokens, status.cost) if x)
    return fit_items(rest, room)


def status_fragments(status: Status, width: int) -> Fragments:
    """``● running · writing 3s`` on the left; model, cwd, tokens and cost on the right; keys below."""
    marks = {
        "idle": ("class:status.idle", "○ idle"),
        "aborting": ("class:status.aborting", "◌ aborting"),
        "pausing": ("class:status.paused", "⏸ pausing"),  # R44: what started still finishes
        "paused": ("class:status.paused", "⏸ paused"),  # held at a safe point
    }
    style, state = marks.get(status.state, ("class:status.running", "● running"))
    left = state + (f" · {status.jobs}" if status.jobs else "")
    if status.activity:
        left += f" · {status.activity}"
        if status.activity_seconds >= 1:
            left += f" {status.activity_seconds:.0f}s"
    right = _fit_right(status, width - get_cwidth(left) - 2)
    gap = max(1, width - get_cwidth(left) - get_cwidth(right) - 1)
    return [
        (style, left),
        ("", " " * gap),
        ("class:status.info", right + "\n"),
        ("class:hint", fit_items(status.hint, width - 1)),
    ]
