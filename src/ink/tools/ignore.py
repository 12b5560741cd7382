""".gitignore rules for glob and ls, with git's semantics (via pathspec).

Rules are anchored where git anchors them: at the repository's top (the nearest ancestor holding
``.git``), else at the workspace root, else at the folder being listed. Every ``.gitignore`` from there
down applies to its own folder and below; a deeper file overrides a shallower one; ``.git/info/exclude``
applies from the top. ``.git`` itself is always hidden. The user's global excludes file is not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ink.regular_file import read_regular

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

ALWAYS_HIDDEN = frozenset({".git"})
MAX_IGNORE_BYTES = 256 << 10  # the head of a larger file: pathspec compiles ~5,000 patterns a second
MAX_PATTERN_CHARS = 4096  # PATH_MAX: a longer pattern matches no path, and compiling it is slow


class _Rules(msgspec.Struct, frozen=True):
    """The ignore rules of one file, relative to the folder ``base``."""

    base: Path
    spec: GitIgnoreSpec


class IgnoreRules:
    """Which paths under ``anchor`` are ignored. Grows as a walk enters folders (``enter``)."""

    def __init__(self, anchor: Path, rules: tuple[_Rules, ...] = ()) -> None:
        self.anchor = anchor
        self._rules = rules

    @classmethod
    def for_folder(cls, folder: Path, workspace_root: Path) -> IgnoreRules:
        """The rules in force for the entries of ``folder``: from the anchor down to ``folder`` itself."""
        anchor = _repo_top(folder) or (workspace_root if folder.is_relative_to(workspace_root) else folder)
        rules = cls(anchor)
        exclude = _load(anchor / ".git" / "info" / "exclude", anchor)
        if exclude is not None:
            rules = IgnoreRules(anchor, (exclude,))
        for part in [anchor, *_between(anchor, folder)]:
            rules = rules.enter(part)
        return rules

    def enter(self, folder: Path) -> IgnoreRules:
        """The rules for ``folder``'s entries: these plus the folder's own ``.gitignore``, if any."""
        loaded = _load(folder / ".gitignore", folder)
        return self if loaded is None else IgnoreRules(self.anchor, (*self._rules, loaded))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        if path.name in ALWAYS_HIDDEN:
            return True
        verdict = None
        for rules in self._rules:  # shallow to deep: the deepest file with an opinion decides
            if not path.is_relative_to(rules.base):
                continue
            relative = path.relative_to(rules.base).as_posix() + ("/" if is_dir else "")
            include = rules.spec.check_file(relative).include
            if include is not None:
                verdict = include
        return bool(verdict)


def _repo_top(folder: Path) -> Path | None:
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def _between(anchor: Path, folder: Path) -> list[Path]:
    """The folders strictly below ``anchor`` down to ``folder`` inclusive (empty when unrelated)."""
    if folder == anchor or not folder.is_relative_to(anchor):
        return []
    parts = folder.relative_to(anchor).parts
    return [anchor.joinpath(*parts[: i + 1]) for i in range(len(parts))]


def _load(file: Path, base: Path) -> _Rules | None:
    try:  # a FIFO or a device is never opened; of a huge file, the rules of its head
        text = read_regular(file, MAX_IGNORE_BYTES, cut=True).data.decode("utf-8", "replace")
    except OSError:
        return None
    lines = [
        line
        for line in text.splitlines()
        if line.strip() and not line.startswith("#") and len(line) <= MAX_PATTERN_CHARS
    ]
    from pathspec import GitIgnoreSpec  # ~10 ms: imported when a listing first needs it

    return _Rules(base, GitIgnoreSpec.from_lines(lines)) if lines else None
