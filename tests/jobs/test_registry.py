"""The job registry and a job's output in process (R43), with real keepers and real processes: the bounded
output and its offsets, the limit on running jobs, what the session records when it is left, hostile ids,
an output folder that cannot be made, and a keeper killed from outside."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import ToolCallContext
from ink.ai.messages import ToolCall
from ink.tools.jobs import (
    HEAD_BYTES,
    LIMIT_BYTES,
    TAIL_BYTES,
    JobEnd,
    JobInfo,
    JobOutput,
    JobRegistry,
    JobStart,
    TooManyJobs,
    UnknownJob,
)
from ink.tools.jobs.tools import JobOutputTool
from tests.processes import gone
from tests.waiting import wait_until


class Journal:
    def __init__(self) -> None:
        self.entries: list[tuple[str, JobInfo]] = []

    def job_started(self, job: JobInfo) -> None:
        self.entries.append(("start", job))

    def job_ended(self, job: JobInfo) -> None:
        self.entries.append(("end", job))


@pytest.fixture
async def jobs(tmp_path: Path) -> AsyncIterator[JobRegistry]:
    registry = JobRegistry(kill_delay=0.2, max_running=3)
    registry.enter_session(lambda: tmp_path / "s.jobs", None)
    yield registry
    await registry.aclose()


def test_the_output_keeps_its_head_and_tail_and_reads_by_offset(tmp_path: Path) -> None:
    output = JobOutput(tmp_path / "job.log")
    lines = b"".join(b"line %d\n" % i for i in range(300_000))  # ~3.3 MB
    for start in range(0, len(lines), 65536):
        output.feed(lines[start : start + 65536])
    output.close()
    data = (tmp_path / "job.log").read_bytes()
    assert output.total == len(lines) and output.cut == len(lines) - HEAD_BYTES - TAIL_BYTES
    assert data.startswith(lines[:HEAD_BYTES]) and data.endswith(lines[-TAIL_BYTES:])
    assert LIMIT_BYTES < len(data) < LIMIT_BYTES + 200 and b"ink cut" in data
    new, gone_bytes = output.since(HEAD_BYTES - 10)  # from inside the head, across the cut
    assert gone_bytes == output.cut and new.startswith(lines[HEAD_BYTES - 10 : HEAD_BYTES].decode())
    assert "of output cut here" in new and new.endswith("line 299999\n")
    tail_only, none_gone = output.since(len(lines) - 12)
    assert (tail_only, none_gone) == ("line 299999\n", 0)


def test_a_small_output_is_the_file_byte_for_byte(tmp_path: Path) -> None:
    output = JobOutput(tmp_path / "job.log")
    output.feed(b"\xff not utf-8\r\n")
    assert (tmp_path / "job.log").read_bytes() == b"\xff not utf-8\r\n"  # appended as it came
    assert output.text() == "\\xff not utf-8\n"
    output.close()
    assert (tmp_path / "job.log").stat().st_mode & 0o777 == 0o600


async def test_a_job_reports_its_exit_code_or_the_signal_that_ended_it(jobs: JobRegistry) -> None:
    events: list[object] = []
    jobs.emit = events.append
    await jobs.start("echo out; echo err >&2; exit 7", os.getcwd())
    await jobs.start("kill -SEGV $$", os.getcwd())
    await wait_until(lambda: len([e for e in events if isinstance(e, JobEnd)]) == 2, 20, "both ended")
    ends = {e.job_id: e for e in events if isinstance(e, JobEnd)}
    assert (ends["job-1"].exit_code, ends["job-1"].signal, ends["job-1"].state) == (7, None, "exited")
    assert (ends["job-2"].exit_code, ends["job-2"].signal) == (None, "SIGSEGV")
    assert jobs.read_new("job-1") == ("out\nerr\n", 0)
    assert jobs.read_new("job-1") == ("", 0)
    assert [type(e) for e in events].count(JobStart) == 2
    notes = jobs.take_notes()
    assert "job-1 (echo out; echo err >&2; exit 7) ended by itself" in notes and "exit code 7" in notes
    assert "ended by SIGSEGV" in notes and jobs.take_notes() == ""


async def test_no_more_jobs_start_than_the_limit(jobs: JobRegistry) -> None:
    for _ in range(3):
        await jobs.start("exec sleep 1000", os.getcwd())
    with pytest.raises(TooManyJobs, match="3 background jobs run already: stop one with job_kill"):
        await jobs.start("exec sleep 1000", os.getcwd())
    await jobs.kill("job-2", "model")
    assert (await jobs.start("exec sleep 1000", os.getcwd())).job_id == "job-4"


async def test_leaving_the_session_records_its_jobs_as_ended_with_it(tmp_path: Path) -> None:
    jobs, journal, later = JobRegistry(kill_delay=0.2), Journal(), Journal()
    jobs.enter_session(lambda: tmp_path / "a.jobs", journal)
    info = await jobs.start("exec sleep 1000", os.getcwd())
    jobs.leave_session()
    jobs.enter_session(lambda: tmp_path / "b.jobs", later)
    assert [(kind, job.state) for kind, job in journal.entries] == [("start", "running"), ("end", "ended")]
    assert jobs.listing() == [] and jobs.running() == []
    await jobs.aclose()  # waits for the left session's job
    assert info.pid is not None and gone(info.pid)
    assert later.entries == [] and len(journal.entries) == 2  # its real end is not the new session's


async def test_hostile_ids_are_answered_briefly(jobs: JobRegistry) -> None:
    with pytest.raises(UnknownJob) as raised:
        jobs.info("x" * 1_000_000)
    assert len(str(raised.value)) < 300


async def test_an_output_folder_that_cannot_be_made_keeps_the_output_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    jobs = JobRegistry(kill_delay=0.2)
    jobs.enter_session(lambda: blocker / "s.jobs", None)
    events: list[object] = []
    jobs.emit = events.append
    info = await jobs.start("echo kept", os.getcwd())
    assert info.output is None
    await wait_until(lambda: any(isinstance(e, JobEnd) for e in events), 20, "the end")
    assert jobs.read_new("job-1") == ("kept\n", 0)
    await jobs.aclose()


async def test_a_keeper_killed_from_outside_still_has_its_tree_ended(
    jobs: JobRegistry, tmp_path: Path
) -> None:
    marker = tmp_path / "child.pid"
    info = await jobs.start(f"sleep 1000 & echo $! > {marker}; wait", os.getcwd())
    await wait_until(lambda: marker.exists() and marker.read_text().strip(), 20, "the child")
    child = int(marker.read_text())
    assert info.pid is not None
    os.kill(info.pid, signal.SIGKILL)  # the keeper dies: ink ends its tree (found by its token)
    await wait_until(lambda: jobs.info("job-1").state == "exited", 20, "the job's end")
    await wait_until(lambda: gone(child), 10, "its child ended by ink")
    assert jobs.info("job-1").signal == "SIGKILL"


async def test_job_output_says_how_much_the_jobs_output_no_longer_holds(jobs: JobRegistry) -> None:
    # R43: a 3 MB output keeps its head and tail; job_output's own 50 KB cut must not hide that the
    # middle is gone (it used to say only what it cut itself, ~1 MB of the 3 MB)
    events: list[object] = []
    jobs.emit = events.append
    await jobs.start("for i in $(seq 1 300000); do echo line $i; done", os.getcwd())
    await wait_until(lambda: any(isinstance(e, JobEnd) for e in events), 60, "the end")
    tool = JobOutputTool(jobs)
    ctx = ToolCallContext(ToolCall("c1", "job_output", {}), AbortSignal())
    out = await tool.execute({"jobId": "job-1"}, ctx)
    cut = jobs.output("job-1")
    assert cut is not None and cut.cut > 1_000_000
    first = out.output.split("\n")[1]
    assert first.startswith(f"New output ({cut.cut} bytes of it not kept:"), first
