"""Reading a file a repository brings (a command, an agent type, AGENTS.md, a mention, a config or ignore
file): regular files only, at most a size cap, never blocking.

A repository can hold a FIFO, a symlink to ``/dev/zero`` or to a device whose very opening acts
(``/dev/watchdog`` arms a watchdog, a tape rewinds), or a file of gigabytes, sparse or not. A plain
``read_text`` of such a file hangs ink before its first request, or fills memory until it dies. Here:

- the path is stat'ed first and refused unless it is a regular file, so no device is ever opened;
- it is opened with ``O_NONBLOCK`` (a FIFO swapped in after the stat does not block the open) and
  ``O_NOCTTY``, and the descriptor is fstat'ed: what is read is the very file checked, a swapped one is
  refused, not read;
- at most ``limit + 1`` bytes are read: more is ``FileTooLarge``, or, with ``cut``, the first ``limit``
  bytes and ``cut=True``.

Both refusals are ``OSError`` (with ``strerror`` saying why), so a caller's existing ``except OSError``
turns them into its usual "cannot read" warning.
"""

from __future__ import annotations

import errno
import os
import stat
from io import BufferedReader
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a folder, not a file: never opened or read."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class FileTooLarge(OSError):
    """The file holds more than the reader's limit."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class FileRead(NamedTuple):
    data: bytes  # at most the limit
    status: os.stat_result  # of the very file read (fstat of its descriptor)
    cut: bool  # the file held more than ``data``


def read_regular(
    path: str | os.PathLike[str],
    limit: int,
    *,
    cut: bool = False,
    follow_symlinks: bool = True,
    dir_fd: int | None = None,
) -> FileRead:
    """The bytes of the regular file ``path``, at most ``limit``. Raises ``NotRegularFile``, ``FileTooLarge``
    (over ``limit`` without ``cut``) and the ``OSError`` of a missing or unreadable file. Without
    ``follow_symlinks`` a symlink itself is refused (``ELOOP``); ``dir_fd``: ``path`` is relative to
    that open folder (``os.open``'s)."""
    with open_regular(path, follow_symlinks=follow_symlinks, dir_fd=dir_fd) as file:
        status = os.fstat(file.fileno())
        if status.st_size > limit and not cut:  # a sparse 1 TB file is refused before any read
            raise _too_large(path, limit)
        data = _read_at_most(file, limit + 1)
    if len(data) > limit:
        if not cut:
            raise _too_large(path, limit)
        return FileRead(data[:limit], status, True)
    return FileRead(data, status, False)


def open_regular(
    path: str | os.PathLike[str], *, follow_symlinks: bool = True, dir_fd: int | None = None
) -> BufferedReader:
    """``path`` opened for reading (buffered binary) once proven a regular file, before and after the
    open. For readers that stream a file instead of reading it whole (the read tool). Raises
    ``NotRegularFile`` and the ``OSError`` of a missing or unreadable file."""
    _check(path, os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks).st_mode)
    fd = os.open(path, _FLAGS | (0 if follow_symlinks else os.O_NOFOLLOW), dir_fd=dir_fd)
    try:
        _check(path, os.fstat(fd).st_mode)  # swapped between the stat and the open: refused, not read
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def stays_within(path: Path, root: Path) -> bool:
    """Whether ``path``, its links followed, is a file inside ``root``: a repository's ``AGENTS.md ->
    ../../.ssh/id_rsa`` or ``.ink/commands -> /`` leads out of it, and reading it would hand the user's
    files to the model. A path that cannot be resolved (gone, a link loop) does not stay within."""
    try:
        return path.resolve(strict=True).is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _check(path: str | os.PathLike[str], mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise NotRegularFile(errno.EINVAL, f"{kind}, not a regular file: not read", os.fspath(path))


def _too_large(path: str | os.PathLike[str], limit: int) -> FileTooLarge:
    return FileTooLarge(errno.EFBIG, f"larger than {_size(limit)}: not read", os.fspath(path))


def _read_at_most(file: BinaryIO, count: int) -> bytes:
    chunks: list[bytes] = []
    left = count
    while left > 0:
        chunk = file.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count} bytes"
