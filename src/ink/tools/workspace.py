"""The working directory tools act in: resolving the paths the model gives, showing tidy ones back."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

from ink.tools.limits import bounded


def resolve_path(cwd: str | os.PathLike[str], path: str) -> Path:
    """The absolute, lexically normalised path ``path`` names when relative to ``cwd``.

    ``~`` is expanded; ``..`` is collapsed without looking at the disk, so symlinks are not followed (see
    ``real_target`` for what a write would really touch). Never raises for odd input: an empty string
    names ``cwd`` itself.
    """
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    resolved = Path(os.path.normpath(os.path.join(os.path.abspath(cwd), expanded)))
    return _unescaped(resolved) if "\\x" in path and _byte_escape().search(path) else resolved


@cache  # compiled on first use: a run that names no path with a \xNN in it never needs it
def _byte_escape() -> re.Pattern[str]:
    return re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def _unescaped(path: Path) -> Path:
    """ink shows a byte of a file name that is not UTF-8 as ``\\xNN`` (ink.ai.unicode), so the model names
    that file the same way: when no file has the name as written, the one with those bytes is meant."""
    if os.path.lexists(path):
        return path
    raw = Path(_byte_escape().sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), str(path)))
    return raw if os.path.lexists(raw) else path


def real_target(cwd: str | os.PathLike[str], path: str) -> Path:
    """The file a write to ``path`` really changes: ``resolve_path`` with every symlink followed.

    write and edit replace the target of a symlink, not the link, so permission checks must look here.
    """
    return Path(os.path.realpath(resolve_path(cwd, path)))


def written_paths(workspace: Workspace, given: str) -> tuple[Path, ...]:
    """What a write to ``given`` touches, for permission rules: the file that really changes (symlinks
    followed) first, then the path as named when it differs."""
    target, named = real_target(workspace.root, given), workspace.resolve(given)
    return (target,) if named == target else (target, named)


class Workspace:
    """The directory relative paths start from. Immutable: a tool set is built for one working directory."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(os.path.abspath(root))

    @property
    def root(self) -> Path:
        return self._root

    def resolve(self, path: str) -> Path:
        return resolve_path(self._root, path)

    def contains(self, path: Path) -> bool:
        return path == self._root or path.is_relative_to(self._root)

    def name(self, path: Path) -> str:
        """``path`` (already resolved: ``~`` expanded) whole, for listings and for programs run in the
        root: relative (posix) inside the workspace, so their output names files tidily; absolute
        outside."""
        return self._relative(path) if self.contains(path) else str(path)

    def display(self, path: Path, given: str | None = None) -> str:
        """A tidy name for ``path`` to show in a message: relative (posix) inside the workspace, else as
        the model gave it; cut to ``MAX_ECHO_CHARS`` (a message never quotes a huge input whole)."""
        if self.contains(path):
            return bounded(self._relative(path))
        return bounded(given if given is not None else str(path))

    def _relative(self, path: Path) -> str:
        rel = path.relative_to(self._root).as_posix()
        return rel if rel != "." else "."

    def __repr__(self) -> str:
        return f"Workspace({str(self._root)!r})"


def as_workspace(cwd: Workspace | str | os.PathLike[str]) -> Workspace:
    return cwd if isinstance(cwd, Workspace) else Workspace(cwd)
