"""The JSON a hook reads on stdin, in the shape Claude Code's hooks read (docs/hooks.md), so that their
scripts work unchanged: ``hook_event_name``, ``tool_name`` in Claude Code's spelling (``Bash``, ``Edit``),
``tool_input`` with its field names added (``file_path``, ``old_string``), ``session_id``, ``cwd``. ink's
own names ride along (``event``, ``ink_tool_name``) for scripts written for ink.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.ai.details import FileDiff
from ink.ai.messages import ToolCall, ToolResult
from ink.config.hooks import HookEvent

EVENT_NAMES: dict[HookEvent, str] = {
    "pre_tool": "PreToolUse",
    "post_tool": "PostToolUse",
    "user_prompt": "UserPromptSubmit",
    "stop": "Stop",
    "session_start": "SessionStart",
}
CLAUDE_TOOL_NAMES = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "grep": "Grep",
    "glob": "Glob",
    "ls": "LS",
    "task": "Task",
}
_ALIASES = {"old_text": "old_string", "new_text": "new_string"}
CLAUDE_PERMISSION_MODES = {"ask": "default", "accept-edits": "acceptEdits", "yolo": "bypassPermissions"}


def claude_tool_name(name: str) -> str:
    return CLAUDE_TOOL_NAMES.get(name, name)


def base_event(
    event: HookEvent, cwd: Path, session_id: str | None, transcript: Path | None
) -> dict[str, Any]:
    return {
        "hook_event_name": EVENT_NAMES[event],
        "event": event,
        "session_id": session_id or "",
        "transcript_path": str(transcript) if transcript is not None else "",
        "cwd": str(cwd),
    }


def permission_fields(mode: str) -> dict[str, str]:
    """``permission_mode`` in Claude Code's words (``default``, ``acceptEdits``, ``bypassPermissions``),
    ink's own in ``ink_permission_mode``."""
    return {"permission_mode": CLAUDE_PERMISSION_MODES.get(mode, mode), "ink_permission_mode": mode}


def tool_fields(call: ToolCall, cwd: Path) -> dict[str, Any]:
    return {
        "tool_name": claude_tool_name(call.name),
        "ink_tool_name": call.name,
        "tool_use_id": call.id,
        "tool_input": tool_input(call.arguments, cwd),
    }


def tool_input(args: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """The arguments, plus Claude Code's names for them: ``file_path`` (absolute), ``old_string``, ..."""
    shown = dict(args)
    path = args.get("path")
    if isinstance(path, str) and "file_path" not in shown:
        shown["file_path"] = str((cwd / Path(path).expanduser()).resolve()) if path else path
    for ours, theirs in _ALIASES.items():
        if ours in args and theirs not in shown:
            shown[theirs] = args[ours]
    return shown


def arguments_from_hook(updated: Mapping[str, Any], args: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """A pre_tool hook's ``updatedInput`` in the tool's own argument names: the Claude Code names ink added
    to what the hook read (``file_path``, ``old_string``, ...) are taken back, a changed one as the new
    value of the tool's own argument (``file_path`` -> ``path``). Fields are otherwise the hook's: the
    input is replaced whole, as Claude Code replaces it, and checked against the tool's schema later."""
    shown = tool_input(args, cwd)
    result = dict(updated)
    for ours, theirs in (("path", "file_path"), *_ALIASES.items()):
        if theirs in args or theirs not in result:
            continue  # a tool's own argument of that name, or one the hook left out
        value = result.pop(theirs)
        if ours not in result or value != shown.get(theirs):
            result[ours] = value
    return result


def tool_response(result: ToolResult, call: ToolCall, cwd: Path) -> dict[str, Any]:
    """ink's ``{output, isError, success, filePath?}``, and beside it the fields Claude Code's hooks read
    for its tools: ``stdout``, ``stderr``, ``interrupted`` for Bash (ink runs a command with stdout and
    stderr on one pipe, so ``stdout`` holds both and ``stderr`` is empty); ``type``, ``filePath``,
    ``content`` for Write; ``filePath``, ``oldString``, ``newString``, ``replaceAll`` for Edit; ``file``
    for Read."""
    response: dict[str, Any] = {
        "output": result.output,
        "isError": result.is_error,
        "success": not result.is_error,
    }
    file_path = tool_input(call.arguments, cwd).get("file_path")
    if file_path:
        response["filePath"] = file_path
    return response | _claude_response(result, call, file_path)


def _claude_response(result: ToolResult, call: ToolCall, file_path: Any) -> dict[str, Any]:
    args = call.arguments
    if call.name == "bash":
        return {"stdout": result.output, "stderr": "", "interrupted": bool(result.interrupted)}
    if call.name == "write" and isinstance(args.get("content"), str):
        created = any(isinstance(d, FileDiff) and d.before is None for d in result.details or ())
        return {"type": "create" if created else "update", "content": args["content"]}
    if call.name == "edit":
        edits = args.get("edits")
        if isinstance(edits, list):  # Claude Code's MultiEdit
            return {"edits": [_edit_fields(item) for item in edits if isinstance(item, dict)]}
        return _edit_fields(args)
    if call.name == "read" and file_path:
        return {"type": "text", "file": {"filePath": file_path, "content": result.output}}
    return {}


def _edit_fields(args: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "oldString": args.get("old_text"),
        "newString": args.get("new_text"),
        "replaceAll": bool(args.get("replace_all", False)),
    }
