"""The app's background jobs (R43) and the session they belong to: where their output files go, where
their starts and ends are recorded, and what a resumed session says about the jobs of the last process.

A job belongs to the session that started it: leaving the session (``/clear``, another session loaded,
exit) ends it. The session file records each start and end (``ink.store.jobs``); a job whose end it
lacks was running when its ink process ended and ended with it (nothing ink starts outlives it). A
resumed session lists those, tells the user (``resume_note``) and the model (a note at its next
request), and records that it did, so the next resume does not tell it again.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ink.ai.jsonform import to_json
from ink.tools.jobs import JobInfo, JobRegistry

if TYPE_CHECKING:
    from ink.store import SessionHandle
    from ink.store.jobs import JobRecord


class SessionJournal:
    """A ``JobJournal`` writing to a session file."""

    def __init__(self, handle: SessionHandle) -> None:
        self.handle = handle

    def job_started(self, job: JobInfo) -> None:
        self.handle.record_job("job_start", _fields(job))

    def job_ended(self, job: JobInfo) -> None:
        self.handle.record_job("job_end", _fields(job))


def scratch_folder(ink_home: Path) -> Path:
    """Where the jobs of an app without a session file (``--no-session``) keep their output: a folder of
    its own under $INK_HOME, removed when the app closes (``remove_scratch``)."""
    return ink_home / "jobs" / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


def remove_scratch(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def enter_session(jobs: JobRegistry, handle: SessionHandle | None, scratch: Path) -> None:
    """Give ``jobs`` the session ``handle`` (None: no session file; outputs go to ``scratch``)."""
    if handle is None:
        jobs.enter_session(lambda: scratch, None)
        return
    records = handle.loaded.jobs if handle.loaded is not None else ()
    folder = handle.path.with_suffix(".jobs")
    earlier = [_earlier(record, folder) for record in records]
    told = [info for record, info in zip(records, earlier, strict=True) if record.ended_with_its_process]
    for info in told:
        handle.record_job("job_end", {**_fields(info), "reported": True})
    jobs.enter_session(lambda: folder, SessionJournal(handle), earlier, told)


def resume_note(jobs: JobRegistry, read_with: str) -> str | None:
    """The line telling the user which jobs ended with the last ink process of a resumed session;
    ``read_with``: how this frontend's user reads a job's output (``/jobs``, RPC ``list_jobs``)."""
    ended = jobs.ended_with_last_process
    if not ended:
        return None
    listed = ", ".join(f"{job.job_id} ({_short(job.command)})" for job in ended)
    return (
        f"background jobs of this session ended with its last ink process: {listed}; "
        f"their output is still readable ({read_with})"
    )


def _earlier(record: JobRecord, folder: Path) -> JobInfo:
    state = "ended" if record.state == "running" else record.state
    return JobInfo(
        record.job_id,
        record.command,
        record.pid,
        state,  # type: ignore[arg-type]  # one of JOB_STATES, checked by the loader
        record.started_at,
        record.ended_at,
        record.exit_code,
        record.signal,
        _own_output(record.output, folder),
        earlier=True,
    )


def _own_output(output: str | None, folder: Path) -> str | None:
    """An earlier job's output file, if the record names one in the session's own job folder: a file
    that names ``~/.ssh/id_rsa`` (edited by hand, or a session file from elsewhere given to ``--resume``)
    must not make job_output read it for the model, past the deny rules and the sandbox."""
    if not output:
        return None
    path = Path(output)
    try:
        inside = path.is_absolute() and path.name not in ("", "..")
        inside = inside and path.parent.resolve() == folder.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return output if inside else None


def _fields(job: JobInfo) -> Mapping[str, Any]:
    data: dict[str, Any] = to_json(msgspec.structs.replace(job, earlier=None))
    return data


def _short(command: str, limit: int = 60) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
