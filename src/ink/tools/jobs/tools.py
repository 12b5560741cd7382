"""The model's tools for its background jobs: ``job_output`` reads one, ``job_kill`` ends one (R43).

A job is started by ``bash`` with ``background: true``; its result names the job id these tools take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.tools.base import BaseTool, arg_str, error, get_int, get_str, object_schema
from ink.tools.jobs.output import HEAD_BYTES, TAIL_BYTES
from ink.tools.jobs.reading import describe_job, last_lines
from ink.tools.jobs.registry import JobRegistry, UnknownJob
from ink.tools.jobs.types import JobInfo
from ink.tools.limits import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, bounded, plural
from ink.tools.output import HeadTailBuffer

JOB_ID = {"type": "string", "description": "The job's id, as bash's result gave it (job-1, ...)."}
KEPT = f"the first {HEAD_BYTES // 1024} KiB and the last {TAIL_BYTES // 1024} KiB of a job's output are kept"

OUTPUT_DESCRIPTION = f"""Read the output of a background job (started by bash with background: true).
- Without `tail`: what the job printed since the last job_output call for it (everything the first time).
- With `tail`: its last `tail` lines, whatever was shown before.
- Says whether the job still runs, or how it ended. At most {MAX_OUTPUT_BYTES // 1000} KB per call; \
{KEPT}."""

KILL_DESCRIPTION = """Stop a background job: its command and everything it started get SIGTERM, then \
SIGKILL if they are still there after a short delay. Returns how it ended and its last lines of output."""

LAST_LINES = 20  # shown by job_kill


class JobOutputTool(BaseTool):
    name = "job_output"
    description = OUTPUT_DESCRIPTION
    parameters = object_schema(
        {
            "jobId": JOB_ID,
            "tail": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_OUTPUT_LINES,
                "description": "Only the last N lines of the output.",
            },
        },
        ["jobId"],
    )
    safe = True
    kind = "read"

    def __init__(self, jobs: JobRegistry) -> None:
        self._jobs = jobs

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return CallDescription(f"job_output {bounded(arg_str(args, 'jobId') or '?', 40)}")

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        job_id, tail = get_str(args, "jobId"), get_int(args, "tail", None, minimum=1)
        try:
            info = self._jobs.info(job_id)
        except UnknownJob as exc:
            return error(bounded(str(exc)))
        head = describe_job(info)
        if tail is not None:
            return ToolOutput(f"{head}\nIts last {plural(tail, 'line')}:\n{self._tail(info, tail)}")
        if self._jobs.output(job_id) is None:  # an earlier ink process's job: its file is what is left
            return ToolOutput(f"{head}\nIts output:\n{self._tail(info, MAX_OUTPUT_LINES)}")
        text, gone = self._jobs.read_new(job_id)
        if not text:
            return ToolOutput(f"{head}\nNo new output since the last job_output.")
        buffer = HeadTailBuffer(MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES)
        buffer.feed(text.encode("utf-8", "surrogateescape"))
        # the buffer's own cut would hide the notice of what the job's output no longer holds: say it here
        lost = f" ({plural(gone, 'byte')} of it not kept: {KEPT})" if gone else ""
        return ToolOutput(f"{head}\nNew output{lost}:\n{buffer.render()}")

    def _tail(self, info: JobInfo, lines: int) -> str:
        return last_lines(self._jobs, info, lines) or "(no output)"


class JobKillTool(BaseTool):
    name = "job_kill"
    description = KILL_DESCRIPTION
    parameters = object_schema({"jobId": JOB_ID}, ["jobId"])
    safe = False
    kind = "edit"  # it changes what runs: asked like a file change in ``ask`` mode

    def __init__(self, jobs: JobRegistry) -> None:
        self._jobs = jobs

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        job_id = arg_str(args, "jobId") or "?"
        try:
            command = self._jobs.info(job_id).command
        except UnknownJob:
            return CallDescription(f"job_kill {bounded(job_id, 40)}")
        return CallDescription(f"job_kill {bounded(job_id, 40)}: {bounded(command, 80)}", command=command)

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        job_id = get_str(args, "jobId")
        try:
            before = self._jobs.info(job_id)
            if not before.running:
                return ToolOutput(f"{describe_job(before)}\nNothing to stop.")
            info = await self._jobs.kill(job_id, "model")
        except UnknownJob as exc:
            return error(bounded(str(exc)))
        except TimeoutError:
            return error(f"{job_id} did not end: its processes could not be stopped.")
        last = last_lines(self._jobs, info, LAST_LINES)
        return ToolOutput(f"{describe_job(info)}\nIts last lines:\n{last or '(no output)'}")
