"""How a job is stopped and how its end is known, for each of the two ways a job comes to be (R43, R35):

- ``KeeperControl``: a job started in the background runs under its keeper, the subreaper of its tree.
  Stopping it is a SIGTERM to the keeper, which ends the tree; its end is the keeper's exit and report.
- ``AdoptedControl``: a running bash call sent to the background (Ctrl+B) has no keeper. It ends when its
  leader has exited and its output is closed; what it leaves behind is ended with it, and stopping it
  ends its tree the way an interrupt ends a command's (``ProcessRegistry.terminate``). Its guard
  (``guard.py``) ends the tree should ink die.

Either way ``ended()`` returns once nothing of the job runs (or what could not be ended is named).
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import msgspec

from ink.tools import orphans
from ink.tools.jobs.spawn import Guard, OutputPipe, OutputSink, Started, read_status
from ink.tools.processes import ProcessEntry, ProcessRegistry, Survivor, Termination
from ink.tools.shell import Handover

DRAIN_SECONDS = 1.0  # for the last output once the tree is gone


class EndReport(msgspec.Struct, frozen=True):
    """How a job ended: the command's exit code, or the signal that ended it; the strongest signal sent
    to end it (None: it ended by itself); the processes that could not be ended."""

    exit_code: int | None
    signal: str | None
    sent: str | None
    survivors: tuple[Survivor, ...] = ()


class KeeperControl:
    def __init__(
        self,
        started: Started,
        entry: ProcessEntry,
        transport: asyncio.ReadTransport,
        pipe: OutputPipe,
        kill_delay: float,
    ) -> None:
        self.proc, self._started, self._entry = started.proc, started, entry
        self._transport, self._pipe, self._kill_delay = transport, pipe, kill_delay

    def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)  # the keeper ends the tree

    def force(self) -> None:
        """A keeper that did not end in time (stopped, stuck): killed; ``ended`` ends the rest."""
        if self.proc.returncode is None:
            self.proc.kill()

    async def ended(self) -> EndReport:
        try:
            await self.proc.wait()
        finally:
            orphans.own_child_done(self.proc.pid)
            report = read_status(self._started.status_fd)
        await _drained(self._pipe.closed)
        survivors: tuple[Survivor, ...] = ()
        if report is None or report.get("survivors"):  # the keeper was killed, or could not end all
            survivors = (await ProcessRegistry().terminate([self._entry], self._kill_delay)).survivors
        self._pipe.sink.close()
        self._transport.close()
        if report is None:  # killed itself, from outside or by ``force``
            return EndReport(None, _signal_name(self.proc.returncode), "SIGKILL", survivors)
        sent = report.get("sent")
        return EndReport(_int(report.get("exit")), _text(report.get("signal")), _text(sent), survivors)


class AdoptedControl:
    def __init__(self, handover: Handover, sink: OutputSink, guard: Guard | None, kill_delay: float) -> None:
        self.proc, self._handover, self._sink, self._guard = handover.proc, handover, sink, guard
        self._kill_delay = kill_delay
        self._ending: asyncio.Future[Termination] | None = None
        self._stopped = asyncio.Event()
        handover.reader.redirect(sink)

    def stop(self) -> None:
        if self._ending is None:
            terminate = ProcessRegistry().terminate([self._handover.entry], self._kill_delay)
            self._ending = asyncio.ensure_future(terminate)
            self._stopped.set()

    def force(self) -> None:
        ProcessRegistry().kill_now([self._handover.entry])

    async def ended(self) -> EndReport:
        closed = self._handover.reader.closed
        try:
            await self.proc.wait()
            while not closed.is_set() and not self._stopped.is_set():  # output held: the job still runs
                await _first(closed.wait(), self._stopped.wait())
            if self._ending is None:  # what it left behind ends with it (R35)
                self._ending = asyncio.ensure_future(
                    ProcessRegistry().terminate([self._handover.entry], self._kill_delay)
                )
            termination = await self._ending
            await _drained(closed)
        finally:
            orphans.own_child_done(self.proc.pid)
            self._sink.close()
            self._handover.transport.close()
            if self._guard is not None:
                await self._guard.done()
        code = self.proc.returncode
        exit_code = code if code is not None and code >= 0 else None
        sent = termination.signal_name if self._stopped.is_set() else None
        return EndReport(exit_code, _signal_name(code), sent, termination.survivors)


async def _first(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)  # ended, not left pending: none outlives the job's end (or the loop)


async def _drained(closed: asyncio.Event) -> None:
    try:
        await asyncio.wait_for(closed.wait(), DRAIN_SECONDS)
    except TimeoutError:
        pass  # a survivor holds it: named in the report


def _signal_name(code: int | None) -> str | None:
    if code is None or code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
