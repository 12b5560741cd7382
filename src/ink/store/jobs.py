"""The background jobs a session file records (R43), so a resumed session knows what ran and how it ended.

    {"type":"job_start","timestamp":..,"jobId":"job-1","command":..,"pid":..,"startedAt":..,"output":..}
    {"type":"job_end","timestamp":..,"jobId":"job-1","state":"exited","exitCode":0,"signal":null,..}

A job's start is written when it starts, its end when the process that ran it saw it end. A job whose
end was never written was running when that ink process ended (killed, or a crash): it ended with it,
since nothing ink starts outlives it. ``reported: true`` on an end says a resumed session has told the
user and the model so already; it is not told again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

JOB_STATES = ("exited", "killed", "ended")


class JobRecord(msgspec.Struct, frozen=True):
    """One job as the file has it. ``state`` is ``running`` when no end was written."""

    job_id: str
    command: str
    pid: int | None
    started_at: float
    output: str | None = None
    state: str = "running"
    ended_at: float | None = None
    exit_code: int | None = None
    signal: str | None = None
    reported: bool = False

    @property
    def ended_with_its_process(self) -> bool:
        """It was running when its ink process ended (or its session was left), and nobody was told."""
        return self.state in ("running", "ended") and not self.reported


def start_record(entry: Mapping[str, Any]) -> JobRecord:
    """Raises ``ValueError`` for a malformed ``job_start`` entry."""
    job_id, command = entry.get("jobId"), entry.get("command")
    if not isinstance(job_id, str) or not job_id or not isinstance(command, str):
        raise ValueError("a job_start entry needs jobId and command")
    return JobRecord(
        job_id,
        command,
        _int(entry.get("pid")),
        _number(entry.get("startedAt"), entry.get("timestamp")),
        _str(entry.get("output")),
    )


def end_record(started: JobRecord, entry: Mapping[str, Any]) -> JobRecord:
    state = entry.get("state")
    return msgspec.structs.replace(
        started,
        state=state if state in JOB_STATES else "ended",
        ended_at=_number(entry.get("endedAt"), None) or None,
        exit_code=_int(entry.get("exitCode")),
        signal=_str(entry.get("signal")),
        reported=entry.get("reported") is True or started.reported,
    )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object, fallback: object) -> float:
    for candidate in (value, fallback):
        if isinstance(candidate, int | float) and not isinstance(candidate, bool):
            return float(candidate)
    return 0.0
