"""Background jobs (R43) as the editor sees them: each job is a tool call of its own, ``in_progress``
from its start until it ends (``completed`` when it exited with 0, else ``failed``), its title naming the
job and its command, its last lines of output shown when it ends. The ``bash`` call that started the job
ends as usual, with the job's id in its result."""

from __future__ import annotations

from ink.frontends.acp.updates import Update, fence, status_update, text_content, title_of
from ink.run import events as ev
from ink.tools.jobs import JobRegistry, UnknownJob
from ink.tools.jobs.reading import describe_job, last_lines

LAST_LINES = 20


def call_id(job_id: str) -> str:
    """The job's tool call id: its own, never one of the model's calls."""
    return f"ink-{job_id}"


def job_call(event: ev.JobStart) -> Update:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id(event.job_id),
        "title": title_of(f"{event.job_id} (background): {event.command}"),
        "kind": "execute",
        "status": "in_progress",
        "rawInput": {"command": event.command, "background": True, "jobId": event.job_id},
    }


def job_result(event: ev.JobEnd, jobs: JobRegistry) -> Update:
    failed = event.state == "killed" or event.exit_code != 0
    try:
        info = jobs.info(event.job_id)
    except UnknownJob:  # the session it belonged to was left meanwhile
        summary, last = f"{event.job_id}: {event.state}", ""
    else:
        summary, last = describe_job(info), last_lines(jobs, info, LAST_LINES)
    content = [text_content(summary)] + ([text_content(fence(last))] if last else [])
    return status_update(call_id(event.job_id), "failed" if failed else "completed", content=content)
