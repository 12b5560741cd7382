"""Landlock through ctypes: the three system calls, the access rights, and a ruleset built in ink.

Landlock (Linux 5.13+) lets an unprivileged process restrict itself and everything it starts: which
files it may read or write, which TCP ports it may bind or connect to (ABI 4), and, from ABI 6, that it
may not signal processes outside its domain (ptrace is limited to its domain at every ABI). A restriction
is irrevocable and inherited across fork and exec.

The ruleset is built here, in ink's own process (opening each path costs a system call or two); only
``restrict_self`` runs in the child between fork and exec (``ink.sandbox.confine``), so starting a
confined command costs no extra program. The ``landlock`` package on PyPI knows neither network rules
nor scopes, hence these hundred lines.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
import struct
from collections.abc import Callable

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # one table on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2

# filesystem access rights (ABI in which each appeared)
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a rule on a non-folder may hold

# network and scope (ABI 4 and 6)
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

PR_SET_NO_NEW_PRIVS = 38


class LandlockError(OSError):
    """A Landlock call failed; ``errno`` says why (ENOSYS: not in this kernel, EOPNOTSUPP: disabled)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


class Kernel:
    """The system calls the sandbox needs. Tests hand ``ink.sandbox.probe`` a kernel of their own that
    refuses them, to see what ink says where Landlock is missing or disabled."""

    def __init__(self) -> None:
        self._libc = _libc() if platform.system() == "Linux" else None

    def syscall(self, number: int, *args: object) -> int:
        """The call's result; raises ``LandlockError`` with its errno when it is -1."""
        if self._libc is None:
            raise LandlockError(errno.ENOSYS, f"no Landlock on {platform.system()}")
        result = int(self._libc.syscall(number, *args))
        if result < 0:
            code = ctypes.get_errno()
            raise LandlockError(code, os.strerror(code))
        return result

    def abi(self) -> int:
        """The Landlock ABI version this kernel offers (raises when it has none)."""
        return self.syscall(
            SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
        )


def fs_rights(abi: int) -> int:
    """Every filesystem right this ABI knows: the ones a ruleset handles (denies unless granted)."""
    return FS_BY_ABI[max(v for v in FS_BY_ABI if v <= abi)]


class Ruleset:
    """An open Landlock ruleset: what it handles is denied except where a rule grants it.

    The file descriptor is close-on-exec and stays open for as long as the policy may start commands.
    """

    def __init__(self, kernel: Kernel, abi: int, fs: int, net: int, scoped: int) -> None:
        self.abi = abi
        self.handled_fs = fs
        sizes = {1: 8, 4: 16, 6: 24}  # struct landlock_ruleset_attr grew with each of these ABIs
        size = sizes[max(v for v in sizes if v <= abi)]
        attr = struct.pack("=QQQ", fs, net, scoped)[:size]
        buffer = ctypes.create_string_buffer(attr, len(attr))
        self.fd = kernel.syscall(SYS_CREATE_RULESET, buffer, ctypes.c_size_t(size), ctypes.c_uint32(0))
        self._kernel = kernel

    def allow_path(self, path: str, rights: int) -> bool:
        """Grant ``rights`` beneath ``path`` (only the file rights when it is not a folder). False when the
        path does not exist (nothing to grant); raises on any other failure."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return False
        try:
            if not _is_folder(fd):
                rights &= FILE_RIGHTS
            rights &= self.handled_fs
            if rights:
                attr = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
                self._kernel.syscall(
                    SYS_ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(RULE_PATH_BENEATH), attr, 0
                )
        finally:
            os.close(fd)
        return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _is_folder(fd: int) -> bool:
    """Whether the O_PATH ``fd`` is a folder: ``fstat`` of the descriptor itself (what a stat through
    /proc/self/fd/N found too, at twice the system time per path)."""
    try:
        return stat.S_ISDIR(os.fstat(fd).st_mode)
    except OSError:
        return False


def restrict_self_call(ruleset_fd: int) -> Callable[[], None]:
    """What the child runs between fork and exec: no new privileges, then the ruleset. Built ahead so
    the child calls two prepared C functions and allocates nothing of note."""
    libc = _libc()
    prctl, syscall = libc.prctl, libc.syscall

    def restrict() -> None:
        if prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if syscall(SYS_RESTRICT_SELF, ruleset_fd, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")

    return restrict
