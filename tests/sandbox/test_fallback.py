"""R39/R41: where the sandbox cannot start. A mode the user asked for refuses to start (exit 2); the
default falls back to ``off`` with one notice; ``ink sandbox check`` says why and what to change.

Two ways to make the kernel refuse: the seam (a ``Kernel`` whose Landlock calls fail, as ``probe``
and ``Confinement`` take one), and, end to end, a real ``ink`` started under a seccomp filter that
answers Landlock's system calls with ENOSYS (a kernel without Landlock) or EPERM (a container's
profile that refuses them)."""

from __future__ import annotations

import errno
import os
import platform
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from ink.sandbox import Confinement, SandboxRefused, SandboxUnavailable, build_policy, choose_mode, probe
from ink.sandbox.landlock import Kernel, LandlockError

INK = [sys.executable, "-m", "ink"]


class RefusingKernel(Kernel):
    def __init__(self, code: int) -> None:
        super().__init__()
        self.code = code

    def syscall(self, number: int, *args: object) -> int:
        raise LandlockError(self.code, os.strerror(self.code))


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSYS, "no Landlock"),
        (errno.EOPNOTSUPP, "lsm="),
        (errno.EPERM, "seccomp profile"),
    ],
)
def test_R39_a_refusing_kernel_is_explained(code: int, words: str, tmp_path: Path) -> None:
    if platform.system() != "Linux":
        pytest.skip("Linux only")
    support = probe(RefusingKernel(code))
    assert not support.available
    assert words in support.reason + support.remedy
    assert choose_mode(None, support) == (
        "off",
        f"sandbox off: {support.reason} (`ink sandbox check` says what to change)",
    )
    assert choose_mode("off", support) == ("off", None)
    with pytest.raises(SandboxRefused, match="--sandbox read-only cannot start"):
        choose_mode("read-only", support)
    with pytest.raises(SandboxUnavailable):
        Confinement(build_policy("workspace-write", tmp_path), RefusingKernel(code))


# struct sock_filter: load the arch, then the syscall number; Landlock's calls get the errno
_AUDIT_ARCH_X86_64 = 0xC000003E


def _refusing_filter(code: int) -> bytes:
    program = [
        (0x20, 0, 0, 4),
        (0x15, 1, 0, _AUDIT_ARCH_X86_64),
        (0x06, 0, 0, 0x7FFF0000),
        (0x20, 0, 0, 0),
        (0x35, 0, 1, 444),  # 444..446: landlock_create_ruleset, add_rule, restrict_self
        (0x35, 0, 1, 447),
        (0x06, 0, 0, 0x7FFF0000),
        (0x06, 0, 0, 0x00050000 | code),
    ]
    return b"".join(struct.pack("=HBBI", *i) for i in program)


_LAUNCH = """
import ctypes, os, sys
code, argv = int(sys.argv[1]), sys.argv[2:]
program = bytes.fromhex(os.environ.pop("FILTER"))
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(program, len(program))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, ctypes.get_errno()
os.execv(argv[0], argv)
"""


def ink_under_refusal(code: int, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    if platform.machine() != "x86_64":
        pytest.skip("the refusing filter is written for x86_64")
    env = {**os.environ, "FILTER": _refusing_filter(code).hex(), "INK_HOME": str(cwd / "home")}
    env |= {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}  # nothing listens there
    return subprocess.run(
        [sys.executable, "-c", _LAUNCH, str(code), *INK, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize("code", [errno.ENOSYS, errno.EPERM])
def test_R39_an_explicit_sandbox_that_cannot_start_is_exit_2(code: int, tmp_path: Path) -> None:
    done = ink_under_refusal(code, ["--sandbox", "workspace-write", "-p", "hi"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--sandbox workspace-write cannot start" in done.stderr
    assert "ink sandbox check" in done.stderr


def test_R41_the_default_falls_back_to_off_with_one_notice(tmp_path: Path) -> None:
    done = ink_under_refusal(errno.ENOSYS, ["-p", "hi"], tmp_path)
    assert done.stderr.count("sandbox off: this kernel has no Landlock") == 1, done.stderr
    assert "cannot start" not in done.stderr  # it went on (to the dead server, whose error ends it)


def test_sandbox_check_says_why_and_what_to_change(tmp_path: Path) -> None:
    done = ink_under_refusal(errno.EOPNOTSUPP, ["sandbox", "check"], tmp_path)
    assert done.returncode == 1
    assert "sandbox: not available" in done.stdout
    assert "what to change: add landlock to the kernel's lsm= boot parameter" in done.stdout


def test_sandbox_check_where_it_works(tmp_path: Path) -> None:
    from tests.sandbox.conftest import require_sandbox

    require_sandbox()
    done = subprocess.run(
        [*INK, "sandbox", "check"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("sandbox: available (Landlock ABI")
    assert "mode here: workspace-write (the default)" in done.stdout
