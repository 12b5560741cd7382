"""The sandbox of a batch (R41, docs/batch.md): the mode is resolved once, as ``ink`` itself would (a mode
asked for that cannot start is exit 2; the default falls back to ``off`` with one notice), passed to every
run as ``--sandbox``, and each task's set-up and check commands run in it, its workspace copy being the
workspace. ``StepSandbox`` is a value the Ray backend ships to its workers, which open it themselves: a
worker where the sandbox cannot start fails the task, nothing runs uncontained (R39)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from ink.config import Settings
from ink.sandbox import DEFAULT_MODE, Confinement, Sandbox, SandboxMode, explain, no_sandbox, open_sandbox
from ink.wiring.sandboxing import resolved_mode

STEP_WAY_OUT = (
    "Give the task's commands what they need in [sandbox] of your config (network, writable_roots), or "
    "run the batch with --sandbox off."
)


class StepSandbox(msgspec.Struct, frozen=True):
    """What every task's commands run in: the mode, ``[sandbox]``'s network and writable roots (absolute)
    and the ink home the sandbox keeps unreadable."""

    mode: SandboxMode = DEFAULT_MODE
    network: bool = False
    writable_roots: tuple[str, ...] = ()
    ink_home: str | None = None


def batch_sandbox(settings: Settings) -> tuple[StepSandbox, str | None]:
    """The batch's sandbox and the one notice to show; raises ``SandboxRefused`` for a mode asked for
    (``--sandbox``, a config file) that cannot start here."""
    mode, notice = resolved_mode(settings)
    config = settings.sandbox
    roots = tuple(str(p) for p in config.writable_roots)
    return StepSandbox(mode, config.network, roots, str(settings.ink_home)), notice


def task_sandbox(spec: StepSandbox, workspace: Path) -> Sandbox:
    """The sandbox of one task's commands, on its workspace (which must exist: Landlock grants what is
    there). Raises ``SandboxUnavailable`` where it cannot be set up."""
    if spec.mode == "off":
        return no_sandbox(workspace)
    return open_sandbox(
        spec.mode,
        workspace,
        network=spec.network,
        writable_roots=tuple(Path(p) for p in spec.writable_roots),
        ink_home=Path(spec.ink_home) if spec.ink_home is not None else None,
    )


class TaskSandbox:
    """One task's sandbox, opened at its first command (its workspace exists by then), closed with the
    task (``read-only``'s private temporary folder goes)."""

    def __init__(self, spec: StepSandbox, workspace: Path) -> None:
        self.spec, self.workspace = spec, workspace
        self._opened: Sandbox | None = None

    def confinement(self) -> Confinement | None:
        """What a set-up or check command starts with; raises ``SandboxUnavailable`` (R39)."""
        if self._opened is None:
            self._opened = task_sandbox(self.spec, self.workspace)
        return self._opened.confinement()

    def refused(self, output: str) -> str:
        """What the sandbox refused a command whose output is ``output``, in words, or ""."""
        opened = self._opened
        denial = opened.denial(output, self.workspace) if opened is not None else None
        if denial is None or opened is None:
            return ""
        return f" {explain(denial, opened.policy, STEP_WAY_OUT)}"

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
            self._opened = None
