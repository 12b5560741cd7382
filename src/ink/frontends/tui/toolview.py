"""How tool calls read on screen: a one-line summary of a call, its result folded, an edit's diff.

Pure functions of a call's name, arguments and result; the renderer decides when to print them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from ink.ai.messages import ToolResult
from ink.frontends.tui.blocks import Block, Tone, fold, plural, sanitize

SUMMARY_WIDTH = 80
OUTPUT_LINES = 4  # lines of a result shown before "N more lines"
ERROR_LINES = 8
DIFF_LINES = 40
PREVIEW_LINES = 30  # lines of a command or diff in a permission question
EXPAND_KEY = "ctrl+o"
_PRIMARY = ("command", "path", "pattern", "file_path", "query", "url")


def describe_call(name: str, args: Mapping[str, Any]) -> str:
    """``bash ls -la``, ``read src/a.py``, ``grep TODO src``: the call in one short line."""
    primary = next((args[k] for k in _PRIMARY if isinstance(args.get(k), str)), None)
    if primary is None:
        detail = json.dumps(dict(args), ensure_ascii=False, default=str) if args else ""
    else:
        detail = primary.strip().split("\n", 1)[0] + (" …" if "\n" in primary.strip() else "")
        where = args.get("path")
        if name in ("grep", "glob") and isinstance(where, str) and where != primary:
            detail += f"  in {where}"
    detail = sanitize(detail)
    if len(detail) > SUMMARY_WIDTH:
        detail = detail[: SUMMARY_WIDTH - 1] + "…"
    return f"{name} {detail}".rstrip()


def duration_text(ms: int) -> str:
    return f"{ms / 1000:.1f}s" if ms >= 100 else f"{ms}ms"


def result_blocks(summary: str, result: ToolResult) -> tuple[list[Block], Block | None]:
    """The blocks of a finished call: its line and its folded output, and the whole output when part of
    it was folded away (for the expand key)."""
    if result.interrupted:
        took = duration_text(result.duration_ms)
        line = Block("tool", f"⏹ {summary} · interrupted after {took}", "interrupted")
    elif result.is_error:
        line = Block("tool", f"✗ {summary} · error", "error")
    else:
        line = Block("tool", f"✓ {summary} · {duration_text(result.duration_ms)}", "ok")
    output = sanitize(result.output).rstrip("\n")
    if not output.strip():
        return [line], None
    if result.name == "edit" and not result.is_error and "\n@@" in output:
        diff, whole = _diff_blocks(output)
        return [line, *diff], whole
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


def _diff_blocks(output: str) -> tuple[list[Block], Block | None]:
    summary, _, diff = output.partition("\n\n")
    shown, hidden = fold(diff, DIFF_LINES)
    blocks = [Block("output", summary, "dim")] if summary and not summary.startswith("---") else []
    if hidden:
        shown += f"\n… {plural(hidden, 'more line')} ({EXPAND_KEY} to expand)"
    blocks.append(Block("diff", shown))
    return blocks, Block("diff", diff) if hidden else None


def preview(name: str, args: Mapping[str, Any], lines: int = PREVIEW_LINES) -> Block:
    """What a permission question shows, in at most ``lines`` lines: the command, the diff of an edit,
    the start of a write."""
    lines = max(2, lines)
    if name == "bash" and isinstance(args.get("command"), str):
        text, hidden = fold(sanitize(args["command"]), lines - 1)
        return Block("bang", text + (f"\n… {plural(hidden, 'more line')}" if hidden else ""))
    path = str(args.get("path", ""))
    if name == "edit":
        return Block("diff", _edit_preview(path, args, lines))
    if name == "write" and isinstance(args.get("content"), str):
        text, hidden = fold(sanitize(args["content"]), lines - 2)
        added = [f"+{line}" for line in text.split("\n")]
        more = [f"… {plural(hidden, 'more line')}"] if hidden else []
        return Block("diff", "\n".join([f"+++ {path} (new content)", *added, *more]))
    text, hidden = fold(
        sanitize(json.dumps(dict(args), ensure_ascii=False, indent=2, default=str)), lines - 1
    )
    return Block("output", text + (f"\n… {plural(hidden, 'more line')}" if hidden else ""), "dim")


def _edit_preview(path: str, args: Mapping[str, Any], max_lines: int) -> str:
    edits = args.get("edits")
    pairs = (
        [(e.get("old_text", ""), e.get("new_text", "")) for e in edits if isinstance(e, Mapping)]
        if isinstance(edits, list)
        else [(args.get("old_text", ""), args.get("new_text", ""))]
    )
    lines = [f"--- a/{path}", f"+++ b/{path}"]
    for old, new in pairs:
        old_lines = str(old).split("\n")
        new_lines = str(new).split("\n")
        lines += [
            line.rstrip("\n")
            for line in difflib.unified_diff(old_lines, new_lines, lineterm="", n=2)
            if not line.startswith(("---", "+++"))
        ]
    text, hidden = fold(sanitize("\n".join(lines)), max_lines - 1)
    return text + (f"\n… {plural(hidden, 'more line')}" if hidden else "")
