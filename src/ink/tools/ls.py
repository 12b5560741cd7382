"""ls: the entries of one folder, .gitignore-aware."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.tools.base import BaseTool, arg_str, error, get_str, object_schema
from ink.tools.files import describe_os_error
from ink.tools.ignore import ALWAYS_HIDDEN, IgnoreRules
from ink.tools.limits import MAX_LIST_ENTRIES, plural
from ink.tools.workspace import Workspace

DESCRIPTION = f"""List the entries of one folder (default: the working directory), sorted by name.
- Folders end with `/`; symlinks show their target (`name -> target`).
- Entries ignored by .gitignore, and .git, are left out; a last line says how many were hidden.
- At most {MAX_LIST_ENTRIES} entries. To find files at any depth use glob."""


class LsTool(BaseTool):
    name = "ls"
    description = DESCRIPTION
    parameters = object_schema(
        {"path": {"type": "string", "description": "Folder to list (default: working directory)."}},
        [],
    )
    safe = True
    kind = "read"

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        given = arg_str(args, "path")
        return CallDescription(f"ls {given or '.'}", (self._workspace.resolve(given or "."),))

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        given = get_str(args, "path", ".")
        return await asyncio.to_thread(self.list_sync, given)

    def list_sync(self, given: str) -> ToolOutput:
        folder = self._workspace.resolve(given)
        shown = self._workspace.display(folder, given)
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except NotADirectoryError:
            return error(f"{shown} is a file, not a folder. Use read to see its content.")
        except OSError as exc:
            return error(describe_os_error(exc, shown))
        rules = IgnoreRules.for_folder(folder, self._workspace.root)
        lines: list[str] = []
        hidden = 0
        for entry in entries:
            is_dir = _is_dir(entry)
            if rules.ignored(Path(entry.path), is_dir):
                hidden += entry.name not in ALWAYS_HIDDEN
                continue
            lines.append(_describe(entry, is_dir))
        return ToolOutput(_report(shown, lines, hidden))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _describe(entry: os.DirEntry[str], is_dir: bool) -> str:
    name = entry.name + ("/" if is_dir else "")
    if entry.is_symlink():
        try:
            return f"{name} -> {os.readlink(entry.path)}"
        except OSError:
            return name
    return name


def _report(shown: str, lines: list[str], hidden: int) -> str:
    notes = []
    if len(lines) > MAX_LIST_ENTRIES:
        notes.append(f"[Showing {MAX_LIST_ENTRIES} of {len(lines)} entries; use glob to narrow them down.]")
        lines = lines[:MAX_LIST_ENTRIES]
    if hidden:
        notes.append(f"[{plural(hidden, 'entry', 'entries')} hidden by .gitignore.]")
    if not lines:
        return "\n".join([f"{shown} is empty." if not hidden else f"{shown} has no entries to show.", *notes])
    return "\n".join([*lines, *notes])
