"""How tool calls read on screen: a one-line summary of a call, its result folded, a file's diff.

Pure functions of what a tool says of a call (``Tool.describe``: its title, command, proposed change) and
of its result (the text, and the ``FileDiff`` details of a file it changed); no tool is named here. The
renderer decides when to print them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ink.agent.tool import CallDescription
from ink.ai.details import FileDiff, ToolDetail
from ink.ai.messages import ToolResult
from ink.frontends.tui.blocks import Block, Tone, fold, plural, sanitize, shown_exactly

SUMMARY_WIDTH = 80
OUTPUT_LINES = 4  # lines of a result shown before "N more lines"
ERROR_LINES = 8
DIFF_LINES = 40
PREVIEW_LINES = 30  # lines of a command or diff in a permission question
EXPAND_KEY = "ctrl+o"


def summary(described: CallDescription) -> str:
    """``bash ls -la``, ``read src/a.py``, ``grep TODO in src``: the call's title, on one short line."""
    return summary_of(described.title)


def summary_of(title: str) -> str:
    """A call's title on one short line; nothing in it invisible (a bidi override would reorder the rest
    of the line)."""
    title = shown_exactly(title)
    return title if len(title) <= SUMMARY_WIDTH else title[: SUMMARY_WIDTH - 1] + "…"


def duration_text(ms: int) -> str:
    return f"{ms / 1000:.1f}s" if ms >= 100 else f"{ms}ms"


def result_blocks(summary: str, result: ToolResult) -> tuple[list[Block], Block | None]:
    """The blocks of a finished call: its line and its folded output, and the whole output when part of
    it was folded away (for the expand key). A call that changed files shows the first paragraph of its
    output and the diff of each change (its details) instead of the rest of the text."""
    if result.interrupted:
        took = duration_text(result.duration_ms)
        line = Block("tool", f"⏹ {summary} · interrupted after {took}", "interrupted")
    elif result.is_error:
        line = Block("tool", f"✗ {summary} · error", "error")
    else:
        line = Block("tool", f"✓ {summary} · {duration_text(result.duration_ms)}", "ok")
    output = sanitize(result.output).rstrip("\n")
    diffs = [] if result.is_error else file_diffs(result.details or ())
    if diffs:
        head = output.split("\n\n", 1)[0]
        blocks, whole = _diff_blocks(diffs, DIFF_LINES)
        return [line, *([Block("output", head, "dim")] if head.strip() else []), *blocks], whole
    if not output.strip():
        return [line], None
    keep = ERROR_LINES if result.is_error and not result.interrupted else OUTPUT_LINES
    tone: Tone = "error" if result.is_error and not result.interrupted else "dim"
    blocks, whole = folded_output(output, keep, tone)
    return [line, *blocks], whole


def folded_output(output: str, keep: int, tone: Tone) -> tuple[list[Block], Block | None]:
    """The first ``keep`` lines and a "N more lines" note, and the whole output when some were cut."""
    shown, hidden = fold(output, keep)
    whole = Block("output", output, tone) if hidden else None
    if hidden:
        shown += f"\n… {plural(hidden, 'more line')} ({EXPAND_KEY} to expand)"
    return [Block("output", shown, tone)], whole


def file_diffs(details: Sequence[ToolDetail]) -> list[FileDiff]:
    return [d for d in details if isinstance(d, FileDiff)]


def unified(diff: FileDiff) -> str:
    """The unified diff of a change: the tool's own, or worked out from the texts before and after."""
    if diff.unified:
        return diff.unified.rstrip("\n")
    if diff.after is None:
        return ""
    before = (diff.before or "").splitlines()
    after = diff.after.splitlines()
    name = diff.path  # an absolute path is shown as it is, never as "b//home/..."
    old, new = (name, name) if name.startswith("/") else (f"a/{name}", f"b/{name}")
    old = "/dev/null" if diff.before is None else old
    return "\n".join(difflib.unified_diff(before, after, old, new, n=3, lineterm=""))


def _diff_blocks(diffs: Sequence[FileDiff], keep: int) -> tuple[list[Block], Block | None]:
    text = sanitize("\n".join(filter(None, (unified(d) for d in diffs))))
    if not text:
        return [], None
    shown, hidden = fold(text, keep)
    if hidden:
        shown += f"\n… {plural(hidden, 'more line')} ({EXPAND_KEY} to expand)"
    return [Block("diff", shown)], Block("diff", text) if hidden else None


def preview(described: CallDescription, args: Mapping[str, Any], lines: int = PREVIEW_LINES) -> Block:
    """What a permission question shows, in at most ``lines`` lines: the command a call runs, the diff
    of the change it proposes, else its arguments; every character as it is (``shown_exactly``: nothing
    invisible, nothing dropped)."""
    lines = max(2, lines)
    if described.command is not None:
        text, hidden = fold(shown_exactly(described.command), lines - 1)
        return Block("bang", text + (f"\n… {plural(hidden, 'more line')}" if hidden else ""))
    diffs = file_diffs(described.preview)
    if diffs:
        text, hidden = fold(shown_exactly("\n".join(unified(d) for d in diffs)), lines - 1)
        return Block("diff", text + (f"\n… {plural(hidden, 'more line')}" if hidden else ""))
    text, hidden = fold(shown_exactly(readable(args)), lines - 1)
    return Block("output", text + (f"\n… {plural(hidden, 'more line')}" if hidden else ""), "dim")


def readable(value: Any, indent: str = "") -> str:
    """Arguments as a person reads them: ``key: value`` lines, a list's items as ``- item`` under its
    key, a text of several lines indented under its key; never JSON's quotes and escapes."""
    if isinstance(value, Mapping):
        lines = []
        for key, item in value.items():
            if _simple(item):
                lines.append(f"{indent}{key}: {_scalar(item)}")
            else:
                lines.append(f"{indent}{key}:")
                lines.append(readable(item, indent + "  "))
        return "\n".join(lines) if lines else f"{indent}(none)"
    if isinstance(value, list | tuple):
        items = [
            f"{indent}- {_scalar(item)}" if _simple(item) else f"{indent}-\n" + readable(item, indent + "  ")
            for item in value
        ]
        return "\n".join(items) if items else f"{indent}(none)"
    text = _scalar(value)
    return "\n".join(indent + line for line in text.split("\n"))


def _simple(value: Any) -> bool:
    return not isinstance(value, Mapping | list | tuple) and "\n" not in _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
