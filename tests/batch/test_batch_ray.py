"""``ink batch --ray``: the same batch on a local Ray instance this test starts (``ray start --head``).

Marked ``ray``: skipped where Ray is not installed; scripts/test installs it, so CI runs these.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.batch.conftest import CHECK, FIX, batch_argv, batch_env, make_repo, results, write_tasks
from tests.batch.rayhead import NO_AUTH, STALE_TOKEN, ray_head
from tests.fakeserver import FakeModelServer
from tests.processes import gone
from tests.waiting import wait_for_file

pytest.importorskip("ray")
# A Ray instance on a loaded 2-core machine starts its workers slowly: bounds for events, never waited out
pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray"), pytest.mark.timeout(900)]

RAY = str(Path(sys.executable).parent / "ray")


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    with ray_head() as address:
        yield address


def ray_env(tmp_path: Path, model: FakeModelServer) -> dict[str, str]:
    """ink batch's environment: a home holding a token another cluster left (it must not matter)."""
    env = batch_env(tmp_path, model) | NO_AUTH
    (Path(env["HOME"]) / ".ray").mkdir(parents=True)
    (Path(env["HOME"]) / ".ray" / "auth_token").write_text(STALE_TOKEN)
    return env


def test_twenty_tasks_on_ray_give_the_same_results(
    tmp_path: Path, model: FakeModelServer, ray_address: str
) -> None:
    make_repo(tmp_path / "repos" / "plain", git=False)
    make_repo(tmp_path / "repos" / "gitrepo", git=True)
    tasks = [
        {
            "id": f"t{n:02d}",
            "prompt": FIX if n % 5 else "run: echo looked",
            "repo": "repos/gitrepo" if n % 2 else "repos/plain",
            "check": CHECK,
        }
        for n in range(20)
    ]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    out = tmp_path / "out"
    done = subprocess.run(
        batch_argv(tasks_file, out, "--ray", ray_address),
        env=ray_env(tmp_path, model),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    lines = results(out)
    assert sorted(lines) == [task["id"] for task in tasks]
    for n in range(20):
        line = lines[f"t{n:02d}"]
        assert line["stopReason"] == "completed" and line["worker"]
        assert line["verdict"] == ("pass" if n % 5 else "fail"), line
        assert ("+    return a + b" in line["diff"]) == bool(n % 5)
        assert (out / line["session"]).exists()
    assert "20 tasks: 4 fail, 16 pass" in done.stdout


def test_ctrl_c_on_ray_interrupts_every_task_and_leaves_nothing_running(
    tmp_path: Path, model: FakeModelServer, ray_address: str
) -> None:
    make_repo(tmp_path / "repo", git=False)
    pids = tmp_path / "pids"
    pids.mkdir()
    tasks = [{"id": "quick", "prompt": FIX, "repo": str(tmp_path / "repo"), "check": CHECK}]
    tasks += [
        {
            "id": f"s{n}",
            "prompt": f"run: echo $$ > {pids}/s{n}; exec sleep 300",
            "repo": str(tmp_path / "repo"),
        }
        for n in range(2)
    ]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        batch_argv(tasks_file, out, "--ray", ray_address),
        env=ray_env(tmp_path, model),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    sleepers = [int(wait_for_file(pids / f"s{n}", timeout=300)) for n in range(2)]
    runs = [psutil.Process(pid).ppid() for pid in sleepers]  # bash exec'd sleep: its parent is the ink -p
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr
    lines = results(out)
    for n in range(2):
        line = lines[f"s{n}"]
        assert line["cancelled"] and line["stopReason"] == "aborted" and line["receipt"]["interrupted"], (
            json.dumps(line)[:3000]
        )
    # only this batch's own processes: other tests (and other users) may run ink -p on this machine
    for pid in [*sleepers, *runs]:
        assert gone(pid), f"{pid} outlived the batch"
