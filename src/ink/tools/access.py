"""What a tool call would touch, for permission checks made before it runs (the pre-execution hook).

Only the arguments are read: nothing is executed. Paths are resolved the way the tools resolve them, so a
permission rule sees the file that would really change (symlinks followed for writes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ink.tools.workspace import real_target, resolve_path

READ_TOOLS = frozenset({"read", "grep", "glob", "ls"})
WRITE_TOOLS = frozenset({"write", "edit"})
EXEC_TOOLS = frozenset({"bash"})
DELEGATE_TOOLS = frozenset({"task"})  # hands work to a sub-agent, whose own calls are each checked

AccessKind = Literal["read", "write", "execute", "delegate", "unknown"]


@dataclass(frozen=True, slots=True)
class ToolAccess:
    """``paths``: absolute paths read or written (writes: symlinks followed). ``command``: for bash."""

    tool: str
    kind: AccessKind
    paths: tuple[Path, ...] = ()
    command: str | None = None


def describe_access(tool: str, args: Mapping[str, Any], cwd: str | os.PathLike[str]) -> ToolAccess:
    """What ``tool`` called with ``args`` in ``cwd`` reads, writes or runs. Never raises on odd arguments:
    a missing or non-string path gives no paths (the call will fail validation anyway)."""
    path = args.get("path")
    if tool in WRITE_TOOLS:
        paths = (real_target(cwd, path),) if isinstance(path, str) else ()
        return ToolAccess(tool, "write", paths)
    if tool in READ_TOOLS:
        given = path if isinstance(path, str) else "."
        return ToolAccess(tool, "read", (resolve_path(cwd, given),))
    if tool in EXEC_TOOLS:
        command = args.get("command")
        return ToolAccess(tool, "execute", (), command if isinstance(command, str) else None)
    if tool in DELEGATE_TOOLS:
        return ToolAccess(tool, "delegate")
    return ToolAccess(tool, "unknown")


def written_path(tool: str, args: Mapping[str, Any], cwd: str | os.PathLike[str]) -> Path | None:
    """The file a write or edit call would change (symlinks followed), or None for any other call."""
    access = describe_access(tool, args, cwd)
    return access.paths[0] if access.kind == "write" and access.paths else None
