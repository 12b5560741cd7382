"""glob: find files by name pattern, .gitignore-aware."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.tools.base import BaseTool, error, get_str, object_schema, search_description
from ink.tools.ignore import IgnoreRules
from ink.tools.limits import MAX_LIST_ENTRIES
from ink.tools.walk import MAX_VISITS, WalkState, glob_regex, pattern_depth, split_pattern, walk
from ink.tools.workspace import Workspace

DESCRIPTION = f"""Find files and folders whose path matches a glob pattern, relative to `path` (default: \
the working directory).
- `*` matches within one folder name, `**` any number of folders, `?` one character, `[abc]` a set, \
`{{a,b}}` alternatives. `*.py` matches only at the top; `**/*.py` at any depth.
- Files ignored by .gitignore, and .git, are skipped. Folders end with `/`.
- Results are sorted in tree order, at most {MAX_LIST_ENTRIES}. To search file contents use grep."""


class GlobTool(BaseTool):
    name = "glob"
    description = DESCRIPTION
    parameters = object_schema(
        {
            "pattern": {"type": "string", "description": "Glob pattern, such as **/*.py or src/*.{ts,tsx}."},
            "path": {"type": "string", "description": "Folder to search in (default: working directory)."},
        },
        ["pattern"],
    )
    safe = True
    kind = "search"

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return search_description(self.name, args, self._workspace)

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        pattern = get_str(args, "pattern")
        given = get_str(args, "path", ".")
        if not pattern.strip():
            return error("The pattern is empty.")
        state = WalkState(threading.Event())
        remove = ctx.signal.on_abort(lambda _reason: state.stop.set())
        try:
            output = await asyncio.to_thread(self.glob_sync, pattern, given, state)
        finally:
            remove()
        if ctx.signal.aborted:
            return ToolOutput(
                "Interrupted by the user; the search was stopped.", is_error=True, interrupted=True
            )
        return output

    def glob_sync(self, pattern: str, given: str, state: WalkState) -> ToolOutput:
        start = self._workspace.resolve(given)
        prefix, rest = split_pattern(pattern.removeprefix("./"))
        folder = self._workspace.resolve(str(start / prefix)) if prefix else start
        if not start.is_dir():
            what = "does not exist" if not start.exists() else "is not a folder"
            return error(f"{self._workspace.display(start, given)} {what}.")
        if not folder.is_dir():
            return ToolOutput(f"No matches: {self._workspace.display(folder)} is not a folder.")
        regex = glob_regex(rest)
        rules = IgnoreRules.for_folder(folder, self._workspace.root)
        found: list[str] = []
        count = 0
        for path, is_dir in walk(folder, rules, state, pattern_depth(rest)):
            if regex.fullmatch(path.relative_to(folder).as_posix()):
                count += 1
                if len(found) < MAX_LIST_ENTRIES:
                    found.append(self._show(path, is_dir))
        return ToolOutput(_report(found, count, pattern, state))

    def _show(self, path: Path, is_dir: bool) -> str:
        return self._workspace.name(path) + ("/" if is_dir else "")


def _report(found: list[str], count: int, pattern: str, state: WalkState) -> str:
    notes = []
    if count > len(found):
        notes.append(f"[Showing {len(found)} of {count} matches; narrow the pattern or the path.]")
    if state.exhausted:
        notes.append(f"[The search stopped after looking at {MAX_VISITS} entries; narrow the path.]")
    if not found:
        hint = f" To search every folder, try **/{pattern}." if "/" not in pattern else ""
        return "\n".join([f"No files match {pattern}.{hint}", *notes])
    return "\n".join([*found, *notes])
