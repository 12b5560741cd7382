"""write: create or replace a whole file, atomically."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.agent.tool import ToolCallContext, ToolOutput
from ink.tools.base import BaseTool, error, get_str, object_schema
from ink.tools.files import atomic_write, describe_os_error
from ink.tools.limits import plural
from ink.tools.workspace import Workspace

DESCRIPTION = """Write a whole file: create it, or replace all of its content.
- `path`: relative to the working directory, or absolute. Missing parent folders are created.
- `content`: the complete new content, written as UTF-8 exactly as given.
- The file is replaced atomically and keeps its permissions. Through a symlink, the target is written.
- To change part of an existing file prefer `edit`: it is safer and shows a diff."""


class WriteTool(BaseTool):
    name = "write"
    description = DESCRIPTION
    parameters = object_schema(
        {
            "path": {"type": "string", "description": "File to write."},
            "content": {"type": "string", "description": "The complete content of the file."},
        },
        ["path", "content"],
    )
    safe = False

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        given = get_str(args, "path")
        content = get_str(args, "content")
        return await asyncio.to_thread(self.write_sync, given, content)

    def write_sync(self, given: str, content: str) -> ToolOutput:
        path = self._workspace.resolve(given)
        shown = self._workspace.display(path, given)
        target = Path(os.path.realpath(path))
        if target.is_dir():
            return error(f"{shown} is a directory; give the path of a file inside it.")
        data = content.encode("utf-8", "replace")
        try:
            old_size = target.stat().st_size if target.exists() else None
            created = atomic_write(target, data)
        except FileExistsError:
            return error(f"Cannot create the folders for {shown}: a file is in the way.")
        except OSError as exc:
            return error(f"Cannot write {shown}: {describe_os_error(exc, shown)}.")
        lines = plural(content.count("\n") + (1 if content and not content.endswith("\n") else 0), "line")
        if created:
            return ToolOutput(f"Created {shown} ({plural(len(data), 'byte')}, {lines}).")
        return ToolOutput(
            f"Overwrote {shown} ({plural(len(data), 'byte')}, {lines}; it had {old_size} bytes)."
        )
