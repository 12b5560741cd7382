"""Appending to a session file as things happen.

The writer listens to a ``History``: every appended message becomes one line the moment it is appended
(so the synthetic results of an abort land at abort time, R33), a replacement becomes one compaction (or
replace) line. Each line goes out in one ``write`` on a file opened with ``O_APPEND``: after a kill -9 the
file holds every line written before, plus at most one torn line. Nothing is ever rewritten: an append
costs the same on a 10-line file and a 100,000-line one. ``sync`` adds the fsync (call it at every run
end); ``close`` syncs and closes.

The file (and its folder) is created lazily with the first entry, header and entry in one write, so a
session nobody typed into leaves no file behind.

A write that fails (disk full, folder removed) does not break the run: the error is logged and
reported once through ``on_error``, and the writer stops, so the file stays a clean prefix of the session.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ink.agent.history import History, HistoryChange
from ink.ai.jsonform import to_json
from ink.ai.messages import Message, Usage, message_to_json
from ink.store.entries import SessionHeader, encode, ends_complete, redact_tree, usable_secrets
from ink.store.errors import SessionInUse
from ink.store.paths import PRIVATE_FILE, make_private_dirs

log = logging.getLogger(__name__)

ErrorReporter = Callable[[str], None]
CHUNK = 64 * 1024


class SessionWriter:
    def __init__(
        self,
        path: Path,
        header: SessionHeader,
        *,
        exists: bool = False,
        secrets: Sequence[str] = (),
        on_error: ErrorReporter | None = None,
    ) -> None:
        """``exists``: the file is an existing session being resumed (its header is not written again;
        a torn last line is cut off before the first append, so it cannot glue onto the next line)."""
        self.path = path
        self.header = header
        self.secrets = usable_secrets(secrets)
        self.on_error = on_error
        self.failed: str | None = None
        self._fd: int | None = None
        self._exists = exists
        self._pending = b""  # the header, until it goes out with the first entry
        self._mirror: list[Message] = []  # what the attached history holds, to diff replacements
        self._detach: Callable[[], None] | None = None

    # -- attaching ---------------------------------------------------------------------------------

    def attach(self, history: History) -> None:
        """Write every later change of ``history``. Messages already in it are taken as written."""
        self.detach()
        self._mirror = list(history.messages)
        self._detach = history.subscribe(self._on_change)

    def detach(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None

    def _on_change(self, change: HistoryChange) -> None:
        if change.kind == "appended":
            self._mirror.extend(change.messages)
            for message in change.messages:
                self.write_message(message)
            return
        old, self._mirror = self._mirror, list(change.messages)
        kept = _common_suffix(old, change.messages)
        head = change.messages[: len(change.messages) - kept]
        self.write_replacement(change.reason, len(old) - kept, kept, head)

    # -- entries -----------------------------------------------------------------------------------

    def write_message(self, message: Message) -> None:
        self._write({"type": "message", "timestamp": time.time(), "message": message_to_json(message)})

    def write_replacement(self, reason: str, removed: int, kept: int, head: Sequence[Message]) -> None:
        kind = "compaction" if reason in ("compaction", "truncation") else "replace"
        entry = {
            "type": kind,
            "timestamp": time.time(),
            "reason": reason,
            "removed": removed,
            "kept": kept,
            "messages": [message_to_json(m) for m in head],
        }
        self._write(entry)

    def write_usage(self, usage: Usage, model: str, source: str) -> None:
        """Record a model call that is no message of this history: a sub-agent's (``source``, its id)."""
        entry = {"type": "usage", "timestamp": time.time(), "model": model, "source": source}
        self._write({**entry, "usage": to_json(usage)})

    def write_job(self, kind: str, fields: Mapping[str, Any]) -> None:
        """Record a background job's start or end (``job_start``/``job_end``, ``ink.store.jobs``)."""
        self._write({"type": kind, "timestamp": time.time(), **fields})

    def write_plan(self, plan: Mapping[str, Any]) -> None:
        """Record the plan as it stands now (a ``plan_update`` event's ``entries``, ``explanation``)."""
        fields = {key: plan[key] for key in ("entries", "explanation") if plan.get(key) is not None}
        self._write({"type": "plan", "timestamp": time.time(), **fields})

    def write_model_change(self, model: str, provider: str) -> None:
        """Record a switch of model. Before the file exists this only updates the header."""
        if self._fd is None and not self._exists:
            self.header.model, self.header.provider = model, provider
            return
        self._write({"type": "model_change", "timestamp": time.time(), "model": model, "provider": provider})

    # -- the file ----------------------------------------------------------------------------------

    def sync(self) -> None:
        """fsync what was written so far (no-op before the first entry or after a failure)."""
        if self._fd is None:
            return
        try:
            os.fsync(self._fd)
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        """Detach, sync and close. Idempotent."""
        self.detach()
        self.sync()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def open(self) -> None:
        """Open the file now rather than at the first entry (resume does, to learn at once whether another
        ink process holds the session). Idempotent. Raises ``SessionInUse``, or ``OSError``."""
        if self._fd is not None:
            return
        make_private_dirs(self.path.parent)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, PRIVATE_FILE)
        try:
            _lock(fd, self.path)
            if self._exists:
                cut_torn_tail(fd)
            empty = os.fstat(fd).st_size == 0
        except BaseException:
            os.close(fd)
            raise
        self._fd, self._exists = fd, True
        if empty:
            self._pending = encode(redact_tree(self.header.to_json(), self.secrets))

    def _write(self, entry: dict[str, Any]) -> None:
        if self.failed is not None:
            return
        data = encode(redact_tree(entry, self.secrets))
        try:
            self.open()
            assert self._fd is not None
            _write_all(self._fd, self._pending + data)  # header and first entry: one write
            self._pending = b""
        except (OSError, SessionInUse) as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        if self.failed is not None:
            return
        self.failed = (
            f"session file {self.path} could not be written ({exc}); this session is no longer saved"
        )
        log.error("%s", self.failed)
        if self.on_error is not None:
            self.on_error(self.failed)


def cut_torn_tail(fd: int) -> int:
    """Truncate an unfinished last line (no newline); return how many bytes were cut. A last line that
    is a complete entry only lacking its newline (``ends_complete``) gets the newline instead."""
    size = os.fstat(fd).st_size
    end = size
    while end > 0:
        start = max(0, end - CHUNK)
        chunk = os.pread(fd, end - start, start)
        if end == size and chunk.endswith(b"\n"):
            return 0
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return _end_last_line(fd, start + newline + 1, size)
        end = start
    return _end_last_line(fd, 0, size)


def _end_last_line(fd: int, line_start: int, size: int) -> int:
    if ends_complete(os.pread(fd, size - line_start, line_start)):
        _write_all(fd, b"\n")
        return 0
    os.ftruncate(fd, line_start)
    return size - line_start


def _lock(fd: int, path: Path) -> None:
    """One writer per session: two ink processes appending to one file would interleave their
    histories. The lock dies with its process, so a crash never leaves a session locked."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: go without
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise SessionInUse(path) from exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _common_suffix(old: Sequence[Message], new: Sequence[Message]) -> int:
    n = 0
    while n < len(old) and n < len(new) and (old[-1 - n] is new[-1 - n] or old[-1 - n] == new[-1 - n]):
        n += 1
    return n
