"""What the sandbox can do on this machine, why not where it cannot, and which mode a process gets.

``probe`` asks the kernel (a few microseconds: no process is started). ``choose_mode`` applies R39/R41:
a mode the user asked for (flag or config) that cannot start is an error (exit 2); the default
(``workspace-write``) falls back to ``off`` with one notice.
"""

from __future__ import annotations

import ctypes
import errno
import platform

import msgspec

from ink.sandbox import seccomp
from ink.sandbox.landlock import Kernel, LandlockError
from ink.sandbox.policy import DEFAULT_MODE, SandboxMode

SIGNAL_SCOPE_ABI = 6


class SandboxSupport(msgspec.Struct, frozen=True):
    """``available``: a sandboxed mode can start. ``reason``/``remedy``: why not, and what to change.
    ``gaps``: what this kernel's Landlock cannot contain, though the sandbox starts."""

    available: bool
    abi: int | None = None
    seccomp: bool = False
    reason: str = ""
    remedy: str = ""
    gaps: tuple[str, ...] = ()


def probe(kernel: Kernel | None = None) -> SandboxSupport:
    if platform.system() != "Linux":
        return SandboxSupport(
            False,
            reason=f"the sandbox uses Linux's Landlock, and this is {platform.system()}",
            remedy='run with --sandbox off (or [sandbox] mode = "off"); commands then run uncontained',
        )
    kernel = kernel or Kernel()
    try:
        abi = kernel.abi()
    except LandlockError as exc:
        reason, remedy = _why(exc.errno)
        return SandboxSupport(False, reason=reason, remedy=remedy)
    has_seccomp = seccomp.supported() and _seccomp_ok()
    gaps = []
    if abi < SIGNAL_SCOPE_ABI:
        gaps.append(
            f"signals to processes outside the sandbox (Landlock ABI {abi}; scoping needs 6, Linux 6.12)"
        )
    if abi < 4 and not has_seccomp:
        gaps.append("the network (no Landlock TCP rules before ABI 4, no seccomp)")
    elif not has_seccomp:
        gaps.append("network other than TCP (UDP, raw sockets): no seccomp filter on this system")
    if abi < 3:
        gaps.append("truncating files outside the writable folders (Landlock ABI 3)")
    return SandboxSupport(True, abi, has_seccomp, gaps=tuple(gaps))


def _why(code: int | None) -> tuple[str, str]:
    if code == errno.ENOSYS:
        return (
            "this kernel has no Landlock (it came in Linux 5.13)",
            "use a kernel built with CONFIG_SECURITY_LANDLOCK=y, or run with --sandbox off",
        )
    if code == errno.EOPNOTSUPP:
        return (
            "Landlock is built into this kernel but not enabled",
            "add landlock to the kernel's lsm= boot parameter (e.g. lsm=landlock,lockdown,yama,apparmor,bpf) "
            "and reboot, or run with --sandbox off",
        )
    if code == errno.EPERM:
        return (
            "Landlock's system calls are refused here (a container's seccomp profile or a security module)",
            "allow the landlock_* system calls in the container's seccomp profile, or run with --sandbox off",
        )
    return (f"Landlock failed: {errno.errorcode.get(code or 0, code)}", "run with --sandbox off")


def _seccomp_ok() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(seccomp.PR_GET_SECCOMP, 0, 0, 0, 0)) >= 0


class SandboxRefused(Exception):
    """A sandbox mode the user asked for cannot start: exit 2 with this message (R39)."""


def choose_mode(requested: SandboxMode | None, support: SandboxSupport) -> tuple[SandboxMode, str | None]:
    """The mode to run with, and the one notice to show (None: nothing to say). ``requested`` is None
    when neither a flag nor a config file chose one."""
    if requested == "off":
        return "off", None
    if support.available:
        return requested or DEFAULT_MODE, None
    if requested is not None:
        raise SandboxRefused(
            f"--sandbox {requested} cannot start: {support.reason}. {support.remedy[:1].upper()}"
            f"{support.remedy[1:]}. `ink sandbox check` says more."
        )
    return "off", f"sandbox off: {support.reason} (`ink sandbox check` says what to change)"
