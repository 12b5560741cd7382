"""What the model is told about its jobs between requests (R43), and the words for durations and commands
that every listing of a job shares."""

from __future__ import annotations

from collections.abc import Sequence

from ink.tools.jobs.types import JobInfo, Stopper, how_it_ended

COMMAND_CHARS = 80  # of a command quoted in a note to the model


def ended_note(job: JobInfo, stopper: Stopper | None, seconds: float) -> str:
    """A job ended by itself or was stopped by the user (the model's own ``job_kill`` answers itself)."""
    command, after = short(job.command), duration(seconds)
    if stopper == "user":
        return f"[Background job {job.job_id} ({command}) was stopped by the user after {after}.]"
    return (
        f"[Background job {job.job_id} ({command}) ended by itself after {after}: {how_it_ended(job)}. "
        "job_output shows what it printed.]"
    )


def ended_earlier_note(jobs: Sequence[JobInfo]) -> str:
    listed = ", ".join(f"{job.job_id} ({short(job.command)})" for job in jobs)
    return (
        f"[Background jobs of this session that were running when the previous ink process ended were "
        f"ended with it and are not running now: {listed}. job_output still shows what they printed.]"
    )


def detached_note(job_id: str, pid: int, seconds: float) -> str:
    """The result of a bash call the user sent to the background while it ran."""
    return (
        f"The user sent this command to the background after {duration(seconds)}: it keeps running as "
        f"background job {job_id} (pid {pid}), and you will be told when it ends. Read its output with "
        f'job_output {{"jobId": "{job_id}"}}, stop it with job_kill. Its output so far:'
    )


def short(command: str, limit: int = COMMAND_CHARS) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
