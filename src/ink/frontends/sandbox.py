"""``ink sandbox check``: what the sandbox can do on this machine, and for this project (R41).

    $ ink sandbox check
    sandbox: available (Landlock ABI 7, seccomp network filter)
      mode here: workspace-write (the default)
      writable: /home/me/project, /tmp, /dev/shm
      ...

It also starts one confined command (``true``), so "available" means a command did run in it. Exit 0
when the sandbox works here, 1 when it does not (with why and what to change).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TextIO

from ink.config import Invocation, Settings
from ink.sandbox import DEFAULT_MODE, SandboxSupport, SandboxUnavailable, open_sandbox, probe

USAGE = "usage: ink sandbox check"


def main(settings: Settings, invocation: Invocation, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    if (invocation.prompt or "check").split() != ["check"]:
        print(f"ink: {USAGE}", file=sys.stderr)
        return 2
    return check(settings, probe(), out)


def check(settings: Settings, support: SandboxSupport, out: TextIO) -> int:
    config = settings.sandbox
    if not support.available:
        print("sandbox: not available", file=out)
        print(f"  why: {support.reason}", file=out)
        print(f"  what to change: {support.remedy}", file=out)
        print(
            "  meanwhile: by default commands run uncontained (with one notice); --sandbox read-only or "
            "workspace-write, or a [sandbox] mode in a config file, refuses to start (exit 2)",
            file=out,
        )
        return 1
    mode = config.mode if config.mode not in (None, "off") else DEFAULT_MODE
    try:
        sandbox = open_sandbox(
            mode,  # type: ignore[arg-type]
            settings.cwd,
            network=config.network,
            writable_roots=config.writable_roots,
            ink_home=settings.ink_home,
        )
    except SandboxUnavailable as exc:
        print(f"sandbox: not available\n  why: {exc}", file=out)
        return 1
    try:
        problem = _trial(sandbox.confinement(), settings.cwd)
        filter_note = ", seccomp network filter" if support.seccomp else ""
        state = "available" if problem is None else f"NOT working: {problem}"
        print(f"sandbox: {state} (Landlock ABI {support.abi}{filter_note})", file=out)
        chosen = "off" if config.mode == "off" else mode
        print(f"  mode here: {chosen} ({_origin(config.where)})", file=out)
        if config.mode == "off":
            print(f"  (what {mode} would allow:)", file=out)
        home = Path.home()
        print(f"  writable: {sandbox.policy.describe_writable(home)}", file=out)
        secrets = ", ".join(_short(p, home) for p in sandbox.policy.secrets)
        print(f"  not readable: {secrets} (their file names can still be listed)", file=out)
        network = (
            "on ([sandbox] network = true)" if config.network else "off (allow with [sandbox] network = true)"
        )
        print(f"  network: {network}", file=out)
        print("  signals and tracing: only processes started inside the sandbox", file=out)
        for gap in support.gaps:
            print(f"  NOT contained on this kernel: {gap}", file=out)
        print("  never contained: see docs/security.md (file metadata, Unix sockets by path)", file=out)
    finally:
        sandbox.close()
    return 0 if problem is None else 1


def _trial(confinement: object, cwd: Path) -> str | None:
    """Start ``true`` confined, as a command would be: None when it ran."""
    from ink.sandbox import Confinement

    assert isinstance(confinement, Confinement)
    try:
        done = subprocess.run(
            ["true"], cwd=cwd, preexec_fn=confinement.preexec(), env=None, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"a confined command could not start ({exc})"
    return None if done.returncode == 0 else f"a confined `true` exited {done.returncode}"


def _origin(where: str) -> str:
    return "the default" if where == "default" else f"from {where}"


def _short(path: Path, home: Path) -> str:
    return "~/" + str(path.relative_to(home)) if path.is_relative_to(home) and path != home else str(path)
