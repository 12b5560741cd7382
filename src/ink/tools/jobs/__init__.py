"""Background jobs (R43): a ``bash`` call with ``background: true`` starts one and returns at once; the
job's whole tree runs on under its keeper, its output kept in a bounded file, until it ends by itself,
the model or the user kills it, or the session ends. docs/run-control.md says what the user sees.

    registry.py  the jobs of the open session: start, watch, kill, list, notes for the model
    keeper.py    the script each job runs under (subreaper of its tree, ends it on SIGTERM or ink's death)
    output.py    a job's output: head and tail kept, in memory and in a private file
    types.py     JobInfo (a listing entry), JobStart and JobEnd (the events)
    tools.py     job_output and job_kill, the model's tools
"""

from __future__ import annotations

from ink.tools.jobs.output import HEAD_BYTES, LIMIT_BYTES, TAIL_BYTES, JobOutput
from ink.tools.jobs.registry import MAX_RUNNING, JobJournal, JobRegistry, TooManyJobs, UnknownJob
from ink.tools.jobs.types import ENDED_STATES, JobEnd, JobInfo, JobStart, JobState, Stopper, how_it_ended

__all__ = [
    "ENDED_STATES",
    "HEAD_BYTES",
    "LIMIT_BYTES",
    "MAX_RUNNING",
    "TAIL_BYTES",
    "JobEnd",
    "JobInfo",
    "JobJournal",
    "JobOutput",
    "JobRegistry",
    "JobStart",
    "JobState",
    "Stopper",
    "TooManyJobs",
    "UnknownJob",
    "how_it_ended",
]
