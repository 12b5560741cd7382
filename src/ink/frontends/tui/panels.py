"""The parts of the screen below the scrollback, as prompt_toolkit fragments: the live area (the
unfinished block raw, thinking, running tools), the permission question, the queue panel, the status line.

Pure functions of the view's state, the width and the time: redrawn at most ~20 times a second, each
bounded by the screen size, never by the length of the reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import msgspec
from prompt_toolkit.utils import get_cwidth

from ink.agent.tool import CallDescription
from ink.frontends.tui.blocks import Block, sanitize
from ink.frontends.tui.diffs import diff_lines
from ink.frontends.tui.paint import CODE_THEME, DIFF_LINE_BG, DIFF_WORD_BG
from ink.frontends.tui.subagents import sub_agent_rows
from ink.frontends.tui.toolview import preview
from ink.frontends.tui.view import ActiveTool, EventView
from ink.run.events import PermissionRequest, QueuedInput

Fragments = list[tuple[str, str]]
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
THINKING_ROWS = 3
QUEUE_ROWS = 6
OUTPUT_ROWS = 5  # lines of a running tool's output shown under it
OUTPUT_TAIL_CHARS = 4096
SUB_AGENT_ROWS = 4  # finished calls shown under the picked sub-agent
MODE_LABELS = {"steer": "steer", "follow_up": "follow-up"}
ANSWER_LABELS = (("y", "allow once"), ("a", "always allow"), ("n", "deny"))
SHORT_ANSWER_LABELS = (("y", "once"), ("a", "always"), ("n", "deny"))
WIDE_QUESTION = 50  # columns the long answer labels need
DIFF_HEADERS = {"file": "class:diff.file", "hunk": "class:diff.hunk", "note": "class:hint"}


def wrap_tail(lines: Sequence[str], width: int, max_rows: int) -> list[str]:
    """The last ``max_rows`` screen rows of ``lines`` wrapped at ``width`` columns."""
    width = max(1, width)
    rows: list[str] = []
    for line in reversed(lines):
        wrapped = _wrap_tail(line.replace("\t", "    "), width, max_rows - len(rows))
        rows[:0] = wrapped
        if len(rows) >= max_rows:
            break
    return rows


def _wrap_tail(line: str, width: int, keep: int) -> list[str]:
    """The last ``keep`` rows of ``line`` wrapped: a long ASCII line is cut without wrapping all of it."""
    if line.isascii():
        total = max(1, -(-len(line) // width))
        start = max(0, total - keep) * width
        return [line[i : i + width] for i in range(start, len(line), width)] or [""]
    return _wrap(line, width)[-keep:]


def _wrap(line: str, width: int) -> list[str]:
    if not line:
        return [""]
    if line.isascii():
        return [line[i : i + width] for i in range(0, len(line), width)]
    rows: list[str] = []
    row: list[str] = []
    used = 0
    for char in line:
        w = get_cwidth(char)
        if used + w > width:
            rows.append("".join(row))
            row, used = [], 0
        row.append(char)
        used += w
    rows.append("".join(row))
    return rows


def live_fragments(view: EventView, width: int, max_rows: int, now: float) -> Fragments:
    """Thinking (dim), the unfinished text block (raw), then one line per active tool, each with the
    last lines of its output under it while it runs."""
    tools = list(view.tools.values())[-max(1, max_rows // 2) :]
    asking = {q.tool_call_id for q in view.questions}
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


def question_fragments(
    question: PermissionRequest,
    described: CallDescription,
    waiting: int,
    width: int,
    max_rows: int,
    keys: str = "live",
) -> Fragments:
    """The inline permission prompt: what the tool wants to do (at most ``max_rows`` rows of
    it) and the answer keys. ``keys``: "live" (they answer), "typing" (the editor has text, so they
    type), or "in 0.3s" (the question has not been shown long enough yet)."""
    more = f" (+{waiting} more waiting)" if waiting else ""
    asker = f" (sub-agent {question.source.agent} {question.source.id})" if question.source else ""
    out: Fragments = [("class:question.title", f"allow {question.name}?{asker}{more}")]
    if question.reason:
        out.append(("class:hint", f"  {sanitize(question.reason)}"))
    out.append(("", "\n"))
    shown = _preview_fragments(preview(described, question.args, max_rows), width)
    rows = sum(text.count("\n") for _style, text in shown) + 1
    if rows > max_rows:  # long lines wrapped into more rows than there is room for
        shown = [*_first_rows(shown, max_rows - 1), ("class:hint", "  …")]
    out.extend(shown)
    out.append(("", "\n"))
    key_style = "class:question.key" if keys == "live" else "class:hint"
    labels = ANSWER_LABELS if width >= WIDE_QUESTION else SHORT_ANSWER_LABELS  # a narrow terminal
    for key, label in labels:
        out.append((key_style, f" {key} "))
        out.append(("class:question.label", f" {label}   "))
    used = sum(get_cwidth(text) for _, text in out[-2 * len(labels) :])
    if width < WIDE_QUESTION:  # no room beside the keys: the hint gets a row of its own
        out.append(("", "\n"))
        used = 0
    if keys == "live":
        hint = "esc denies · ctrl+c interrupts the run"
    elif keys == "typing":
        hint = "alt+y/a/n answer (the input has text)"
    else:
        hint = f"keys answer {keys}"
    out.append(("class:hint", fit_items(hint, width - used - 1)))
    return out


def _first_rows(fragments: Fragments, rows: int) -> Fragments:
    """The fragments of the first ``rows`` rows, each ending in its newline."""
    out: Fragments = []
    for style, text in fragments:
        *ended, rest = text.split("\n")
        for piece in ended:
            out.append((style, piece + "\n"))
            rows -= 1
            if rows <= 0:
                return out
        if rest:
            out.append((style, rest))
    return out


def _preview_fragments(block: Block, width: int) -> Fragments:
    if block.kind == "diff":
        return diff_fragments(block.text, width)
    out: Fragments = []
    for line in block.text.split("\n"):
        style = "class:question.command" if block.kind == "bang" else "class:question.text"
        for row in _wrap(line, max(1, width - 2)):
            out.append((style, f"  {row}\n"))
    if out:
        out[-1] = (out[-1][0], out[-1][1].rstrip("\n"))
    return out


def diff_fragments(diff: str, width: int) -> Fragments:
    """A unified diff as the scrollback shows it (``paint.diff_text``): code highlighted, changed lines
    shaded, changed words brighter; each line wrapped at ``width`` columns."""
    out: Fragments = []
    for line in diff_lines(diff):
        if line.role in DIFF_HEADERS:
            pieces: Fragments = [(DIFF_HEADERS[line.role], line.parts[0].text)]
        else:
            shade = DIFF_LINE_BG.get(line.role)
            background = f" bg:{shade}" if shade else ""
            pieces = [(f"class:diff.{line.role}{background}", line.sign)]
            for part in line.parts:
                lit = DIFF_WORD_BG[line.role] if part.changed and line.role in DIFF_WORD_BG else shade
                pieces.append((_token_style(part.token) + (f" bg:{lit}" if lit else ""), part.text))
        for row in _wrap_fragments(pieces, max(1, width - 2)):
            out.append(("", "  "))
            out.extend(row)
            out.append(("", "\n"))
    if out:
        out.pop()
    return out


def _wrap_fragments(pieces: Fragments, width: int) -> list[Fragments]:
    rows: list[Fragments] = [[]]
    used = 0
    for style, text in pieces:
        for char in text.replace("\t", "    "):
            w = get_cwidth(char)
            if used + w > width and used:
                rows.append([])
                used = 0
            row = rows[-1]
            if row and row[-1][0] == style:
                row[-1] = (style, row[-1][1] + char)
            else:
                row.append((style, char))
            used += w
    return rows


@lru_cache(maxsize=256)
def _token_style(token: object) -> str:
    """A pygments token's colour and emphasis in the code theme, as a prompt_toolkit style."""
    if token is None:
        return "class:question.text"
    from pygments.styles import get_style_by_name

    found = get_style_by_name(CODE_THEME).style_for_token(token)
    style = f"fg:#{found['color']}" if found["color"] else ""
    return " ".join(
        filter(None, [style, "bold" if found["bold"] else "", "italic" if found["italic"] else ""])
    )


class Status(msgspec.Struct, frozen=True):
    state: str  # "idle", "running", "aborting"
    activity: str
    activity_seconds: float
    model: str
    cwd: str
    tokens: str
    cost: str
    hint: str
    mode: str = ""  # the permission mode (Shift+Tab switches it)


def fit_items(text: str, room: int, sep: str = " · ") -> str:
    """The leading ``sep``-separated items of ``text`` that fit in ``room`` columns: a narrow terminal
    loses whole items, never half a word."""
    items = text.split(sep)
    while items and get_cwidth(sep.join(items)) > room:
        items.pop()
    return sep.join(items)


def _fit_right(status: Status, room: int) -> str:
    """Mode, model, cwd, tokens and cost; a long cwd is shortened from the left, then dropped; then
    cost, tokens, model and mode go, in that order, until the rest fits."""
    cwd = status.cwd
    for _ in range(3):
        right = " · ".join(x for x in (status.mode, status.model, cwd, status.tokens, status.cost) if x)
        if get_cwidth(right) <= room:
            return right
        parts = cwd.split("/")
        cwd = "…/" + "/".join(parts[-2:]) if len(parts) > 3 and not cwd.startswith("…") else ""
    rest = " · ".join(x for x in (status.mode, status.model, status.tokens, status.cost) if x)
    return fit_items(rest, room)


def status_fragments(status: Status, width: int) -> Fragments:
    """``● running · writing 3s`` on the left; model, cwd, tokens and cost on the right; keys below."""
    marks = {"idle": ("class:status.idle", "○ idle"), "aborting": ("class:status.aborting", "◌ aborting")}
    style, state = marks.get(status.state, ("class:status.running", "● running"))
    left = state
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
