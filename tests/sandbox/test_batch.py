"""``ink batch`` in the sandbox (R41, CONTRACT: ``--sandbox``, default ``workspace-write``): each run gets
the batch's mode, each task's set-up and check commands run in it with its workspace copy as the
workspace, a call asking to leave it is refused unless a ``bash-unsandboxed`` rule allows it, and a mode
asked for that cannot start is exit 2. Real batches of real ink runs against the fake model server."""

from __future__ import annotations

import errno
import shlex
import subprocess
from pathlib import Path
from typing import Any

from tests.batch.conftest import batch_argv, batch_env, make_repo, results, write_tasks
from tests.fakeserver import FakeModelServer, Reply, text, tool_call
from tests.sandbox.conftest import outside
from tests.sandbox.test_fallback import ink_under_refusal

__all__ = ["outside"]


def leaving_model(request: Any) -> Reply:
    """``run: CMD`` runs CMD; ``leave: CMD`` asks to run it outside the sandbox."""
    if request.tool_results():
        return Reply([text("done")])
    prompt = request.user_texts()[0]
    how, command = prompt.split(": ", 1)
    args = {"command": command} | ({"sandbox": False, "reason": "the task says so"} if how == "leave" else {})
    return Reply([tool_call("bash", args, id=f"c{request.index}")])


def run_batch(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL
    )


def test_R41_a_batch_runs_set_up_run_and_check_in_the_sandbox(
    tmp_path: Path, fake_server: FakeModelServer, outside: Path
) -> None:
    fake_server.responder = leaving_model
    make_repo(tmp_path / "repo", git=True)
    where = shlex.quote(str(outside))
    tasks = [
        {"id": "setup", "prompt": "run: true", "repo": "repo", "setup": f"echo x > {where}/setup"},
        {"id": "inside", "prompt": "run: echo fine > made.txt", "repo": "repo", "setup": "echo y > built"},
        {"id": "run", "prompt": f"run: echo x > {where}/run", "repo": "repo"},
        {"id": "check", "prompt": "run: true", "repo": "repo", "check": f"echo x > {where}/check"},
        {"id": "leave", "prompt": f"leave: echo x > {where}/leave", "repo": "repo"},
    ]
    out = tmp_path / "out"
    done = run_batch(
        batch_argv(write_tasks(tmp_path / "tasks.jsonl", tasks), out),
        batch_env(tmp_path, fake_server),
        tmp_path,
    )
    lines = results(out)
    assert sorted(p.name for p in outside.iterdir()) == [], done.stderr  # nothing got out
    assert lines["setup"]["stage"] == "workspace" and "[sandbox: denied." in lines["setup"]["error"]
    assert lines["inside"]["error"] is None and "+fine" in lines["inside"]["diff"]
    assert lines["run"]["error"] is None and lines["check"]["verdict"] == "fail"
    transcript = {
        line["id"]: (out / line["session"]).read_text() for line in lines.values() if line.get("session")
    }
    assert "[sandbox: denied." in transcript["run"]
    assert "outside the sandbox" in transcript["leave"] and "nobody can answer" in transcript["leave"]


def test_R41_a_batch_with_the_sandbox_off_or_a_rule_to_leave_it(
    tmp_path: Path, fake_server: FakeModelServer, outside: Path
) -> None:
    fake_server.responder = leaving_model
    make_repo(tmp_path / "repo", git=True)
    where = shlex.quote(str(outside))
    env = batch_env(tmp_path, fake_server)
    off = [
        {
            "id": "off",
            "prompt": f"run: echo x > {where}/run",
            "repo": "repo",
            "setup": f"echo x > {where}/setup",
        }
    ]
    done = run_batch(
        batch_argv(write_tasks(tmp_path / "off.jsonl", off), tmp_path / "o1", "--sandbox", "off"),
        env,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["run", "setup"]
    command = f"echo x > {where}/leave"
    leave = [{"id": "leave", "prompt": f"leave: {command}", "repo": "repo"}]
    rule = f"bash-unsandboxed({command})"
    done = run_batch(
        batch_argv(write_tasks(tmp_path / "leave.jsonl", leave), tmp_path / "o2", "--allow", rule),
        env,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (outside / "leave").read_text() == "x\n"


def test_R39_a_batch_asking_for_a_sandbox_that_cannot_start_is_exit_2(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "run: true", "repo": "."}])
    args = ["batch", str(tasks), "--out", str(tmp_path / "out"), "--sandbox", "read-only"]
    done = ink_under_refusal(errno.ENOSYS, args, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--sandbox read-only cannot start" in done.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()
