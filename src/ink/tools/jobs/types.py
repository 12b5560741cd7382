"""What a background job is to everyone outside it: its listing (``JobInfo``) and its two events.

Names follow docs/design/CONTRACT.md ("Background jobs"): ``job_start {jobId, command, pid}``,
``job_end {jobId, exitCode, signal}``, RPC ``list_jobs`` entries ``{jobId, command, pid, state,
startedAt}``; the other fields are additions.
"""

from __future__ import annotations

from typing import ClassVar, Literal, TypeAlias

import msgspec

from ink.agent.events import Source
from ink.tools.processes import Survivor

JobState: TypeAlias = Literal["running", "ending", "exited", "killed", "ended"]
"""``running``; ``ending``: asked to stop, its tree not gone yet; ``exited``: its command and everything it
started ended by themselves; ``killed``: stopped by the model (``job_kill``) or the user (``/jobs``, RPC
``kill_job``); ``ended``: ended with its session (exit, ``/clear``, another session loaded, or the ink
process that ran it was killed)."""
ENDED_STATES: tuple[JobState, ...] = ("exited", "killed", "ended")
Stopper: TypeAlias = Literal["model", "user", "session"]


class JobInfo(msgspec.Struct, frozen=True):
    """One job of the session, as listed. ``pid``: the job's process group (its keeper, which ends the
    whole tree on SIGTERM). ``started_at``/``ended_at``: Unix seconds. ``exit_code``: the command's, when
    it exited; ``signal``: the signal that ended it, when one did. ``output``: its output file.
    ``earlier``: started by an earlier ink process of this session (a resumed session)."""

    job_id: str
    command: str
    pid: int | None
    state: JobState
    started_at: float
    ended_at: float | None = None
    exit_code: int | None = None
    signal: str | None = None
    output: str | None = None
    earlier: bool | None = None

    @property
    def running(self) -> bool:
        return self.state in ("running", "ending")


class JobStart(msgspec.Struct, frozen=True):
    """A background job started (a ``bash`` call with ``background: true``, or a running call sent to the
    background). ``tool_call_id``: the call that started it."""

    job_id: str
    command: str
    pid: int
    tool_call_id: str | None = None
    output: str | None = None
    source: Source | None = None  # always None: a job belongs to the session, whoever started it
    type: Literal["job_start"] = "job_start"


class JobEnd(msgspec.Struct, frozen=True):
    """A background job ended, with its whole tree (R35): the command's ``exit_code`` (null when a
    signal ended it), the ``signal`` that did (null when it exited), how (``state``), after how long, and
    the processes that could not be ended."""

    job_id: str
    exit_code: int | None
    signal: str | None
    state: JobState = "exited"
    command: str = ""
    duration_ms: int = 0
    survivors: tuple[Survivor, ...] = ()
    source: Source | None = None
    type: Literal["job_end"] = "job_end"
    json_always: ClassVar[tuple[str, ...]] = ("exit_code", "signal")


def how_it_ended(job: JobInfo) -> str:
    """``exit code 0``, ``killed by SIGTERM``, ``ended with the session``: for notes and listings."""
    if job.state == "ended":
        return "ended with its session"
    if job.exit_code is not None:
        what = f"exit code {job.exit_code}"
    elif job.signal is not None:
        what = f"ended by {job.signal}"
    else:
        what = "ended"
    return f"killed ({what})" if job.state == "killed" else what
