"""Walking a folder tree the way glob sees it, and glob patterns as regular expressions.

The walk is depth-first with each folder's entries sorted by name, skips what .gitignore ignores (an
ignored folder is not entered), never follows a symlink into a folder (no loops), and stops early when
its ``stop`` event is set or its visit budget is spent.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import msgspec

from ink.tools.ignore import IgnoreRules

MAX_VISITS = 200_000
"""Entries a walk may look at before it gives up, so a glob over a huge tree stays bounded."""


class WalkState(msgspec.Struct):
    """Shared with the caller: why a walk ended early, if it did."""

    stop: threading.Event
    visits: int = 0
    exhausted: bool = False


def walk(
    folder: Path, rules: IgnoreRules, state: WalkState, max_depth: int | None = None
) -> Iterator[tuple[Path, bool]]:
    """Yield (path, is_dir) for every entry below ``folder`` that is not ignored, in tree order. A stack
    of the folders being listed, not recursion: a repository's folders nested thousands deep (a path
    longer than any the system opens) end the walk there, not the tool with a RecursionError."""
    stack = [(iter(_sorted_entries(folder)), rules, max_depth)]
    while stack:
        entries, rules, depth = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if state.stop.is_set() or state.visits >= MAX_VISITS:
            state.exhausted = state.visits >= MAX_VISITS
            return
        state.visits += 1
        path = Path(entry.path)
        is_dir = _is_dir(entry)
        if rules.ignored(path, is_dir):
            continue
        yield path, is_dir
        if is_dir and not entry.is_symlink() and (depth is None or depth > 1):
            deeper = None if depth is None else depth - 1
            stack.append((iter(_sorted_entries(path)), rules.enter(path), deeper))


def _sorted_entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return sorted(scan, key=lambda e: e.name)
    except OSError:
        return []  # unreadable folders (or a path too long to open) are skipped, as find and rg do


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def split_pattern(pattern: str) -> tuple[str, str]:
    """Split a glob into its literal leading folders and the rest: ``src/**/*.py`` -> ``src``, ``**/*.py``."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if _MAGIC.search(part):
            break
        literal.append(part)
    prefix = "/".join(literal)
    if pattern.startswith("/") and not prefix:
        prefix = "/"
    return prefix, "/".join(parts[len(literal) :])


def pattern_depth(pattern: str) -> int | None:
    """How many folder levels ``pattern`` can reach (None when it has ``**`` and reaches any depth)."""
    return None if "**" in pattern else pattern.count("/") + 1


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex matching the relative posix paths ``pattern`` matches. Supports ``*``, ``?``, ``[...]``,
    ``**`` (any number of folders) and ``{a,b}`` alternatives. ``*`` matches dot files too."""
    alternatives = [_translate(p) for p in expand_braces(pattern)]
    return re.compile("(?:" + "|".join(alternatives) + ")")


def expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [x for option in match.group(1).split(",") for x in expand_braces(head + option + tail)]


_MAGIC = re.compile(r"[*?\[{]")


def _translate(pattern: str) -> str:
    segments = pattern.strip("/").split("/")
    out = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(_segment(segment) + ("" if last else "/"))
    return "".join(out)


def _segment(segment: str) -> str:
    out = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := segment.find("]", i + 2)) > 0:
            body = segment[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
