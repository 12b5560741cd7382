"""The output of one background job: kept bounded in memory and in a private file (R43).

A job may print for hours. What is kept is its first ``HEAD_BYTES`` and its last ``TAIL_BYTES`` (the
start says what ran, the end how it is doing now); the middle is counted and cut. The file holds exactly
that: while the output is smaller than both together, every byte is appended as it arrives (``tail -f``
works); past the cap, the file is the head, one line saying what was cut, and the tail, rewritten at most
once every ``FLUSH_SECONDS`` and when the job ends. The file is created mode 0600 in a 0700 folder, under
the session's folder (``<session>.jobs/``), and stays after ink ends: a resumed session still reads it.

Reading is by offsets in the whole output (``total`` bytes so far), so the model can ask for "what is new
since I last looked" even when the middle has been cut meanwhile.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ink.ai.unicode import decode_bytes
from ink.tools.limits import plural

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 960 * 1024
LIMIT_BYTES = HEAD_BYTES + TAIL_BYTES  # the documented bound of a job's output file (1 MiB)
FLUSH_SECONDS = 1.0
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class JobOutput:
    """Fed by the job's output pipe (``feed``), read by ``since``/``tail``; ``close`` writes it out last.
    A file that cannot be written (disk full, folder gone) stops being written; memory still serves."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.total = 0
        self.problem: str | None = None
        self._head = bytearray()
        self._tail = bytearray()
        self._fd: int | None = None
        self._written = 0  # bytes of the file, while it is still a plain copy
        self._dirty = False
        self._flushed = 0.0
        if path is not None:
            try:
                self._fd = os.open(path, _FLAGS, 0o600)
            except OSError as exc:
                self.problem = f"the output file {path} could not be created: {exc.strerror or exc}"

    @property
    def dirty(self) -> bool:
        """Kept output the file does not have yet."""
        return self._dirty

    @property
    def cut(self) -> int:
        """Bytes dropped from the middle."""
        return self.total - len(self._head) - len(self._tail)

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = HEAD_BYTES - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        if len(self._tail) > TAIL_BYTES + HEAD_BYTES:  # trim in batches, not on every chunk
            del self._tail[:-TAIL_BYTES]
        self._dirty = True
        if self.total <= LIMIT_BYTES:
            self._append()
        elif time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Bring the file up to date with what is kept."""
        if not self._dirty:
            return
        if self.total <= LIMIT_BYTES:
            self._append()
            return
        del self._tail[:-TAIL_BYTES]
        self._flushed = time.monotonic()
        self._dirty = False
        self._rewrite(bytes(self._head) + self._notice().encode() + bytes(self._tail))

    def close(self) -> None:
        self.flush()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # -- reading ---------------------------------------------------------------------------------

    def since(self, offset: int) -> tuple[str, int]:
        """The output from byte ``offset`` of the whole output on, as text (a notice where the middle was
        cut), and how many bytes of it are gone."""
        head, tail = bytes(self._head), bytes(self._tail[-TAIL_BYTES:])
        tail_start = self.total - len(tail)
        parts: list[bytes] = []
        if offset < len(head):
            parts.append(head[offset:])
        gone = max(0, min(tail_start, self.total) - max(offset, len(head)))
        if gone:
            parts.append(f"\n[... {plural(gone, 'byte')} of output cut here ...]\n".encode())
        parts.append(tail[max(0, offset - tail_start) :])
        return decode_bytes(b"".join(parts)).replace("\r\n", "\n"), gone

    def text(self) -> str:
        """Everything kept, with the notice where the middle was cut."""
        return self.since(0)[0]

    # -- the file --------------------------------------------------------------------------------

    def _notice(self) -> str:
        return (
            f"\n[... ink cut {plural(self.cut, 'byte')} from the middle of this output: it keeps the first "
            f"{HEAD_BYTES // 1024} KiB and the last {TAIL_BYTES // 1024} KiB ...]\n"
        )

    def _append(self) -> None:
        self._dirty = False
        if self._fd is None:
            return
        kept = bytes(self._head) + bytes(self._tail)
        try:
            _write_all(self._fd, kept[self._written :], self._written)
            self._written = len(kept)
        except OSError as exc:
            self._failed(exc)

    def _rewrite(self, data: bytes) -> None:
        if self._fd is None:
            return
        try:
            start = HEAD_BYTES if self._written >= HEAD_BYTES else 0
            _write_all(self._fd, data[start:], start)
            os.ftruncate(self._fd, len(data))
            self._written = len(data)
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        self.problem = f"the output file {self.path} could not be written: {exc.strerror or exc}"
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _write_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def read_tail(path: Path, limit: int) -> tuple[str, bool]:
    """The last ``limit`` bytes of a job's output file from an earlier ink process (a regular file only:
    whatever replaced it is not opened), and whether anything came before them. Raises ``OSError``."""
    from ink.regular_file import open_regular

    with open_regular(path, follow_symlinks=False) as file:
        size = os.fstat(file.fileno()).st_size
        start = max(0, size - limit)
        file.seek(start)
        data = file.read(limit)
    return decode_bytes(data).replace("\r\n", "\n"), start > 0
