"""A seccomp filter that takes the network away: no socket but a Unix one, no io_uring.

Landlock's network rules cover TCP only (bind and connect); UDP (DNS, QUIC), raw sockets and netlink
would pass. So, as Codex does, the child also installs this small BPF program: ``socket()`` of any family
but ``AF_UNIX`` fails with ``ENETUNREACH`` ("Network is unreachable", the words a program prints and the
denial detector reads), and io_uring, whose operations bypass system-call filters, is refused. System
calls of a foreign ABI (32-bit ``int 0x80``, x32) could reach ``socketcall``: they are refused too.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
from collections.abc import Callable

PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_GET_SECCOMP = 22, 2, 21
AF_UNIX = 1
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
# BPF opcodes: ld word abs, jeq k, jge k, ret k
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARG0 = 0, 4, 16


class _Arch:
    def __init__(self, audit: int, socket: int, x32: bool) -> None:
        self.audit, self.socket, self.x32 = audit, socket, x32


ARCHES = {
    "x86_64": _Arch(0xC000003E, 41, True),
    "aarch64": _Arch(0xC00000B7, 198, False),
}
IO_URING = (425, 426, 427)  # setup, enter, register: the same numbers on every architecture


def supported() -> bool:
    return platform.machine() in ARCHES


def network_filter(machine: str | None = None) -> bytes:
    """The BPF program (struct sock_filter[]) for this machine's architecture."""
    arch = ARCHES[machine or platform.machine()]
    refuse, refuse_io = _RET_ERRNO | errno.ENETUNREACH, _RET_ERRNO | errno.EPERM
    code: list[tuple[int, int, int, int]] = []
    # written as (instruction, "then:end" or "else:end") and resolved below: a jump counts the
    # instructions it skips, and the three ends (allow, refuse io_uring, refuse foreign) come last
    body: list[tuple[tuple[int, int, int, int], str | None]] = [
        ((_LD, 0, 0, _OFFSET_ARCH), None),
        ((_JEQ, 0, 0, arch.audit), "else:foreign"),
        ((_LD, 0, 0, _OFFSET_NR), None),
    ]
    if arch.x32:
        body.append(((_JGE, 0, 0, 0x40000000), "then:foreign"))
    for number in IO_URING:
        body.append(((_JEQ, 0, 0, number), "then:io"))
    body += [
        ((_JEQ, 0, 0, arch.socket), "else:allow"),
        ((_LD, 0, 0, _OFFSET_ARG0), None),
        ((_JEQ, 0, 0, AF_UNIX), "then:allow"),
        ((_RET, 0, 0, refuse), None),
    ]
    ends = {"allow": _RET_ALLOW, "io": refuse_io, "foreign": refuse_io}
    labels = {name: len(body) + i for i, name in enumerate(ends)}
    for at, (instruction, target) in enumerate(body):
        op, jt, jf, k = instruction
        if target is not None:
            branch, name = target.split(":")
            offset = labels[name] - at - 1
            jt, jf = (offset, 0) if branch == "then" else (0, offset)
        code.append((op, jt, jf, k))
    code += [(_RET, 0, 0, value) for value in ends.values()]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in code)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_call(program: bytes) -> Callable[[], None]:
    """What the child runs to install ``program`` (after no_new_privs is set). The buffers are made
    here, in ink, and kept alive by the returned function."""
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    pointer = ctypes.addressof(fprog)

    kept = (buffer, fprog)

    def install() -> None:
        assert kept  # the closure holds the buffers the kernel reads
        if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.c_void_p(pointer), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")

    return install
