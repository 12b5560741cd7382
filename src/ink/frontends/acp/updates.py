"""What the editor is shown: ``session/update`` payloads for text, thinking and tool calls, the history
replayed by ``session/load``, and the question of ``session/request_permission``. Pure data in, JSON out
(the one exception: a ``write`` call reads the file it replaces, so the editor can show a true diff).

Tool calls: ``kind`` from the tool (read/ls: read; grep/glob: search; write/edit: edit; bash: execute),
a ``title`` from the arguments (``bash: npm test``, ``read src/app.py``), ``locations`` for the files a call
reads or changes, diffs for ``edit``/``write``, and the result text when the call ends.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ink.ai.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ink.config.commands import CommandBook
from ink.tools.workspace import real_target, resolve_path

Update = dict[str, Any]
Status = Literal["pending", "in_progress", "completed", "failed"]

TOOL_KINDS = {
    "read": "read",
    "ls": "read",
    "grep": "search",
    "glob": "search",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
}
FENCED_KINDS = frozenset({"read", "search", "execute"})  # output shown verbatim, not as markdown
TITLE_CHARS = 120
DIFF_SOURCE_BYTES = 256 * 1024  # larger files replaced by ``write`` are shown without their old text
SUMMARY_INTRO = "Summary of the earlier conversation:\n"

PERMISSION_OPTIONS = (
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
)


def available_commands(book: CommandBook) -> Update:
    """The custom commands (docs/commands.md), which the editor offers after ``/`` in its prompt box."""
    commands = [
        {"name": c.name, "description": c.summary, "input": {"hint": c.argument_hint or "arguments"}}
        for c in book.commands.values()
    ]
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def message_chunk(text: str) -> Update:
    return {"sessionUpdate": "agent_message_chunk", "content": _text(text)}


def thought_chunk(text: str) -> Update:
    return {"sessionUpdate": "agent_thought_chunk", "content": _text(text)}


def user_chunk(text: str) -> Update:
    return {"sessionUpdate": "user_message_chunk", "content": _text(text)}


def tool_call(
    call_id: str, name: str, args: Mapping[str, Any], cwd: Path, status: Status = "pending"
) -> Update:
    """The ``tool_call`` announcing a call (R2: when handling begins, before any check)."""
    return {"sessionUpdate": "tool_call", **describe_call(call_id, name, args, cwd), "status": status}


def describe_call(
    call_id: str, name: str, args: Mapping[str, Any], cwd: Path, *, diffs: Sequence[Update] | None = None
) -> Update:
    """The fields that describe a call: id, title, kind, raw input, locations, and its diffs (computed
    from the arguments and the file on disk unless given)."""
    described: Update = {
        "toolCallId": call_id,
        "title": title(name, args),
        "kind": TOOL_KINDS.get(name, "other"),
        "rawInput": dict(args),
    }
    locations = _locations(name, args, cwd)
    if locations:
        described["locations"] = locations
    diffs = _diffs(name, args, cwd) if diffs is None else diffs
    if diffs:
        described["content"] = list(diffs)
    return described


def status_update(call_id: str, status: Status, **fields: Any) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status, **fields}


def tool_result(result: ToolResult, diffs: Sequence[Update] = ()) -> Update:
    """The ``tool_call_update`` that ends a call: ``completed`` or ``failed`` (an error, or stopped by an
    abort), with its output as content, after ``diffs`` (those announced with the call) when it worked.
    The content replaces what the call showed so far."""
    failed = result.is_error or bool(result.interrupted)
    kind = TOOL_KINDS.get(result.name, "other")
    content: list[Update] = [] if failed else list(diffs)
    if result.output:
        shown = _fence(result.output) if kind in FENCED_KINDS and not failed else result.output
        content.append({"type": "content", "content": _text(shown)})
    return status_update(result.tool_call_id, "failed" if failed else "completed", content=content)


def live_output(call_id: str, output: str) -> Update:
    """A running call's output so far (a ``tool_update``): shown as its content until the result."""
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "content": [{"type": "content", "content": _text(_fence(output))}],
    }


def bang_call(call_id: str, command: str) -> Update:
    """A ``!command`` line (R14) shown as a shell call the user made."""
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": f"!{_shorten(command)}",
        "kind": "execute",
        "status": "in_progress",
        "rawInput": {"command": command},
    }


def bang_result(call_id: str, output: str, exit_code: int | None, interrupted: bool) -> Update:
    failed = interrupted or exit_code != 0
    content = [{"type": "content", "content": _text(_fence(output))}] if output else []
    return status_update(call_id, "failed" if failed else "completed", content=content)


def permission_request(
    session_id: str, call_id: str, name: str, args: Mapping[str, Any], cwd: Path
) -> Update:
    """The params of ``session/request_permission`` for one call."""
    call = describe_call(call_id, name, args, cwd) | {"status": "pending"}
    return {"sessionId": session_id, "toolCall": call, "options": [dict(o) for o in PERMISSION_OPTIONS]}


def title(name: str, args: Mapping[str, Any]) -> str:
    """A short human title for a call: the tool and what it works on."""
    path, pattern = _str(args, "path"), _str(args, "pattern")
    match name:
        case "bash":
            return f"bash: {_shorten(_str(args, 'command') or '')}"
        case "read":
            offset = args.get("offset")
            at = f" (from line {offset})" if isinstance(offset, int) and offset > 1 else ""
            return f"read {path or '?'}{at}"
        case "write" | "edit":
            return f"{name} {path or '?'}"
        case "ls":
            return f"ls {path or '.'}"
        case "grep" | "glob":
            where = f" in {path}" if path else ""
            return _shorten(f"{name} {pattern or '?'}{where}")
    return name


def replay(messages: Sequence[Message], cwd: Path) -> Iterator[Update]:
    """The history as the updates that would have shown it (``session/load``). The interruption marker
    (R23) is ink's note to the model, not a message of the conversation: it is left out."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResult)}
    for message in messages:
        if isinstance(message, UserMessage):
            if message.kind == "prompt":
                yield user_chunk(message.text)
            elif message.kind == "summary":
                yield thought_chunk(SUMMARY_INTRO + message.text)
        elif isinstance(message, AssistantMessage):
            yield from _replay_reply(message, results, cwd)


def _replay_reply(
    message: AssistantMessage, results: Mapping[str, ToolResult], cwd: Path
) -> Iterator[Update]:
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            yield message_chunk(block.text)
        elif isinstance(block, ThinkingBlock) and block.thinking:
            yield thought_chunk(block.thinking)
        elif isinstance(block, ToolCall):
            # a replaced file's old text is gone by now: only edits (their own texts) show as diffs
            diffs = _diffs(block.name, block.arguments, cwd) if block.name == "edit" else []
            call = describe_call(block.id, block.name, block.arguments, cwd, diffs=diffs)
            yield {"sessionUpdate": "tool_call", **call, "status": "in_progress"}
            result = results.get(block.id)
            if result is not None:
                yield tool_result(result, diffs)


# -- pieces ------------------------------------------------------------------------------------------


def _text(text: str) -> Update:
    return {"type": "text", "text": text}


def _str(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) else None


def _shorten(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    more = line != text.strip()
    if len(line) > TITLE_CHARS:
        line, more = line[: TITLE_CHARS - 1], True
    return line + "…" if more else line


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"


def _locations(name: str, args: Mapping[str, Any], cwd: Path) -> list[Update]:
    path = _str(args, "path")
    if name not in ("read", "write", "edit") or not path:
        return []
    location: Update = {"path": str(resolve_path(cwd, path))}
    offset = args.get("offset")
    if name == "read" and isinstance(offset, int) and offset >= 1:
        location["line"] = offset
    return [location]


def _diffs(name: str, args: Mapping[str, Any], cwd: Path) -> list[Update]:
    """``edit``: one diff per replacement (the texts given, not the whole file). ``write``: the whole
    new content against the file it replaces (read now, before the call runs; null for a new file)."""
    path = _str(args, "path")
    if not path:
        return []
    shown = str(resolve_path(cwd, path))
    if name == "write":
        content = _str(args, "content")
        if content is None:
            return []
        old = _current_text(real_target(cwd, path))
        return [{"type": "diff", "path": shown, "oldText": old, "newText": content}]
    if name != "edit":
        return []
    edits = args.get("edits")
    pairs = edits if isinstance(edits, list) else [args]
    return [
        {"type": "diff", "path": shown, "oldText": pair["old_text"], "newText": pair["new_text"]}
        for pair in pairs
        if isinstance(pair, Mapping) and _is_text(pair.get("old_text")) and _is_text(pair.get("new_text"))
    ]


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _current_text(path: Path) -> str | None:
    """The text of a file ``write`` is about to replace; None when it does not exist, is too large to
    show or is not text."""
    try:
        if os.path.getsize(path) > DIFF_SOURCE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
