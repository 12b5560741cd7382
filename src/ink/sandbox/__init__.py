"""The sandbox: what a command ink starts may write, read, reach and signal (R41, docs/security.md).

Linux only, through Landlock (files, TCP, signals, ptrace) and a seccomp filter (every other socket),
entered by the child between fork and exec: no extra program, no namespace, so process ids stay the
machine's own and reaping (R35) works as for any command. README.md says why this mechanism.

- ``policy``: the modes and what each allows (a value);
- ``landlock``, ``seccomp``: the kernel interfaces, through ctypes;
- ``confine``: a policy made into what the child applies;
- ``probe``: what this machine supports, and which mode a process gets;
- ``denials``: reading a command's output for what the sandbox refused;
- ``runtime``: the sandbox of one ink process.
"""

from __future__ import annotations

from ink.sandbox.confine import Confinement, SandboxUnavailable
from ink.sandbox.denials import Denial, explain, find_denial
from ink.sandbox.policy import (
    DEFAULT_MODE,
    MODES,
    SandboxMode,
    SandboxPolicy,
    build_policy,
    make_private_temporary,
)
from ink.sandbox.probe import SandboxRefused, SandboxSupport, choose_mode, probe
from ink.sandbox.runtime import Sandbox, no_sandbox, open_sandbox

__all__ = [
    "DEFAULT_MODE",
    "MODES",
    "Confinement",
    "Denial",
    "Sandbox",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxRefused",
    "SandboxSupport",
    "SandboxUnavailable",
    "build_policy",
    "choose_mode",
    "explain",
    "find_denial",
    "make_private_temporary",
    "no_sandbox",
    "open_sandbox",
    "probe",
]
