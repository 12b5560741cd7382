"""The background jobs of one session (R43): started, watched, read, killed, listed, and told about.

Each job runs under its keeper (``keeper.py``, a tiny script run by the interpreter ink runs on): the
session leader ink starts, in the sandbox when commands are, with ink's parent-death signal. The keeper is
the subreaper of the job's tree and ends all of it on SIGTERM, so a job ends with its whole tree, escapees
included, however it ends: ``job_kill``, the user, the end of the session, or a kill -9 of ink (R35).

Jobs are not in the app's ``ProcessRegistry``: the reaper that ends a run's processes after an interrupt
never sees them (an interrupt ends the foreground calls, not the jobs), and nothing a job starts can come
back to ink as an orphan while its keeper lives (it is the nearer subreaper). Should the keeper itself be
killed, its tree is ended by ink through the job's token and process group, as any command's.

What leaves the registry: ``JobStart``/``JobEnd`` through ``emit`` (the controller's events), starts and
ends through ``journal`` (the session file), and notes for the model (``take_notes``: a job that ended
since the model last looked), appended to its next request by the loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal as signals
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import msgspec

from ink import lineage
from ink.agent.tasks import Tasks
from ink.sandbox import Confinement, SandboxUnavailable
from ink.tools import orphans, proctree
from ink.tools.jobs.output import FLUSH_SECONDS, JobOutput
from ink.tools.jobs.types import JobEnd, JobInfo, JobStart, JobState, Stopper, how_it_ended
from ink.tools.processes import DEFAULT_KILL_DELAY, TOKEN_ENV, ProcessEntry, ProcessRegistry, Survivor
from ink.tools.shell import SHELL_ENV

KEEPER = Path(__file__).with_name("keeper.py")
KEEPER_SLACK = 2.0  # beyond the kill delay and the keeper's 1 s for SIGKILL: its start, a loaded machine
DRAIN_SECONDS = 1.0  # for the last output once the tree is gone
STATUS_LIMIT = 64 * 1024
COMMAND_CHARS = 80  # of a command quoted in a note to the model

JobEvent = JobStart | JobEnd


class UnknownJob(LookupError):
    """No job of this session has that id; the message lists the ones there are."""


class JobJournal(Protocol):
    """Where a session records its jobs (the session file): each start, and each end it saw."""

    def job_started(self, job: JobInfo) -> None: ...

    def job_ended(self, job: JobInfo) -> None: ...


class _Feed(asyncio.Protocol):
    """The job's output pipe into its ``JobOutput``; once the output is past its cap, the file is brought
    up to date at most every ``FLUSH_SECONDS``, and within that time after the last output."""

    def __init__(self, output: JobOutput) -> None:
        self.output = output
        self.closed = asyncio.Event()
        self._flush: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        self.output.feed(data)
        if self.output.dirty and self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self._flushed)

    def _flushed(self) -> None:
        self._flush = None
        self.output.flush()

    def eof_received(self) -> bool | None:
        self.closed.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._flush is not None:
            self._flush.cancel()  # the job's end writes the file out
        self.closed.set()


class _Job:
    """One job started by this process, while it runs and after."""

    def __init__(
        self,
        job_id: str,
        command: str,
        proc: asyncio.subprocess.Process,
        entry: ProcessEntry,
        output: JobOutput,
        status_fd: int,
    ) -> None:
        self.id, self.command, self.proc, self.entry, self.output = job_id, command, proc, entry, output
        self.status_fd = status_fd
        self.started_at = time.time()
        self.started = time.monotonic()
        self.state: JobState = "running"
        self.stopper: Stopper | None = None
        self.exit_code: int | None = None
        self.signal: str | None = None
        self.ended_at: float | None = None
        self.survivors: tuple[Survivor, ...] = ()
        self.read_to = 0  # what ``job_output`` has shown of the output so far (offset in all of it)
        self.ended = asyncio.Event()
        self.journal: JobJournal | None = None  # of the session it belongs to; None once it was left

    def info(self) -> JobInfo:
        path = str(self.output.path) if self.output.path is not None else None
        return JobInfo(
            self.id,
            self.command,
            self.proc.pid,
            self.state,
            self.started_at,
            self.ended_at,
            self.exit_code,
            self.signal,
            path,
        )

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


class JobRegistry:
    """The jobs of the session the app has open. Use it from the event loop's thread."""

    def __init__(
        self, *, kill_delay: float = DEFAULT_KILL_DELAY, emit: Callable[[JobEvent], None] | None = None
    ) -> None:
        """``emit``: where ``job_start``/``job_end`` go (the app's event stream)."""
        self.kill_delay = kill_delay
        self.emit = emit or _drop
        self.journal: JobJournal | None = None
        self._folder: Callable[[], Path | None] = _nowhere
        self._live: dict[str, _Job] = {}
        self._leaving: list[_Job] = []  # jobs of a session that was left, still being ended
        self._earlier: dict[str, JobInfo] = {}
        self._next = 1
        self._notes: list[str] = []
        self._tasks = Tasks()
        self.ended_with_last_process: tuple[JobInfo, ...] = ()

    # -- the session ---------------------------------------------------------------------------------

    def enter_session(
        self,
        folder: Callable[[], Path | None],
        journal: JobJournal | None,
        earlier: Sequence[JobInfo] = (),
        ended_with_last_process: Sequence[JobInfo] = (),
    ) -> None:
        """A session opens: its jobs' output files go to ``folder()``, starts and ends to ``journal``.
        ``earlier``: the jobs its file records; ``ended_with_last_process``: those of them that were
        running when the ink process before this one ended (the user and the model are told)."""
        self._folder, self.journal = folder, journal
        self._live, self._notes = {}, []
        self._earlier = {job.job_id: job for job in earlier}
        self._next = 1 + max((_number(job_id) for job_id in self._earlier), default=0)
        self.ended_with_last_process = tuple(ended_with_last_process)
        if self.ended_with_last_process:
            self._notes.append(_ended_earlier_note(self.ended_with_last_process))

    def leave_session(self) -> None:
        """The session ends (``/clear``, another session loaded): every job of it is ended, with its
        tree, and recorded as ended with the session. Returns at once; the ends are announced as they
        come (``job_end``), ``aclose`` waits for the stragglers."""
        for job in list(self._live.values()):
            if job.state in ("running", "ending"):
                self._stop(job, "session")
                if job.journal is not None:
                    job.journal.job_ended(_with_state(job.info(), "ended"))
                    job.journal = None
                self._leaving.append(job)
        self._live = {}

    # -- starting --------------------------------------------------------------------------------

    async def start(
        self,
        command: str,
        cwd: str | os.PathLike[str],
        *,
        confinement: Confinement | None = None,
        tool_call_id: str | None = None,
    ) -> JobInfo:
        """Start ``command`` (``bash -c``) as a job in ``cwd``, in ``confinement``'s sandbox when given.
        Returns once it runs. Raises ``OSError`` when it cannot start (``SandboxUnavailable`` when the
        sandbox cannot be entered: nothing runs then)."""
        job_id = f"job-{self._next}"
        self._next += 1  # before any await: two calls starting jobs at once get two numbers
        output = JobOutput(self._output_path(job_id))
        try:
            proc, out_fd, status_fd, token = await _spawn(command, cwd, confinement, self.kill_delay)
        except BaseException:
            output.close()
            raise
        entry = ProcessEntry(proc.pid, command, token, proctree.start_time(proc.pid))
        orphans.own_child(proc.pid)  # ink waits for it: never taken for an orphan to end
        job = _Job(job_id, command, proc, entry, output, status_fd)
        job.journal = self.journal
        self._live[job_id] = job
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(out_fd, "rb", buffering=0)
        try:
            transport, feed = await loop.connect_read_pipe(lambda: _Feed(output), pipe)
        except BaseException:
            pipe.close()
            raise
        self._tasks.spawn(self._watch(job, transport, feed), f"job {job_id}")
        info = job.info()
        if job.journal is not None:
            job.journal.job_started(info)
        self.emit(JobStart(job_id, command, proc.pid, tool_call_id, info.output))
        return info

    def _output_path(self, job_id: str) -> Path | None:
        try:
            folder = self._folder()
            if folder is None:
                return None
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(folder, 0o700)  # mkdir's mode passes through the umask
        except OSError:
            return None  # kept in memory only; ``job_output`` still reads it
        return folder / f"{job_id}.log"

    # -- watching --------------------------------------------------------------------------------

    async def _watch(self, job: _Job, transport: asyncio.ReadTransport, feed: _Feed) -> None:
        try:
            await job.proc.wait()
        finally:
            orphans.own_child_done(job.proc.pid)
            report = _read_status(job.status_fd)
        try:
            await asyncio.wait_for(feed.closed.wait(), DRAIN_SECONDS)
        except TimeoutError:
            pass  # a survivor holds the output: it is ended below
        survivors: tuple[Survivor, ...] = ()
        if report is None or report.get("survivors"):  # the keeper was killed, or could not end all
            survivors = (await ProcessRegistry().terminate([job.entry], self.kill_delay)).survivors
        transport.close()
        self._finish(job, report, survivors)

    def _finish(self, job: _Job, report: dict[str, Any] | None, survivors: tuple[Survivor, ...]) -> None:
        job.output.close()
        job.ended_at = time.time()
        job.survivors = survivors
        if report is not None:
            job.exit_code, job.signal = _int(report.get("exit")), _text(report.get("signal"))
        elif job.proc.returncode is not None and job.proc.returncode < 0:
            job.signal = _signal_name(-job.proc.returncode)  # the keeper itself was killed
        sent = report.get("sent") if report is not None else "SIGKILL"
        if job.stopper == "session":
            job.state = "ended"
        elif job.stopper is not None and sent is not None:
            job.state = "killed"
        else:
            job.state = "exited"
        info = job.info()
        if job.journal is not None:
            job.journal.job_ended(info)
        if job.stopper not in ("model", "session"):  # the model's own job_kill answers it already
            self._notes.append(_ended_note(info, job.stopper, job.seconds))
        if job in self._leaving:
            self._leaving.remove(job)
        job.ended.set()
        duration = int(job.seconds * 1000)
        self.emit(JobEnd(job.id, job.exit_code, job.signal, job.state, job.command, duration, survivors))

    # -- acting ----------------------------------------------------------------------------------

    async def kill(self, job_id: str, by: Stopper) -> JobInfo:
        """End the job and its whole tree (SIGTERM, SIGKILL after the kill delay); its info once ended.
        A job that already ended is left as it was. Raises ``UnknownJob``."""
        job = self._live.get(job_id)
        if job is None:
            return self._earlier_info(job_id)
        if job.state in ("running", "ending"):
            self._stop(job, by)
        await self._wait_ended(job)
        return job.info()

    def stop(self, job_id: str, by: Stopper) -> JobInfo:
        """``kill`` without waiting (RPC ``kill_job``, the TUI's ``/jobs kill``): the job is ``ending``
        now, its ``job_end`` follows. Raises ``UnknownJob``."""
        job = self._live.get(job_id)
        if job is None:
            return self._earlier_info(job_id)
        if job.state in ("running", "ending"):
            self._stop(job, by)
            self._tasks.spawn(self._wait_ended(job), f"ending {job_id}")
        return job.info()

    def _stop(self, job: _Job, by: Stopper) -> None:
        if job.stopper is None:
            job.stopper, job.state = by, "ending"
        if job.proc.returncode is None:
            job.proc.send_signal(signals.SIGTERM)  # the keeper ends the tree

    async def _wait_ended(self, job: _Job) -> None:
        """Until the job ended: bounded by the keeper's own bound, then ink kills the keeper and ends
        what is left of the tree itself."""
        bound = min(self.kill_delay, 2.0) + 1.0 + KEEPER_SLACK
        try:
            await asyncio.wait_for(job.ended.wait(), bound)
        except TimeoutError:
            if job.proc.returncode is None:
                job.proc.kill()  # a stopped or stuck keeper: the watcher ends the tree through its token
            await asyncio.wait_for(job.ended.wait(), bound + 2.0)

    def stop_all(self) -> None:
        """The app is closing: every job starts ending now (``aclose`` waits for them), so their trees end
        while the rest of the app closes."""
        for job in self._live.values():
            if job.state in ("running", "ending"):
                self._stop(job, "session")

    async def aclose(self) -> list[Survivor]:
        """The end of the app: every job ends with its tree, recorded as ended with the session.
        Bounded (the kill bound, twice at worst). Returns what could not be ended."""
        running = [job for job in self._live.values() if job.state in ("running", "ending")]
        for job in running:
            self._stop(job, "session")
        waiting = [*running, *self._leaving]
        results = await asyncio.gather(*(self._wait_ended(job) for job in waiting), return_exceptions=True)
        survivors = [s for job in waiting for s in job.survivors]
        survivors += [
            Survivor(job.proc.pid, job.command, "its keeper did not end")
            for job, result in zip(waiting, results, strict=True)
            if isinstance(result, BaseException)
        ]
        await self._tasks.aclose(1.0)
        return survivors

    # -- reading ---------------------------------------------------------------------------------

    def listing(self) -> list[JobInfo]:
        """Every job of the session, earlier processes' first, in the order they started."""
        return [*self._earlier.values(), *(job.info() for job in self._live.values())]

    def running(self) -> list[JobInfo]:
        return [job.info() for job in self._live.values() if job.state in ("running", "ending")]

    def info(self, job_id: str) -> JobInfo:
        """Raises ``UnknownJob``."""
        job = self._live.get(job_id)
        return job.info() if job is not None else self._earlier_info(job_id)

    def output(self, job_id: str) -> JobOutput | None:
        """The live output of a job of this process; None for an earlier one (read its file). Raises
        ``UnknownJob``."""
        job = self._live.get(job_id)
        if job is None:
            self._earlier_info(job_id)
            return None
        return job.output

    def read_new(self, job_id: str) -> tuple[str, int]:
        """What the job printed since the last ``read_new`` (all of it the first time), and how many
        bytes of that were cut from the middle of a long output. Raises ``UnknownJob``."""
        job = self._live.get(job_id)
        if job is None:
            self._earlier_info(job_id)
            return "", 0
        text, gone = job.output.since(job.read_to)
        job.read_to = job.output.total
        return text, gone

    def take_notes(self) -> str:
        """What the model has not been told yet (jobs that ended), as one note; "" when nothing."""
        notes, self._notes = self._notes, []
        return "\n".join(notes)

    def _earlier_info(self, job_id: str) -> JobInfo:
        info = self._earlier.get(job_id)
        if info is None:
            known = ", ".join([*self._earlier, *self._live]) or "none yet"
            raise UnknownJob(f"no job {job_id!r} in this session (its jobs: {known})")
        return info


async def _spawn(
    command: str, cwd: str | os.PathLike[str], confinement: Confinement | None, kill_delay: float
) -> tuple[asyncio.subprocess.Process, int, int, str]:
    """The keeper running ``bash -c command``: the process, the output pipe's and the status pipe's
    reading ends, and the token its tree carries."""
    bash = shutil.which("bash") or "/bin/bash"
    token = ProcessRegistry.new_token()
    sandbox_env = confinement.env if confinement is not None else {}
    env = {**os.environ, **SHELL_ENV, **sandbox_env, TOKEN_ENV: token}
    out_r, out_w = os.pipe()
    status_r, status_w = os.pipe()
    keeper = [sys.executable, "-I", "-S", str(KEEPER), f"{kill_delay:g}", str(status_w), "--"]
    argv = [*keeper, bash, "-c", command]
    steps = (confinement.preexec(),) if confinement is not None else ()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=(status_w,),
            # SIGTERM when ink dies, even by SIGKILL: the keeper then ends the job's whole tree
            preexec_fn=lineage.leader_preexec(signals.SIGTERM, steps=steps),
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
    return proc, out_r, status_r, token


def _read_status(fd: int) -> dict[str, Any] | None:
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


def _ended_note(job: JobInfo, stopper: Stopper | None, seconds: float) -> str:
    command = _short(job.command)
    if stopper == "user":
        after = duration(seconds)
        return f"[Background job {job.job_id} ({command}) was stopped by the user after {after}.]"
    return (
        f"[Background job {job.job_id} ({command}) ended by itself after {duration(seconds)}: "
        f"{how_it_ended(job)}. job_output shows what it printed.]"
    )


def _ended_earlier_note(jobs: Sequence[JobInfo]) -> str:
    listed = ", ".join(f"{job.job_id} ({_short(job.command)})" for job in jobs)
    return (
        f"[Background jobs of this session that were running when the previous ink process ended were "
        f"ended with it and are not running now: {listed}. job_output still shows what they printed.]"
    )


def _with_state(job: JobInfo, state: JobState) -> JobInfo:
    return msgspec.structs.replace(job, state=state, ended_at=time.time())


def _short(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= COMMAND_CHARS else line[: COMMAND_CHARS - 1] + "…"


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def _number(job_id: str) -> int:
    tail = job_id.rpartition("-")[2]
    return int(tail) if tail.isdigit() else 0


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _drop(_event: JobEvent) -> None:
    return None


def _nowhere() -> Path | None:
    return None
