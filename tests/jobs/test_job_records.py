"""A session file's job records as a hand, a bug or a shared file may leave them (issue 29): a job whose
``output`` names a file outside the session's own job folder (``~/.ssh/id_rsa``), a FIFO, or is
garbage. A resumed session lists the job, and job_output of it never reads such a file: what a deny rule
or the sandbox keeps from the model cannot come back as an earlier job's output."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient

YOLO = ("--permission-mode", "yolo")
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- the secret"


def test_an_earlier_jobs_output_is_read_only_from_the_sessions_job_folder(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    env = ink_env(tmp_path)
    args = provider_args(fake_server, "openai", *YOLO)
    fake_server.script(say("hello"))
    with RpcClient.start(args, env, project) as first:
        first.ok("prompt", text="hi")
        first.wait_event("run_end")
    session = next((tmp_path / "inkhome" / "sessions").rglob("*.jsonl"))
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text(SECRET + "\n")
    fifo = session.with_suffix(".jobs") / "job-3.out"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    kept = session.with_suffix(".jobs") / "job-4.out"
    kept.write_text("its own output\n")
    records = [
        {"jobId": "job-1", "command": "cat", "pid": 1, "startedAt": 1.0, "output": str(secret)},
        {"jobId": "job-2", "command": "x", "pid": "garbage", "startedAt": "no", "output": ["not", "a path"]},
        {"jobId": "job-3", "command": "y", "pid": 2, "startedAt": 1.0, "output": str(fifo)},
        {"jobId": "job-4", "command": "z", "pid": 3, "startedAt": 1.0, "output": str(kept)},
        {"jobId": "job-5", "command": "w", "pid": 4, "startedAt": 1.0, "output": "../../home/.ssh/id_rsa"},
    ]
    with open(session, "a") as file:
        for record in records:
            file.write(json.dumps({"type": "job_start", "timestamp": 2.0, **record}) + "\n")
    reads = [call("job_output", {"jobId": f"job-{n}"}, id=f"r{n}") for n in range(1, 6)]
    fake_server.script(*reads, say("read them"))
    with RpcClient.start([*args, "--continue"], env, project) as again:
        listed = {job["jobId"] for job in again.ok("list_jobs")["jobs"]}
        assert listed == {"job-1", "job-2", "job-3", "job-4", "job-5"}
        again.ok("prompt", text="what did they print?")
        again.wait_event("run_end", timeout=60)
    results = dict(fake_server.last.tool_results())
    assert not any(SECRET in output for output in results.values()), results
    assert "its own output" in results["r4"]
