"""Prompt history kept per project across sessions: ``$INK_HOME/history/<project>.txt``.

Up on an empty input while idle walks back through it; with text typed, Up finds the earlier prompts
that start with that text. The file is the project's (its path hashed), never shared with another.

The file is prompt_toolkit's format, read and written so that it cannot hold the TUI up (``BoundedHistory``):
prompt_toolkit's own reader read it whole (a file grown by years of pasted logs, or one replaced by a
link to ``/dev/zero``, filled memory) and its writer opened it with a blocking ``open`` on the UI thread
(a FIFO there froze the TUI at the first Enter). Only the newest ``MAX_READ_BYTES`` are read, of a
regular file only; a prompt over ``MAX_PROMPT_CHARS`` is kept for this session, not in the file; a file
grown past twice the read bound is cut back to its newest part as it is read.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

log = logging.getLogger(__name__)

MAX_READ_BYTES = 4 << 20  # the newest part of the file read at start: thousands of prompts
MAX_PROMPT_CHARS = 100_000  # a longer prompt (a pasted log) is not written to the file
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC


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
    return BoundedHistory(str(path))


class BoundedHistory(FileHistory):
    """``FileHistory`` that reads at most the newest ``MAX_READ_BYTES`` of a regular file and never
    blocks on one that is not (see the module's words)."""

    def load_history_strings(self) -> Iterable[str]:
        path = Path(os.fsdecode(self.filename))
        try:
            data, cut = _newest(path)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                log.warning("prompt history not read: %s", exc)
            return []
        if cut:
            _cut_back(path, data)
        return reversed(_entries(data))

    def store_string(self, string: str) -> None:
        if len(string) > MAX_PROMPT_CHARS:
            return  # kept in memory for this session (``append_string``), not in the file
        text = f"\n# {datetime.datetime.now()}\n" + "".join(f"+{line}\n" for line in string.split("\n"))
        try:
            fd = os.open(os.fsdecode(self.filename), _APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            log.warning("prompt history not written: %s", exc)
            return
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.write(fd, text.encode("utf-8", errors="replace"))
            else:
                log.warning("prompt history not written: %s is not a regular file", self.filename)
        except OSError as exc:
            log.warning("prompt history not written: %s", exc)
        finally:
            os.close(fd)


def _newest(path: Path) -> tuple[bytes, bool]:
    """The newest ``MAX_READ_BYTES`` of the history file, from an entry's start, and whether there was
    more. Raises ``OSError`` (``NotRegularFile``: a FIFO, a device, a link to one)."""
    from ink.regular_file import open_regular

    with open_regular(path) as file:
        size = os.fstat(file.fileno()).st_size
        start = max(0, size - MAX_READ_BYTES)
        file.seek(start)
        data = file.read(MAX_READ_BYTES)
    if start == 0:
        return data, False
    entry = data.find(b"\n# ")
    return (data[entry:] if entry >= 0 else b""), size > 2 * MAX_READ_BYTES


def _entries(data: bytes) -> list[str]:
    """prompt_toolkit's format: ``# date`` then one ``+line`` per line of each prompt."""
    found: list[str] = []
    lines: list[str] = []
    for raw in data.split(b"\n"):
        line = raw.decode("utf-8", errors="replace")
        if line.startswith("+"):
            lines.append(line[1:])
        elif lines:
            found.append("\n".join(lines))
            lines = []
    if lines:
        found.append("\n".join(lines))
    return found


def _cut_back(path: Path, newest: bytes) -> None:
    """Keep only the newest part of a history file grown past twice the read bound (written whole
    under another name, then renamed over it)."""
    scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        scratch.write_bytes(newest)
        scratch.chmod(0o600)
        scratch.replace(path)
    except OSError as exc:
        log.warning("prompt history not cut back: %s", exc)
        with contextlib.suppress(OSError):
            scratch.unlink()


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
