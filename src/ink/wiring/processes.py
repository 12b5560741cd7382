"""What the app does with the processes it started: the run's reaper (R35), the shell of ``!`` lines
(R14), and the second interrupt's hard exit (R21).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ink.agent.abort import AbortSignal
from ink.config import Settings
from ink.run.controller import BangOutput
from ink.run.events import Survivor
from ink.tools.processes import ProcessEntry, ProcessRegistry

log = logging.getLogger(__name__)


class RegistryReaper:
    """The controller's ``Reaper`` (R35): ends every process tree still registered after a run."""

    def __init__(
        self,
        processes: ProcessRegistry,
        kill_delay: float,
        spared: Sequence[Callable[[], Sequence[ProcessEntry]]] = (),
    ) -> None:
        self._processes = processes
        self._kill_delay = kill_delay
        self._spared = spared  # each part's processes that live as long as the app (MCP servers)

    async def reap(self) -> Sequence[Survivor]:
        spared = [entry for kept in self._spared for entry in kept()]
        if not spared:  # every registered tree, and the orphans that came back to ink
            return tuple(await self._processes.terminate_all(self._kill_delay))
        doomed = [e for e in self._processes.entries if all(e is not s for s in spared)]
        return (await self._processes.terminate(doomed, self._kill_delay)).survivors


def bang_runner(settings: Settings, processes: ProcessRegistry) -> Callable[[str, AbortSignal], Any]:
    """R14: ``!command`` runs in the shell in the working directory; its output goes to the user only."""
    from ink.tools.shell import run_shell

    async def run_bang(command: str, signal: AbortSignal) -> BangOutput:
        try:
            result = await run_shell(command, settings.cwd, signal, processes, kill_delay=settings.kill_delay)
        except OSError as exc:
            return BangOutput(f"cannot run the command: {exc.strerror or exc}", None)
        return BangOutput(result.output, result.exit_code, result.interrupted)

    return run_bang


def hard_exit(processes: ProcessRegistry) -> Callable[[int], None]:
    """The second interrupt (R21) for one app: see ``hard_exit_processes``."""
    return lambda status: hard_exit_processes([processes], status)


def hard_exit_processes(registries: Sequence[ProcessRegistry], status: int) -> None:
    """No more waiting: SIGKILL every registered process tree at once, flush what can be flushed, and
    leave with ``status``."""
    for processes in registries:
        processes.kill_all_now()  # only processes proven to be ours: a stale group id may be reused
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
