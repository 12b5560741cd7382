"""Prompt history kept per project across sessions: ``$INK_HOME/history/<project>.txt``.

Up on an empty input while idle walks back through it; with text typed, Up finds the earlier prompts
that start with that text. The file is the project's (its path hashed), never shared with another.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

log = logging.getLogger(__name__)


def history_file(ink_home: Path, cwd: Path) -> Path:
    digest = hashlib.sha256(str(cwd.resolve()).encode()).hexdigest()[:16]
    return ink_home / "history" / f"{cwd.name or 'root'}-{digest}.txt"


def prompt_history(ink_home: Path, cwd: Path) -> History:
    """The project's history file, or one kept in memory when it cannot be written (said in the log)."""
    path = history_file(ink_home, cwd)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.touch(mode=0o600, exist_ok=True)
    except OSError as exc:
        log.warning("prompt history is not kept: cannot write %s: %s", path, exc)
        return InMemoryHistory()
    return FileHistory(str(path))


class HistoryBuffer(Buffer):
    """The input's buffer, telling whether a change of its text is a prompt brought back from the
    history (``recalling``, true while Up or Down walk it): such a change opens no menu."""

    recalling = False

    def history_backward(self, count: int = 1) -> None:
        self.recalling = True
        try:
            super().history_backward(count)
        finally:
            self.recalling = False

    def history_forward(self, count: int = 1) -> None:
        self.recalling = True
        try:
            super().history_forward(count)
        finally:
            self.recalling = False
