"""The sandbox of one ink process: its policy, its prepared confinements, and its private temporary folder.

Made once at start (``open_sandbox``), handed to what starts commands (the bash tool, hooks, batch
steps), closed at exit. ``confinement()`` is None when the mode is ``off``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ink.sandbox.confine import Confinement
from ink.sandbox.denials import Denial, find_denial
from ink.sandbox.landlock import Kernel
from ink.sandbox.policy import SandboxMode, SandboxPolicy, build_policy, make_private_temporary


class Sandbox:
    """``mode``/``policy``: what commands run under. ``notice``: the one line to show the user at start
    (the default mode fell back to off), if any."""

    def __init__(
        self, policy: SandboxPolicy, *, kernel: Kernel | None = None, notice: str | None = None
    ) -> None:
        self.policy = policy
        self.notice = notice
        self._confinement = Confinement(policy, kernel) if policy.active else None  # raises now

    @property
    def temporary(self) -> Path | None:
        """Where ink's own scratch files for a confined command go (a hook's stdin and stderr): the
        private temporary folder in ``read-only``, else None (the system's, writable in the sandbox)."""
        return self.policy.temporary

    @property
    def mode(self) -> SandboxMode:
        return self.policy.mode

    def confinement(self) -> Confinement | None:
        """What a command is started with; None when the mode is ``off``."""
        return self._confinement

    def denial(self, output: str, cwd: Path) -> Denial | None:
        return find_denial(output, self.policy, cwd)

    def close(self) -> None:
        if self._confinement is not None:
            self._confinement.close()
        if self.policy.temporary is not None:
            shutil.rmtree(self.policy.temporary, ignore_errors=True)


def open_sandbox(
    mode: SandboxMode,
    workspace: Path,
    *,
    network: bool = False,
    writable_roots: tuple[Path, ...] = (),
    ink_home: Path | None = None,
    notice: str | None = None,
    kernel: Kernel | None = None,
) -> Sandbox:
    """The sandbox of ``mode`` for ``workspace``; raises ``SandboxUnavailable`` when it cannot be set up."""
    temporary = make_private_temporary() if mode == "read-only" else None
    try:
        policy = build_policy(
            mode,
            workspace,
            network=network,
            writable_roots=writable_roots,
            ink_home=ink_home,
            private_temporary=temporary,
        )
        return Sandbox(policy, kernel=kernel, notice=notice)
    except BaseException:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
        raise


def no_sandbox(workspace: Path, notice: str | None = None) -> Sandbox:
    return Sandbox(build_policy("off", workspace), notice=notice)
