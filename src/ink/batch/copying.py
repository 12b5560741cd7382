"""Copying a local repository into a task's workspace: regular files, folders and symlinks only, within a
byte budget, stoppable at any moment.

``shutil.copytree`` copies whatever it meets by reading it: a character device (``/dev/zero`` made with
``mknod``, or a FIFO waiting for a writer) is read for ever, and nothing stops the thread it runs in.
Here a FIFO, a device or a socket is left out (and named in the copy's notes), symlinks are copied as
links (never followed), a file is opened only once proven regular (``O_NONBLOCK``, then ``fstat``), and
every chunk counts against the budget and checks the stop flag, so Ctrl+C or a time limit ends the copy
within one chunk.
"""

from __future__ import annotations

import errno
import math
import os
import shutil
import stat
import threading
from collections.abc import Callable
from pathlib import Path

CHUNK = 1 << 20
MAX_NOTES = 20
_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class CopyError(Exception):
    """The copy could not be made: over the budget, stopped, or a file could not be read or written."""


class CopyStopped(CopyError):
    """The stop flag was set while copying."""


class Copier:
    """One copy of ``source`` to ``target`` (which must not exist). ``skip(path)`` leaves out a path
    of the source (and everything below it); ``stop`` is checked before every file and every chunk."""

    def __init__(
        self, budget: int, stop: threading.Event, skip: Callable[[Path], bool] = lambda _path: False
    ) -> None:
        self.budget, self.stop, self.skip = budget, stop, skip
        self.copied = 0
        self.notes: list[str] = []
        self._left_out = 0

    def copy(self, source: Path, target: Path) -> None:
        os.mkdir(target, 0o700)
        self._folder(source, target, Path())
        shutil.copystat(source, target, follow_symlinks=False)

    def _folder(self, source: Path, target: Path, relative: Path) -> None:
        with os.scandir(source) as entries:
            names = sorted(entry.name for entry in entries)
        for name in names:
            self._check_stop()
            path = source / name
            if self.skip(path):
                continue
            self._entry(path, target / name, relative / name)

    def _entry(self, path: Path, target: Path, relative: Path) -> None:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(path), target)
        elif stat.S_ISDIR(mode):
            os.mkdir(target, 0o700)
            self._folder(path, target, relative)
            shutil.copystat(path, target, follow_symlinks=False)
        elif stat.S_ISREG(mode):
            self._file(path, target, relative)
        else:
            self._leave_out(relative, mode)

    def _file(self, path: Path, target: Path, relative: Path) -> None:
        source = os.open(path, _OPEN)
        try:
            status = os.fstat(source)
            if not stat.S_ISREG(status.st_mode):  # swapped since the lstat: left out, never read
                self._leave_out(relative, status.st_mode)
                return
            self._charge(status.st_size, path)
            out = os.open(target, _CREATE, 0o600)
            try:
                self._pour(source, out, path, status.st_size)
            finally:
                os.close(out)
            shutil.copystat(path, target, follow_symlinks=False)
        finally:
            os.close(source)

    def _pour(self, source: int, out: int, path: Path, expected: int) -> None:
        written = 0
        while chunk := os.read(source, CHUNK):
            self._check_stop()
            written += len(chunk)
            if written > expected:  # growing while it is copied: what grows counts too
                self._charge(len(chunk), path)
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]

    def _charge(self, size: int, path: Path) -> None:
        self.copied += size
        if self.copied > self.budget:
            raise CopyError(
                f"over the copy budget of {_size(self.budget)} at {path} (--max-copy-bytes; a folder "
                "this large is better given as a git repository with rev)"
            )

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise CopyStopped("interrupted")

    def _leave_out(self, relative: Path, mode: int) -> None:
        self._left_out += 1
        if len(self.notes) < MAX_NOTES:
            kind = next((name for test, name in _KINDS if test(mode)), "a socket")
            self.notes.append(f"left out {relative}: {kind}, not a file")
        elif len(self.notes) == MAX_NOTES:
            self.notes.append("left out more special files (FIFOs, devices, sockets)")


def copy_tree(
    source: Path,
    target: Path,
    *,
    budget: int,
    stop: threading.Event,
    skip: Callable[[Path], bool] = lambda _path: False,
) -> list[str]:
    """Copy ``source`` to ``target``; returns notes on what was left out. Raises ``CopyError`` (with
    ``CopyStopped`` when ``stop`` was set) and ``OSError`` (unreadable files, a full disk)."""
    copier = Copier(budget, stop, skip)
    try:
        copier.copy(source, target)
    except RecursionError:
        raise CopyError("folders nest too deeply to be copied") from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise CopyError(f"the disk is full ({exc.filename})") from None
        raise
    return copier.notes


def parse_size(text: str) -> int:
    """``10G``, ``500M``, ``64K`` or a number of bytes. Raises ``ValueError``."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    value = float(number) * scale
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return int(value)


def _size(count: int) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:g} {unit}"
    return f"{count} bytes"
