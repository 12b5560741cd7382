"""Starting what runs a job: its keeper (``keeper.py``) for a job started in the background, the guard
(``guard.py``) for a running call sent there; and the sink that brings a job's output into its file.

Both scripts run on the interpreter that runs ink, isolated (``-I -S``: no site packages, nothing of the
user's environment), so they start in milliseconds and import nothing of ink.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from ink import lineage
from ink.sandbox import Confinement, SandboxUnavailable
from ink.tools import orphans
from ink.tools.jobs.output import FLUSH_SECONDS, JobOutput
from ink.tools.processes import TOKEN_ENV, ProcessRegistry
from ink.tools.shell import SHELL_ENV

KEEPER = Path(__file__).with_name("keeper.py")
GUARD = Path(__file__).with_name("guard.py")
STATUS_LIMIT = 64 * 1024
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = os.path.isdir("/proc")  # the guard reads processes there


class Started:
    """A keeper that runs: the process, the reading ends of its output and status pipes, its token."""

    def __init__(self, proc: asyncio.subprocess.Process, output_fd: int, status_fd: int, token: str) -> None:
        self.proc, self.output_fd, self.status_fd, self.token = proc, output_fd, status_fd, token


async def start_keeper(
    command: str, cwd: str | os.PathLike[str], confinement: Confinement | None, kill_delay: float
) -> Started:
    """The keeper running ``bash -c command`` in ``cwd``, in the sandbox when ``confinement`` is given.
    Raises ``OSError`` (``SandboxUnavailable`` when the sandbox cannot be entered: nothing runs)."""
    bash = shutil.which("bash") or "/bin/bash"
    token = ProcessRegistry.new_token()
    sandbox_env = confinement.env if confinement is not None else {}
    env = {**os.environ, **SHELL_ENV, **sandbox_env, TOKEN_ENV: token}
    steps = (confinement.preexec(),) if confinement is not None else ()  # may raise: before any pipe
    out_r, out_w = os.pipe()
    status_r, status_w = os.pipe()
    keeper = [sys.executable, "-I", "-S", str(KEEPER), f"{kill_delay:g}", str(status_w), "--"]
    with orphans.starting_child():  # until noted as ink's own, a child that ended looks like an orphan
        try:
            proc = await asyncio.create_subprocess_exec(
                *keeper,
                bash,
                "-c",
                command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out_w,
                stderr=out_w,
                cwd=cwd,
                env=env,
                start_new_session=True,
                pass_fds=(status_w,),
                # SIGTERM when ink dies, even by SIGKILL: the keeper then ends the job's whole tree
                preexec_fn=lineage.leader_preexec(signal.SIGTERM, steps=steps),
            )
        except BaseException as exc:
            os.close(out_r)
            os.close(status_r)
            if isinstance(exc, subprocess.SubprocessError):  # only the sandbox's steps fail in the child
                raise SandboxUnavailable(f"the sandbox could not be entered ({exc})") from None
            raise
        finally:
            os.close(out_w)
            os.close(status_w)
        orphans.own_child(proc.pid)  # ink waits for it: never taken for an orphan to end
    return Started(proc, out_r, status_r, token)


def read_status(fd: int) -> dict[str, Any] | None:
    """The keeper's last ``end`` record; None when it wrote none (it was killed). Closes ``fd``."""
    data = b""
    try:
        os.set_blocking(fd, False)
        while len(data) < STATUS_LIMIT:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        os.close(fd)
    for line in reversed(data.splitlines()):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("end"), dict):
            end: dict[str, Any] = record["end"]
            return end
    return None


class Guard:
    """The guard of a job sent to the background (``guard.py``): told the job's processes, told when the
    job ended; its stdin ending otherwise (ink died) makes it end them."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, token: str, pgid: int, pids: dict[int, float], kill_delay: float) -> Guard | None:
        """None where it cannot run (no ``/proc``): the job then has ink's own ends only."""
        if not _PROC:
            return None
        argv = [sys.executable, "-I", "-S", str(GUARD), f"{kill_delay:g}", token, str(pgid)]
        with orphans.starting_child():
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                    start_new_session=True,  # not in the job's group: its ends do not end the guard
                )
            except OSError:
                return None
            orphans.own_child(proc.pid)
        guard = cls(proc)
        guard.tell(pids)
        return guard

    def tell(self, pids: dict[int, float]) -> None:
        """More processes of the job (pid -> start time, ``proctree.start_time``)."""
        lines = "".join(f"{pid} {round(started * _TICKS)}\n" for pid, started in pids.items())
        self._write(lines.encode())

    async def done(self) -> None:
        """The job ended: the guard goes without ending anything."""
        self._write(b"done\n")
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5.0)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        orphans.own_child_done(self.proc.pid)

    def _write(self, data: bytes) -> None:
        if self.proc.stdin is None or self.proc.stdin.is_closing():
            return
        try:
            self.proc.stdin.write(data)
        except (OSError, RuntimeError):
            pass  # the guard is gone: the job keeps ink's own ends


class OutputSink:
    """Feeds a job's output into its ``JobOutput``; once the output is past its cap, the file is brought
    up to date at most every ``FLUSH_SECONDS``, and within that time after the last output."""

    def __init__(self, output: JobOutput) -> None:
        self.output = output
        self._flush: asyncio.TimerHandle | None = None

    def __call__(self, data: bytes) -> None:
        self.output.feed(data)
        if self.output.dirty and self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self._flushed)

    def close(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None

    def _flushed(self) -> None:
        self._flush = None
        self.output.flush()


class OutputPipe(asyncio.Protocol):
    """A keeper's output pipe into an ``OutputSink``; ``closed`` once its last writer is gone."""

    def __init__(self, sink: OutputSink) -> None:
        self.sink = sink
        self.closed = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        self.sink(data)

    def eof_received(self) -> bool | None:
        self.closed.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set()
