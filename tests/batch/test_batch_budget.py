"""``ink batch`` with budgets (R45): a task's ``maxTokens`` (or the batch's ``--max-tokens``) reaches its
``ink -p`` run, which stops at the limit with stop reason ``budget``; a cost limit with an unpriced
model is refused once, before any task."""

from __future__ import annotations

from pathlib import Path

from tests.batch.conftest import batch_argv, batch_env, make_repo, results, write_tasks
from tests.batch.test_batch_local import run_batch
from tests.cli.inkproc import one_line_error
from tests.fakeserver import FakeModelServer


def test_R45_each_task_runs_under_its_own_limits(tmp_path: Path, model: FakeModelServer) -> None:
    make_repo(tmp_path / "repo", git=False)
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "tight", "prompt": "run: echo hi", "repo": "repo", "maxTokens": 10},
            {"id": "free", "prompt": "run: echo hi", "repo": "repo"},
            {"id": "lifted", "prompt": "run: echo hi", "repo": "repo", "maxCostUsd": 0},
        ],
    )
    argv = batch_argv(tasks, tmp_path / "out", "--model", "gpt-4.1", "--max-cost", "0.00001")
    done = run_batch(argv, batch_env(tmp_path, model), tmp_path)
    assert done.returncode == 0, done.stderr
    found = results(tmp_path / "out")
    assert found["tight"]["stopReason"] == "budget" and found["tight"]["error"] is None
    assert found["free"]["stopReason"] == "budget"  # the batch's --max-cost: $0.00006 a reply
    assert found["lifted"]["stopReason"] == "completed"  # the task's 0 lifts the batch's limit
    assert not found["tight"].get("crashed")


def test_R45_a_cost_limit_with_an_unpriced_model_fails_once_before_any_task(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "repo": "."}])
    argv = batch_argv(tasks, tmp_path / "out", "--model", "my-own-model", "--max-cost", "1")
    done = run_batch(argv, batch_env(tmp_path, fake_server), tmp_path)
    assert done.returncode == 2 and "known prices" in one_line_error(
        done.stderr.replace("ink batch: ", "ink: ")
    )
    assert not fake_server.requests
