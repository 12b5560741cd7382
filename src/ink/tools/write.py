"""write: create or replace a whole file, atomically."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.ai.details import MAX_KEPT_TEXT, FileDiff, file_diff
from ink.regular_file import read_regular
from ink.tools.base import BaseTool, arg_str, error, get_str, object_schema
from ink.tools.edit import unified_diff
from ink.tools.files import PinnedFile, describe_os_error, pin, write_pinned
from ink.tools.limits import plural
from ink.tools.workspace import Workspace, written_paths

DESCRIPTION = """Write a whole file: create it, or replace all of its content.
- `path`: relative to the working directory, or absolute. Missing parent folders are created.
- `content`: the complete new content, written as UTF-8 exactly as given.
- The file is replaced atomically and keeps its permissions. Through a symlink, the target is written;
  a symlink is not followed out of the working directory (name the real path).
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
    kind = "edit"

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        """Paths: the file that really changes (symlinks followed), then the path as named. Preview: the
        new content against the file it replaces (read now; None for a new, large or binary file)."""
        given, content = arg_str(args, "path"), arg_str(args, "content")
        if not given:
            return CallDescription(self.title(args))
        paths = written_paths(self._workspace, given)
        if content is None:
            return CallDescription(self.title(args), paths)
        path = self._workspace.resolve(given)
        before = current_text(paths[0])
        shown = self._workspace.display(path, given)  # named as the result's diff will name it
        preview = file_diff(str(path), before, content, unified_diff(before or "", content, shown))
        return CallDescription(self.title(args), paths, preview=(preview,))

    def title(self, args: Mapping[str, Any]) -> str:
        """The title of ``describe``, without reading the file (``ink.agent.tool.call_title``)."""
        return f"write {arg_str(args, 'path') or '?'}"

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        given = get_str(args, "path")
        content = get_str(args, "content")
        return await asyncio.to_thread(self.write_sync, given, content)

    def write_sync(self, given: str, content: str) -> ToolOutput:
        path = self._workspace.resolve(given)
        shown = self._workspace.display(path, given)
        data = content.encode("utf-8", "replace")
        try:
            with pin(self._workspace.root, given, create_folders=True) as target:
                old = target.stat()
                if old is not None and stat.S_ISDIR(old.st_mode):
                    return error(f"{shown} is a directory; give the path of a file inside it.")
                before = _pinned_text(target, old)
                created = write_pinned(target, data)
        except IsADirectoryError:
            return error(f"{shown} is a directory; give the path of a file inside it.")
        except (FileExistsError, NotADirectoryError):
            return error(f"Cannot create the folders for {shown}: a file is in the way.")
        except OSError as exc:
            return error(f"{describe_os_error(exc, shown, 'write')}.")
        if old is not None and before is None:  # it replaced a file too large or not text to show
            detail = FileDiff(str(path), None, None)
        else:
            detail = file_diff(str(path), before, content, unified_diff(before or "", content, shown))
        lines = plural(content.count("\n") + (1 if content and not content.endswith("\n") else 0), "line")
        if created or old is None:
            return ToolOutput(f"Created {shown} ({plural(len(data), 'byte')}, {lines}).", details=(detail,))
        return ToolOutput(
            f"Overwrote {shown} ({plural(len(data), 'byte')}, {lines}; it had {old.st_size} bytes).",
            details=(detail,),
        )


def _pinned_text(target: PinnedFile, status: os.stat_result | None) -> str | None:
    """Like ``current_text``, for the file about to be replaced through its held folder."""
    if status is None or not stat.S_ISREG(status.st_mode) or status.st_size > MAX_KEPT_TEXT:
        return None
    try:
        return target.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def current_text(path: Path) -> str | None:
    """The UTF-8 text of the file at ``path``; None when it does not exist, is too large to keep whole
    (``MAX_KEPT_TEXT``) or is not text."""
    try:  # describe runs on the event loop: a FIFO is never opened, a large file never read
        return read_regular(path, MAX_KEPT_TEXT).data.decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
