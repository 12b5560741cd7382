"""The background jobs of one session (R43): started, watched, read, killed, listed, and told about.

A job started in the background runs under its keeper (``keeper.py``): the session leader ink starts, in
the sandbox when commands are, with ink's parent-death signal, the subreaper of the job's tree, which it
ends whole on SIGTERM. A running bash call sent to the background (``adopt``) keeps the process it had,
watched by a guard (``guard.py``). Either way a job ends with its whole tree, escapees included, however
it ends: by itself, ``job_kill``, the user, the end of the session, or a kill -9 of ink (R35); how is
``control.py``'s.

Jobs are not in the app's ``ProcessRegistry``: the reaper that ends a run's processes after an interrupt
never sees them (an interrupt ends the foreground calls, not the jobs), and nothing a keeper's job starts
comes back to ink as an orphan (the keeper is the nearer subreaper).

What leaves the registry: ``JobStart``/``JobEnd`` through ``emit`` (the app's events), starts and ends
through ``journal`` (the session file), and notes for the model (``take_notes``: a job that ended since
the model last looked), appended to its next request by the loop.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

import msgspec

from ink.agent.tasks import Tasks
from ink.sandbox import Confinement
from ink.tools import proctree
from ink.tools.jobs.notes import ended_earlier_note, ended_note
from ink.tools.jobs.output import JobOutput
from ink.tools.jobs.types import JobEnd, JobInfo, JobStart, JobState, Stopper
from ink.tools.limits import bounded
from ink.tools.processes import DEFAULT_KILL_DELAY, ProcessEntry, Survivor
from ink.tools.shell import Detach, Handover

if TYPE_CHECKING:  # imported where a job starts or ends: a session without one never needs them
    from ink.tools.jobs.control import AdoptedControl, EndReport, KeeperControl

MAX_RUNNING = 64  # jobs running at once: a model that loops starting them cannot exhaust the machine
MAX_NOTES = 20  # lines of one note to the model
KEEPER_SLACK = 2.0  # beyond the kill delay and the keeper's 1 s for SIGKILL: its start, a loaded machine

JobEvent = JobStart | JobEnd
Control: TypeAlias = "KeeperControl | AdoptedControl"


class TooManyJobs(OSError):
    """No more jobs may start until one ends: each holds processes (and its keeper) on the machine."""


class UnknownJob(LookupError):
    """No job of this session has that id; the message lists the ones there are."""


class JobJournal(Protocol):
    """Where a session records its jobs (the session file): each start, and each end it saw."""

    def job_started(self, job: JobInfo) -> None: ...

    def job_ended(self, job: JobInfo) -> None: ...


class _Job:
    """One job started by this process, while it runs and after."""

    def __init__(
        self, job_id: str, command: str, control: Control, output: JobOutput, seconds: float
    ) -> None:
        self.id, self.command, self.control, self.output = job_id, command, control, output
        self.started_at = time.time() - seconds
        self.started = time.monotonic() - seconds
        self.state: JobState = "running"
        self.stopper: Stopper | None = None
        self.end: EndReport | None = None
        self.ended_at: float | None = None
        self.read_to = 0  # what ``job_output`` has shown of the output so far (offset in all of it)
        self.ended = asyncio.Event()
        self.journal: JobJournal | None = None  # of the session it belongs to; None once it was left

    @property
    def running(self) -> bool:
        return self.state in ("running", "ending")

    def info(self) -> JobInfo:
        from ink.tools.jobs.control import EndReport

        path = str(self.output.path) if self.output.path is not None else None
        end = self.end or EndReport(None, None, None)
        return JobInfo(
            self.id,
            self.command,
            self.control.proc.pid,
            self.state,
            self.started_at,
            self.ended_at,
            end.exit_code,
            end.signal,
            path,
        )

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


class JobRegistry:
    """The jobs of the session the app has open. Use it from the event loop's thread."""

    def __init__(
        self,
        *,
        kill_delay: float = DEFAULT_KILL_DELAY,
        emit: Callable[[JobEvent], None] | None = None,
        max_running: int = MAX_RUNNING,
    ) -> None:
        """``emit``: where ``job_start``/``job_end`` go (the app's event stream)."""
        self.kill_delay = kill_delay
        self.max_running = max_running
        self.emit = emit or _drop
        self.journal: JobJournal | None = None
        self._folder: Callable[[], Path | None] = _nowhere
        self._live: dict[str, _Job] = {}
        self._leaving: list[_Job] = []  # jobs of a session that was left, still being ended
        self._earlier: dict[str, JobInfo] = {}
        self._next = 1
        self._notes: list[str] = []
        self._tasks = Tasks()
        self._foreground: dict[str, Detach] = {}  # running bash calls that may be sent to the background
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
            self._notes.append(ended_earlier_note(self.ended_with_last_process))

    def leave_session(self) -> None:
        """The session ends (``/clear``, another session loaded): every job of it is ended, with its
        tree, and recorded as ended with the session. Returns at once; the ends are announced as they
        come (``job_end``), ``aclose`` waits for the stragglers."""
        for job in list(self._live.values()):
            if job.running:
                self._stop(job, "session")
                if job.journal is not None:
                    ended = msgspec.structs.replace(job.info(), state="ended", ended_at=time.time())
                    job.journal.job_ended(ended)
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
        sandbox cannot be entered: nothing runs then), ``TooManyJobs`` when ``max_running`` run."""
        if len(self.running()) >= self.max_running:
            raise TooManyJobs(
                f"{self.max_running} background jobs run already: stop one with job_kill first "
                f"(job_output says what each does)"
            )
        from ink.tools.jobs.control import KeeperControl
        from ink.tools.jobs.spawn import OutputPipe, OutputSink, start_keeper

        job_id = self._new_id()
        output = JobOutput(self._output_path(job_id))
        try:
            started = await start_keeper(command, cwd, confinement, self.kill_delay)
        except BaseException:
            output.close()
            raise
        proc = started.proc
        entry = ProcessEntry(proc.pid, command, started.token, proctree.start_time(proc.pid))
        pipe = os.fdopen(started.output_fd, "rb", buffering=0)
        try:
            loop = asyncio.get_running_loop()
            transport, reader = await loop.connect_read_pipe(lambda: OutputPipe(OutputSink(output)), pipe)
        except BaseException:
            pipe.close()
            proc.send_signal(signal.SIGTERM)  # its keeper ends what it started: nothing else knows of it
            raise
        control = KeeperControl(started, entry, transport, reader, self.kill_delay)
        return self._add(_Job(job_id, command, control, output, 0.0), tool_call_id)

    @contextmanager
    def foreground(self, tool_call_id: str) -> Iterator[Detach]:
        """Around a bash call running in the foreground: while it runs, ``background_running`` can send
        it to the background (the TUI's Ctrl+B)."""
        detach = Detach()
        self._foreground[tool_call_id] = detach
        try:
            yield detach
        finally:
            self._foreground.pop(tool_call_id, None)

    @property
    def foreground_calls(self) -> tuple[str, ...]:
        """The running bash calls ``background_running`` would send to the background."""
        return tuple(self._foreground)

    def background_running(self) -> list[str]:
        """Send every running foreground bash call to the background; their tool call ids (none: nothing
        ran). Each call returns at once with its output so far and the job it became (``adopt``)."""
        for detach in self._foreground.values():
            detach.request()
        return list(self._foreground)

    async def adopt(self, detach: Detach, command: str, tool_call_id: str, seconds: float) -> JobInfo:
        """The call ``detach`` sent to the background becomes a job: its process runs on, its output so
        far starts the job's output. ``seconds``: how long it had run."""
        from ink.tools.jobs.control import AdoptedControl
        from ink.tools.jobs.spawn import Guard, OutputSink

        handover: Handover | None = detach.handover
        assert handover is not None, "adopt a call only once run_process handed it over"
        job_id = self._new_id()
        output = JobOutput(self._output_path(job_id))
        output.feed(handover.reader.buffer.render().encode("utf-8", "surrogateescape"))
        entry = handover.entry
        seen = {entry.pid: entry.create_time, **entry.seen} if entry.create_time is not None else entry.seen
        guard = await Guard.start(entry.token, entry.pgid, seen, self.kill_delay)
        control = AdoptedControl(handover, OutputSink(output), guard, self.kill_delay)
        return self._add(_Job(job_id, command, control, output, seconds), tool_call_id)

    def _new_id(self) -> str:
        job_id = f"job-{self._next}"
        self._next += 1  # before any await: two calls starting jobs at once get two numbers
        return job_id

    def _add(self, job: _Job, tool_call_id: str | None) -> JobInfo:
        job.journal = self.journal
        self._live[job.id] = job
        self._tasks.spawn(self._watch(job), f"job {job.id}")
        info = job.info()
        if job.journal is not None:
            job.journal.job_started(info)
        self.emit(JobStart(job.id, job.command, job.control.proc.pid, tool_call_id, info.output))
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

    async def _watch(self, job: _Job) -> None:
        try:
            job.end = await job.control.ended()
        except Exception as exc:  # a bug must not leave the job listed as running for ever
            from ink.tools.jobs.control import EndReport

            job.end = EndReport(None, None, None, (Survivor(job.control.proc.pid, job.command, str(exc)),))
        self._finish(job)

    def _finish(self, job: _Job) -> None:
        assert job.end is not None
        job.output.close()
        job.ended_at = time.time()
        if job.stopper == "session":
            job.state = "ended"
        elif job.stopper is not None and job.end.sent is not None:
            job.state = "killed"
        else:
            job.state = "exited"
        info = job.info()
        if job.journal is not None:
            job.journal.job_ended(info)
        if job.stopper not in ("model", "session"):  # the model's own job_kill answers it already
            self._notes.append(ended_note(info, job.stopper, job.seconds))
        if job in self._leaving:
            self._leaving.remove(job)
        job.ended.set()
        end, took = job.end, int(job.seconds * 1000)
        self.emit(JobEnd(job.id, end.exit_code, end.signal, job.state, job.command, took, end.survivors))

    # -- acting ----------------------------------------------------------------------------------

    async def kill(self, job_id: str, by: Stopper) -> JobInfo:
        """End the job and its whole tree (SIGTERM, SIGKILL after the kill delay); its info once ended.
        A job that already ended is left as it was. Raises ``UnknownJob``."""
        job = self._live.get(job_id)
        if job is None:
            return self._earlier_info(job_id)
        if job.running:
            self._stop(job, by)
        await self._wait_ended(job)
        return job.info()

    def stop(self, job_id: str, by: Stopper) -> JobInfo:
        """``kill`` without waiting (RPC ``kill_job``, the TUI's ``/jobs kill``): the job is ``ending``
        now, its ``job_end`` follows. Raises ``UnknownJob``."""
        job = self._live.get(job_id)
        if job is None:
            return self._earlier_info(job_id)
        if job.running:
            self._stop(job, by)
            self._tasks.spawn(self._wait_ended(job), f"ending {job_id}")
        return job.info()

    def _stop(self, job: _Job, by: Stopper) -> None:
        if job.stopper is None:
            job.stopper, job.state = by, "ending"
        job.control.stop()

    async def _wait_ended(self, job: _Job) -> None:
        """Until the job ended: bounded by the keeper's own bound, then ink kills the keeper and ends
        what is left of the tree itself."""
        bound = min(self.kill_delay, 2.0) + 1.0 + KEEPER_SLACK
        try:
            await asyncio.wait_for(job.ended.wait(), bound)
        except TimeoutError:
            job.control.force()  # a stopped or stuck keeper: the watcher ends the tree through its token
            await asyncio.wait_for(job.ended.wait(), bound + 2.0)

    def stop_all(self) -> None:
        """The app is closing: every job starts ending now (``aclose`` waits for them), so their trees end
        while the rest of the app closes."""
        for job in self._live.values():
            if job.running:
                self._stop(job, "session")

    async def aclose(self) -> list[Survivor]:
        """The end of the app: every job ends with its tree, recorded as ended with the session.
        Bounded (the kill bound, twice at worst). Returns what could not be ended."""
        running = [job for job in self._live.values() if job.running]
        for job in running:
            self._stop(job, "session")
        waiting = [*running, *self._leaving]
        results = await asyncio.gather(*(self._wait_ended(job) for job in waiting), return_exceptions=True)
        survivors = [s for job in waiting if job.end is not None for s in job.end.survivors]
        survivors += [
            Survivor(job.control.proc.pid, job.command, "it did not end")
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
        return [job.info() for job in self._live.values() if job.running]

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
        """What the model has not been told yet (jobs that ended), as one note; "" when nothing. At most
        ``MAX_NOTES`` lines: the oldest of more are counted, not quoted (an idle session may see hundreds)."""
        notes, self._notes = self._notes, []
        if len(notes) > MAX_NOTES:
            more = len(notes) - MAX_NOTES + 1
            notes = [
                f"[{more} more background jobs ended earlier; job_output reads any of them.]",
                *notes[-MAX_NOTES + 1 :],
            ]
        return "\n".join(notes)

    def _earlier_info(self, job_id: str) -> JobInfo:
        info = self._earlier.get(job_id)
        if info is None:
            known = ", ".join([*self._earlier, *self._live]) or "none yet"
            raise UnknownJob(f"no job {bounded(job_id, 80)!r} in this session (its jobs: {bounded(known)})")
        return info


def _number(job_id: str) -> int:
    tail = job_id.rpartition("-")[2]
    return int(tail) if tail.isdecimal() else 0


def _drop(_event: JobEvent) -> None:
    return None


def _nowhere() -> Path | None:
    return None
