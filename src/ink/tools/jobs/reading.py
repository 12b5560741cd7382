"""A job as text, for the model and the user alike: one line saying what it is and how it is doing, and
its last lines of output (from memory for a job of this process, from its file for an earlier one)."""

from __future__ import annotations

import time
from pathlib import Path

from ink.tools.jobs.notes import duration
from ink.tools.jobs.output import LIMIT_BYTES, read_tail
from ink.tools.jobs.registry import JobRegistry
from ink.tools.jobs.types import JobInfo, how_it_ended
from ink.tools.limits import MAX_OUTPUT_BYTES, bounded


def describe_job(info: JobInfo) -> str:
    """``job-1 (npm run dev, pid 123): running for 2 min 3 s.``"""
    what = f"{info.job_id} ({bounded(info.command, 200)}, pid {info.pid})"
    if info.running:
        since = duration(time.time() - info.started_at)
        return f"{what}: {'stopping' if info.state == 'ending' else 'running'} for {since}."
    took = f" after {duration(info.ended_at - info.started_at)}" if info.ended_at else ""
    return f"{what}: {how_it_ended(info)}{took}."


def last_lines(jobs: JobRegistry, info: JobInfo, lines: int) -> str:
    """The job's last ``lines`` lines, at most ``MAX_OUTPUT_BYTES`` (the end kept)."""
    output = jobs.output(info.job_id)
    if output is not None:
        text = output.text()
    elif info.output is not None:
        try:
            text, _more = read_tail(Path(info.output), LIMIT_BYTES + 1024)
        except OSError as exc:
            return f"(its output file {info.output} cannot be read: {exc.strerror or exc})"
    else:
        return ""
    data = "".join(text.splitlines(keepends=True)[-lines:]).encode("utf-8", "surrogateescape")
    if len(data) <= MAX_OUTPUT_BYTES:
        return data.decode("utf-8", "surrogateescape")
    data = data[-MAX_OUTPUT_BYTES:]
    start = data.find(b"\n")
    data = data[start + 1 :] if 0 <= start < len(data) // 2 else data  # from a line's start
    return "[... earlier lines cut ...]\n" + data.decode("utf-8", "replace")
