"""The workspace's paths for ``@`` completion: walked once in a thread, bounded, cached, refreshed.

Typing ``@`` must never wait for a walk: ``FileIndex.paths`` answers at once with what is known (the
walk starts in a thread on first use and again once the list is ``REFRESH_SECONDS`` old) and the
palette ranks again when the walk ends (``on_done``). The walk is breadth first (a capped walk of a huge
repository keeps the shallow files, the ones people mention most), honours ``.gitignore`` (``ink.tools.
ignore``: an ignored folder is not entered), skips hidden entries (``.venv``, ``.git``) and symlinked
folders (no loops, nothing outside the workspace), and stops after ``MAX_ENTRIES`` entries or
``MAX_SECONDS``, saying so (``FileIndex.cut``). One index per working folder.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from ink.tools.ignore import IgnoreRules

log = logging.getLogger(__name__)

MAX_ENTRIES = 20_000  # files and folders listed
MAX_SECONDS = 3.0
REFRESH_SECONDS = 30.0


class FileIndex:
    """``on_done`` is called from the walk's thread when a walk ends (the app hops to its loop)."""

    def __init__(
        self,
        root: Path,
        on_done: Callable[[], None] = lambda: None,
        *,
        max_entries: int = MAX_ENTRIES,
        max_seconds: float = MAX_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self._on_done = on_done
        self._max_entries, self._max_seconds, self._clock = max_entries, max_seconds, clock
        self._paths: tuple[str, ...] = ()
        self._walked_at: float | None = None  # when the last walk ended
        self._walking = False
        self._lock = threading.Lock()
        self.cut = False  # the last walk stopped at a bound: the list is not the whole workspace

    @property
    def walking(self) -> bool:
        return self._walking

    def paths(self) -> tuple[str, ...]:
        """The workspace's paths relative to the root (folders end in ``/``) as known now; starts a walk
        when there is none yet or the last one is old."""
        with self._lock:
            stale = self._walked_at is None or self._clock() - self._walked_at > REFRESH_SECONDS
            start = stale and not self._walking
            if start:
                self._walking = True
        if start:
            threading.Thread(target=self._walk, name="ink @ index", daemon=True).start()
        return self._paths

    def _walk(self) -> None:
        try:
            found, cut = walk(self.root, self._max_entries, self._max_seconds, self._clock)
            self._paths, self.cut = tuple(found), cut
        except Exception:  # a walk that fails leaves the last list; @ still completes one level
            log.exception("listing %s for @ completion failed", self.root)
        finally:
            with self._lock:
                self._walking, self._walked_at = False, self._clock()
        self._on_done()


def walk(
    root: Path, max_entries: int, max_seconds: float, clock: Callable[[], float]
) -> tuple[list[str], bool]:
    """The paths under ``root``, breadth first, and whether a bound stopped the walk."""
    deadline = clock() + max_seconds
    found: list[str] = []
    # each folder with the rules of its parent's entries: its own .gitignore is read when it is listed
    folders: deque[tuple[Path, str, IgnoreRules | None]] = deque([(root, "", None)])
    while folders:
        folder, prefix, parent = folders.popleft()
        rules = IgnoreRules.for_folder(root, root) if parent is None else parent.enter(folder)
        for name, is_dir in _entries(folder):
            if name.startswith(".") or rules.ignored(folder / name, is_dir):
                continue
            found.append(f"{prefix}{name}/" if is_dir else prefix + name)
            if is_dir:
                folders.append((folder / name, f"{prefix}{name}/", rules))
            if len(found) >= max_entries or clock() > deadline:
                return found, True
    return found, False


def _entries(folder: Path) -> list[tuple[str, bool]]:
    """(name, is a real folder) of ``folder``'s entries, sorted; a symlink to a folder counts as a file
    (it is listed, never entered)."""
    try:
        with os.scandir(folder) as scan:
            return sorted((e.name, e.is_dir(follow_symlinks=False)) for e in scan)
    except OSError:
        return []
