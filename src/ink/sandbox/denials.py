"""Telling a sandbox denial from a bug: reading a confined command's output for what was refused.

Landlock and the network filter answer with ordinary errors (EACCES "Permission denied", EPERM
"Operation not permitted", ENETUNREACH "Network is unreachable"), which the command prints its own way.
The lines that quote such an error are read for the path they name, and the path is judged against the
policy: a secret folder is a read the sandbox refused; a path outside the writable folders that ink
itself could write is a write the sandbox refused; a path inside them, or one ink could not write either,
is the command's own problem, and nothing is claimed. With the network off, network errors are the
sandbox's. Signals refused to processes outside are named too.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Literal

import msgspec

from ink.sandbox.policy import SandboxPolicy

DenialKind = Literal["write", "read", "network", "signal"]
_REFUSALS = ("Permission denied", "Operation not permitted", "Read-only file system")
_MAX_SCANNED = 64 * 1024  # characters from each end of the output: denials sit near where it stopped


# The patterns are compiled on first use (~0.6 ms together): only a confined command's output is read
# with them, and the last three only on a line that quotes a refusal.
@cache
def _network() -> re.Pattern[str]:
    return re.compile(
        r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
        r"Name or service not known|getaddrinfo failed|nodename nor servname|"
        r"Failed to establish a new connection|"
        r"Could not resolve proxy|unable to access '[a-z]+://",
        re.IGNORECASE,
    )


@cache
def _kill() -> re.Pattern[str]:
    return re.compile(r"kill: \(?(?P<pid>\d+)\)? - Operation not permitted")


@cache
def _quoted() -> re.Pattern[str]:
    return re.compile(r"""['‘"`](?P<path>[^'’"`\n]+)['’"`]""")


@cache
def _before_error() -> re.Pattern[str]:
    return re.compile(
        r"(?:^|: )(?P<path>[^:\n]+): (?:Permission denied|Operation not permitted|Read-only file system)"
    )


class Denial(msgspec.Struct, frozen=True):
    """What the sandbox refused: ``target`` is the path, host line or process id as the output named it.
    ``held``: for a write refused in a writable folder, the secret folder that folder holds."""

    kind: DenialKind
    target: str
    held: str = ""


def find_denial(output: str, policy: SandboxPolicy, cwd: Path) -> Denial | None:
    """The first refusal in ``output`` that the sandbox caused, if any."""
    if not policy.active:
        return None
    text = (
        output if len(output) <= 2 * _MAX_SCANNED else output[:_MAX_SCANNED] + "\n" + output[-_MAX_SCANNED:]
    )
    for line in text.splitlines():
        found = _in_line(line, policy, cwd)
        if found is not None:
            return found
    return None


def _in_line(line: str, policy: SandboxPolicy, cwd: Path) -> Denial | None:
    if not policy.network and _network().search(line):
        return Denial("network", line.strip()[:200])
    if not any(word in line for word in _REFUSALS):
        return None
    kill = _kill().search(line)
    if kill:
        return Denial("signal", kill["pid"])
    candidates = [m["path"] for m in _quoted().finditer(line)]
    candidates += [m["path"].split(": ")[-1] for m in _before_error().finditer(line)]
    for candidate in candidates:
        found = _judge(candidate.strip(), policy, cwd)
        if found is not None:
            return found
    return None


def _judge(name: str, policy: SandboxPolicy, cwd: Path) -> Denial | None:
    if not name or len(name) > 4096 or "\0" in name:
        return None
    path = Path(os.path.realpath(cwd / os.path.expanduser(name)))
    if any(path == s or path.is_relative_to(s) for s in policy.secrets):
        return Denial("read", name)
    if any(path == w or path.is_relative_to(w) for w in policy.writable):
        held = holding_secret(path.parent, policy)
        if held is None or not os.access(path.parent, os.W_OK):
            return None  # the command's own problem
        return Denial("write", name, str(held))
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing != path and not existing.is_dir():
        return None
    return Denial("write", name) if os.access(existing, os.W_OK) else None


def holding_secret(folder: Path, policy: SandboxPolicy) -> Path | None:
    """The secret folder beneath ``folder``, if any: nothing can be made or removed directly in such a
    folder, even a writable one, since a right granted on a folder holds for all beneath it."""
    return next((s for s in policy.secrets if s != folder and s.is_relative_to(folder)), None)


LEAVE = (
    "If the task really needs it, run the command again with `sandbox: false` and a `reason`; the user is "
    "asked first."
)


def explain(denial: Denial, policy: SandboxPolicy, way_out: str = LEAVE) -> str:
    """Words the model (or the user: ``way_out``) can act on: what was refused, what the sandbox allows,
    and the way out."""
    if denial.held:
        what = (
            f"The sandbox ({policy.mode}) refused to write {denial.target}: nothing can be made or removed "
            f"directly in the folder that holds {denial.held}, which the sandbox keeps unreadable; its "
            "other folders can be written."
        )
    elif denial.kind == "write":
        what = (
            f"The sandbox ({policy.mode}) refused to write {denial.target}: only "
            f"{policy.describe_writable()} can be written."
        )
    elif denial.kind == "read":
        what = (
            f"The sandbox refused to read {denial.target}: secret folders (keys, credentials) are not "
            "readable."
        )
    elif denial.kind == "network":
        what = f"The sandbox has no network access ({denial.target})."
    else:
        what = (
            f"The sandbox refused to signal process {denial.target}: it was not started inside the sandbox."
        )
    return f"[sandbox: denied. {what} {way_out}]"
