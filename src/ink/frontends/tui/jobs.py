"""Background jobs in the terminal UI (R43): a line when one starts and when one ends, ``/jobs`` to list
them, read one's last lines or kill one, and the count in the status line. The registry is the app's
(``app.jobs``); nothing here keeps a state of its own."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ink.frontends.tui.blocks import Block, Tone, sanitize
from ink.run import events as ev
from ink.tools.jobs import JobInfo, JobRegistry, UnknownJob, how_it_ended
from ink.tools.jobs.reading import describe_job, last_lines
from ink.tools.limits import plural

SHOWN_LINES = 40  # of a job's output, for /jobs ID
USAGE = "usage: /jobs (list) · /jobs ID (its last lines) · /jobs kill ID"


Print = Callable[..., None]  # prints blocks into the scrollback (``EventView.print``)


def started_block(event: ev.JobStart) -> Block:
    command = sanitize(event.command)
    return Block("info", f"{event.job_id} started in the background: {command} (pid {event.pid})")


def ended_block(event: ev.JobEnd) -> Block:
    how = how_it_ended(_as_info(event))
    text = f"{event.job_id} ended: {how} · {event.command} · {_seconds(event.duration_ms / 1000)}"
    survivors = "".join(f"\n  process {s.pid} ({s.command}) could not be stopped" for s in event.survivors)
    tone: Tone = "ok" if event.state == "exited" and event.exit_code == 0 else "interrupted"
    return Block("warning" if survivors else "info", sanitize(text + survivors), tone)


def kept_block(running: Sequence[JobInfo]) -> Block:
    """After an interrupt: the background jobs it left running (R43), and how to stop them."""
    listed = ", ".join(f"{job.job_id} ({sanitize(job.command)})" for job in running)
    return Block("info", f"still running in the background: {listed} · /jobs kill ID stops one", "dim")


def status_count(jobs: JobRegistry) -> str:
    """``2 jobs`` while jobs run, for the status line; "" when none does."""
    running = len(jobs.running())
    return plural(running, "job") if running else ""


def jobs_command(jobs: JobRegistry, say: Print, args: str) -> None:
    """``/jobs``: every job of the session; ``/jobs ID``: its last lines; ``/jobs kill ID``."""
    words = args.split()
    if not words:
        say(Block("output", listing(jobs.listing())))
        return
    kill = words[0] == "kill"
    if (kill and len(words) != 2) or (not kill and len(words) != 1):
        say(Block("error", USAGE))
        return
    job_id = words[-1]
    try:
        info = jobs.stop(job_id, "user") if kill else jobs.info(job_id)
    except UnknownJob as exc:
        say(Block("error", sanitize(str(exc))))
        return
    if kill:
        note = "stopping: its end follows" if info.running else "it had ended already"
        say(Block("info", f"{job_id}: {note}"))
        return
    last = last_lines(jobs, info, SHOWN_LINES)
    say(Block("info", sanitize(describe_job(info))), Block("output", sanitize(last or "(no output yet)")))


def listing(jobs: list[JobInfo]) -> str:
    if not jobs:
        return "no background jobs in this session (the model starts one with bash background: true)"
    now = time.time()
    lines = []
    for job in jobs:
        if job.running:
            state = f"running {_seconds(now - job.started_at)}"
        else:
            state = how_it_ended(job) + (" (an earlier ink process)" if job.earlier else "")
        lines.append(f"  {job.job_id:<8} {state:<28} {sanitize(job.command)}")
    return "\n".join([*lines, "", USAGE])


def _as_info(event: ev.JobEnd) -> JobInfo:
    return JobInfo(event.job_id, event.command, None, event.state, 0.0, None, event.exit_code, event.signal)


def _seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes = int(seconds // 60)
    return f"{minutes}m{int(seconds % 60):02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"
