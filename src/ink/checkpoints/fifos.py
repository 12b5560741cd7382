"""A git of the store that waits on a FIFO of the workspace: found through ``/proc`` and let go on.

git opens the files that steer it with a plain blocking ``open()``: each folder's ``.gitignore`` as its
walk enters it, each ``.gitattributes`` on the way to a file it hashes, the ``HEAD`` of a folder that
looks like a nested repository. No option or setting of git (2.39) stops it reading them, and a FIFO of
that name, which any repository can hold, blocks the open until something writes to it: the snapshot
waited for its 300 s timeout while every file-changing tool call waited for the snapshot. git never
stores a FIFO itself (it skips what is neither a file, a link nor a folder), so the snapshot is whole
once git gets past the open.

While a store command runs, ``Watch.check`` looks at what the process sleeps in (``/proc/PID/wchan``):

- ``wait_for_partner``: opening a FIFO, no writer yet. The path comes from the system call's arguments
  (``/proc/PID/syscall`` and the string in ``/proc/PID/mem``, readable by ink as git's parent). A FIFO
  inside the workspace is opened for writing for an instant and closed: git's open returns and it reads
  an empty file, which is what a FIFO holds for git (no rules, no attributes, no repository). Nothing is
  written and nothing else of the workspace is touched; the FIFO is named to the user once.
- a pipe's read (``pipe_read``, ``anon_pipe_read``, ...) on a named FIFO: a program holds it open for
  writing and sends nothing. That cannot be undone from outside: the command is ended and the snapshot
  fails, naming the FIFO.
- a FIFO outside the workspace, or one whose path cannot be found: the command is ended, named.

Where there is no ``/proc`` (macOS) nothing is seen, and the store's timeout is the bound.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ink.checkpoints.git import ShadowError

_PROC = Path("/proc")
_OPENING = frozenset({"wait_for_partner"})  # fs/pipe.c fifo_open: waiting for the other end
_AT_FDCWD = (0xFFFFFF9C, 0xFFFFFFFFFFFFFF9C)
_PATH_MAX = 4096
MAX_FREED = 1000  # FIFOs let go in one command: more is a repository made to stall every snapshot


class FifoStall(ShadowError):
    """A store command waited on a FIFO it cannot be let past; the command was ended."""


class Watch:
    """Checks one store command at a time (``check``) for a wait on a FIFO; ``freed``: the workspace's
    FIFOs git was let past so far (relative paths, each once), for the caller to tell the user."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace.resolve()
        self.freed: list[str] = []
        self._count = 0

    def check(self, pid: int) -> bool:
        """Whether ``pid`` waited on a FIFO of the workspace and was let go on (check again soon).
        Raises ``FifoStall`` when it waits on one it cannot be let past (end the command)."""
        waiting = _read_text(_PROC / str(pid) / "wchan")
        if waiting in _OPENING:
            return self._opening(pid)
        if waiting is not None and "pipe" in waiting:  # pipe_read, pipe_wait, anon_pipe_read (kernels)
            held = _fifo_read_by(pid)
            if held is not None:
                raise FifoStall(
                    f"{self._name(held)} is a FIFO (named pipe) a program keeps open without writing: "
                    "git cannot read past it"
                )
        return False

    def _opening(self, pid: int) -> bool:
        fifo = _fifo_opened_by(pid)
        if fifo is None:
            raise FifoStall("git waited to open a FIFO (named pipe) whose path could not be read")
        inside = _inside(fifo, self.workspace)
        if inside is None:
            raise FifoStall(f"git waited to open {fifo}, a FIFO (named pipe) outside the workspace")
        self._count += 1
        if self._count > MAX_FREED:
            raise FifoStall(f"more than {MAX_FREED} FIFOs (named pipes) where git reads its settings")
        if _let_open(fifo) and inside not in self.freed:
            self.freed.append(inside)
        return True

    def _name(self, path: Path) -> str:
        return _inside(path, self.workspace) or str(path)


def _fifo_opened_by(pid: int) -> Path | None:
    """The FIFO ``pid`` is opening: ``open(path, ...)`` or ``openat(dirfd, path, ...)``, whichever of
    the two readings of the arguments names a FIFO (no table of system call numbers per machine)."""
    args = _syscall_args(pid)
    if len(args) < 2:
        return None
    for dirfd, pointer in ((_AT_FDCWD[0], args[0]), (args[0], args[1])):
        name = _string_at(pid, pointer)
        if name is None:
            continue
        base = _folder_of(pid, dirfd)
        path = Path(os.fsdecode(name)) if name.startswith(b"/") or base is None else base / os.fsdecode(name)
        with contextlib.suppress(OSError):
            if stat.S_ISFIFO(os.lstat(path).st_mode):
                return path
    return None


def _fifo_read_by(pid: int) -> Path | None:
    """The named FIFO ``pid`` reads from (``read(fd, ...)``), if it is one: an anonymous pipe (the
    command's own stdin) is ``pipe:[...]``, no path."""
    args = _syscall_args(pid)
    if not args or args[0] > 1 << 20:
        return None
    try:
        target = os.readlink(_PROC / str(pid) / "fd" / str(args[0]))
    except OSError:
        return None
    if not target.startswith("/"):
        return None
    with contextlib.suppress(OSError):
        if stat.S_ISFIFO(os.lstat(target).st_mode):
            return Path(target)
    return None


def _syscall_args(pid: int) -> list[int]:
    """The arguments of the system call ``pid`` sleeps in (empty when it runs or is in none)."""
    fields = (_read_text(_PROC / str(pid) / "syscall") or "").split()
    if len(fields) < 2 or not fields[0].isdecimal():  # "running", "-1 ...": not in a system call
        return []
    with contextlib.suppress(ValueError):
        return [int(field, 16) for field in fields[1:7]]
    return []


def _string_at(pid: int, address: int) -> bytes | None:
    """The NUL-ended string at ``address`` in ``pid``'s memory (a child of ink's: readable), or None."""
    if address < 4096 or address in _AT_FDCWD:
        return None
    try:
        with open(_PROC / str(pid) / "mem", "rb", buffering=0) as memory:
            memory.seek(address)
            data = b""
            while len(data) < _PATH_MAX:
                chunk = memory.read(4096 - (address + len(data)) % 4096)  # never across a page at once
                if not chunk:
                    return None
                data += chunk
                if b"\0" in data:
                    name = data.split(b"\0", 1)[0]
                    return name or None
    except (OSError, OverflowError, ValueError):
        return None
    return None


def _folder_of(pid: int, dirfd: int) -> Path | None:
    link = "cwd" if dirfd in _AT_FDCWD else f"fd/{dirfd}"
    try:
        return Path(os.readlink(_PROC / str(pid) / link))
    except OSError:
        return None


def _inside(path: Path, workspace: Path) -> str | None:
    """``path`` relative to ``workspace`` if its folder lies there (links resolved), else None."""
    with contextlib.suppress(OSError, ValueError):
        folder = path.parent.resolve(strict=True)
        if folder.is_relative_to(workspace):
            return (folder / path.name).relative_to(workspace).as_posix()
    return None


def _let_open(path: Path) -> bool:
    """Open the FIFO at ``path`` for writing, without blocking, and close it at once: a reader waiting in
    ``open`` gets past it and reads an empty file. The very inode checked is opened (an ``O_PATH``
    descriptor, then reopened through ``/proc/self/fd``): a device swapped in meanwhile is never opened.
    False when nothing was let go (no reader any more, not a FIFO now)."""
    try:
        handle = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(handle).st_mode):
            return False
        writer = os.open(f"/proc/self/fd/{handle}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        os.close(writer)
        return True
    except OSError:  # ENXIO: the reader is gone
        return False
    finally:
        os.close(handle)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
