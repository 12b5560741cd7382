"""``ink batch --ray``: the same batch on a local Ray instance this test starts (``ray start --head``).

Marked ``ray``: skipped where Ray is not installed; scripts/test installs it, so CI runs these.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.batch.conftest import CHECK, FIX, batch_argv, batch_env, make_repo, results, write_tasks
from tests.fakeserver import FakeModelServer
from tests.waiting import wait_for_file

pytest.importorskip("ray")
pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]

RAY = str(Path(sys.executable).parent / "ray")


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A Ray head of this module's own (``ray start --block``), ended with its whole tree: never ``ray stop``,
    which would end every Ray instance on the machine."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's unix sockets live under it
    start = [
        RAY,
        "start",
        "--head",
        "--block",
        f"--port={port}",
        "--num-cpus=4",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    head = subprocess.Popen(
        start, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        assert head.stdout is not None
        for line in head.stdout:  # the head says when it is up
            if "Ray runtime started" in line:
                break
        else:
            pytest.fail("ray start --head ended before the runtime started")
        yield f"127.0.0.1:{port}"
    finally:
        tree = psutil.Process(head.pid).children(recursive=True) if head.poll() is None else []
        tree += [p for p in psutil.process_iter(["cmdline"]) if temp in " ".join(p.info["cmdline"] or [])]
        head.terminate()
        head.wait(timeout=60)
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        shutil.rmtree(temp, ignore_errors=True)


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
        env=batch_env(tmp_path, model),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
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
        env=batch_env(tmp_path, model),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    sleepers = [int(wait_for_file(pids / f"s{n}", timeout=120)) for n in range(2)]
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    lines = results(out)
    for n in range(2):
        line = lines[f"s{n}"]
        assert line["cancelled"] and line["stopReason"] == "aborted" and line["receipt"]["interrupted"], (
            json.dumps(line)[:3000]
        )
    for pid in sleepers:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if "ink -p" in " ".join(p.info["cmdline"] or []) and "--output-format" in (p.info["cmdline"] or [])
    ]
