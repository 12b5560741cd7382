"""``ink batch`` on this machine: verdicts, diffs, sessions, resume, time limits, Ctrl+C, bad input."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
from pathlib import Path

import psutil
import pytest

from tests.batch.conftest import CHECK, FIX, batch_argv, batch_env, make_repo, results, write_tasks
from tests.cli.inkproc import one_line_error
from tests.fakeserver import FakeModelServer
from tests.waiting import wait_for_file


def run_batch(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def twenty_tasks(tmp_path: Path) -> tuple[Path, Path, Path]:
    plain = make_repo(tmp_path / "repos" / "plain", git=False)
    gitrepo = make_repo(tmp_path / "repos" / "gitrepo", git=True)
    tasks = []
    for n in range(20):
        repo = "repos/gitrepo" if n % 2 else "repos/plain"
        prompt = FIX if n % 5 else "run: echo looked"  # every fifth task changes nothing: its check fails
        task = {"id": f"t{n:02d}", "prompt": prompt, "repo": repo, "check": CHECK}
        if n == 3:
            task["rev"] = "main"
        tasks.append(task)
    return write_tasks(tmp_path / "tasks.jsonl", tasks), plain, gitrepo


def test_twenty_tasks_with_four_jobs_give_verdicts_diffs_and_sessions(
    tmp_path: Path, model: FakeModelServer
) -> None:
    tasks, plain, gitrepo = twenty_tasks(tmp_path)
    before = {p: p.read_text() for p in (plain / "calc.py", gitrepo / "calc.py")}
    out = tmp_path / "out"
    done = run_batch(batch_argv(tasks, out, "--jobs", "4"), batch_env(tmp_path, model), tmp_path)
    assert done.returncode == 0, done.stderr
    lines = results(out)
    assert sorted(lines) == [f"t{n:02d}" for n in range(20)]
    for n in range(20):
        line = lines[f"t{n:02d}"]
        assert line["stopReason"] == "completed" and line["error"] is None, line
        assert line["durationMs"] > 0 and line["usage"]["inputTokens"] > 0
        if n % 5:
            assert line["verdict"] == "pass"
            assert "-    return a - b\n+    return a + b" in line["diff"]
            assert "deleted file mode" in line["diff"] and "+new" in line["diff"]
        else:
            assert line["verdict"] == "fail" and line["diff"] == ""
        session = out / line["session"]
        assert session.exists() and '"type"' in session.read_text()
    assert {p: p.read_text() for p in before} == before  # the originals were never touched
    assert not (gitrepo / "new.txt").exists() and (plain / "old.txt").exists()
    assert "20 tasks: 4 fail, 16 pass" in done.stdout
    assert not (tmp_path / "inkhome" / "checkpoints").exists()  # no task is ever rewound: none taken


def test_a_failing_workspace_setup_is_an_error_result_and_the_rest_runs(
    tmp_path: Path, model: FakeModelServer
) -> None:
    make_repo(tmp_path / "repo", git=True)
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "missing", "prompt": FIX, "repo": "no/such/dir"},
            {"id": "badrev", "prompt": FIX, "repo": "repo", "rev": "no-such-rev"},
            {"id": "badsetup", "prompt": FIX, "repo": "repo", "setup": "echo broken >&2; exit 3"},
            {"id": "good", "prompt": FIX, "repo": "repo", "setup": "touch built.flag", "check": CHECK},
        ],
    )
    out = tmp_path / "out"
    done = run_batch(batch_argv(tasks, out), batch_env(tmp_path, model), tmp_path)
    assert done.returncode == 1  # some tasks ended in errors
    lines = results(out)
    assert lines["missing"]["stage"] == "workspace" and "no such directory" in lines["missing"]["error"]
    assert lines["badrev"]["stage"] == "workspace" and "no-such-rev" in lines["badrev"]["error"]
    assert lines["badsetup"]["stage"] == "workspace" and "broken" in lines["badsetup"]["error"]
    assert lines["good"]["verdict"] == "pass"
    assert "built.flag" not in lines["good"]["diff"]  # setup happens before the baseline
    assert len(model.requests) == 2  # only the good task reached the model


def test_a_task_over_its_time_limit_is_aborted_cleanly_with_a_receipt(
    tmp_path: Path, model: FakeModelServer
) -> None:
    make_repo(tmp_path / "repo", git=False)
    marker = tmp_path / "slow.pid"
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {
                "id": "slow",
                "prompt": f"run: echo $$ > {marker}; exec sleep 300",
                "repo": "repo",
                "timeoutSeconds": 3,
            },
            {"id": "quick", "prompt": FIX, "repo": "repo", "check": CHECK},
        ],
    )
    out = tmp_path / "out"
    done = run_batch(batch_argv(tasks, out, "--jobs", "2"), batch_env(tmp_path, model), tmp_path)
    lines = results(out)
    slow = lines["slow"]
    assert slow["timedOut"] is True and slow["stopReason"] == "aborted" and not slow["cancelled"]
    assert slow["receipt"]["interrupted"], slow["receipt"]
    assert (
        not psutil.pid_exists(int(marker.read_text()))
        or psutil.Process(int(marker.read_text())).status() == "zombie"
    )
    assert lines["quick"]["verdict"] == "pass"
    assert done.returncode == 0, done.stderr  # a time limit is an outcome, not an error of the batch


def test_ctrl_c_interrupts_running_tasks_keeps_finished_ones_and_resume_completes(
    tmp_path: Path, model: FakeModelServer
) -> None:
    make_repo(tmp_path / "repo", git=True)
    pids = tmp_path / "pids"
    pids.mkdir()
    tasks = [{"id": f"f{n}", "prompt": FIX, "repo": "repo", "check": CHECK} for n in range(2)]
    tasks += [
        {"id": f"s{n}", "prompt": f"run: echo $$ > {pids}/s{n}; exec sleep 300", "repo": "repo"}
        for n in range(2)
    ]
    tasks += [{"id": f"later{n}", "prompt": FIX, "repo": "repo"} for n in range(3)]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    out = tmp_path / "out"
    env = batch_env(tmp_path, model)
    proc = subprocess.Popen(
        batch_argv(tasks_file, out, "--jobs", "2"),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    sleepers = [int(wait_for_file(pids / f"s{n}", timeout=60)) for n in range(2)]
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "--resume" in stderr
    lines = results(out)
    assert lines["f0"]["verdict"] == "pass" and lines["f1"]["verdict"] == "pass"
    for n in range(2):
        line = lines[f"s{n}"]
        assert (
            line["cancelled"] is True and line["stopReason"] == "aborted" and line["receipt"]["interrupted"]
        )
    assert not any(name.startswith("later") for name in lines)  # never started, so not recorded
    for pid in sleepers:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    finished = {k: lines[k] for k in ("f0", "f1")}

    (tmp_path / "tasks.jsonl").write_text(tasks_file.read_text().replace("exec sleep 300", "echo again"))
    again = subprocess.run(
        batch_argv(tasks_file, out, "--jobs", "2", "--resume"),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert again.returncode == 0, again.stderr
    assert "resuming: 2 of 7 tasks already done" in again.stderr
    final = results(out)
    assert {k: final[k] for k in ("f0", "f1")} == finished  # finished results kept, not rerun
    assert all(final[k]["stopReason"] == "completed" and not final[k]["cancelled"] for k in final)
    assert len(final) == 7


def test_out_with_results_needs_resume(tmp_path: Path, model: FakeModelServer) -> None:
    make_repo(tmp_path / "repo", git=False)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": FIX, "repo": "repo"}])
    out = tmp_path / "out"
    env = batch_env(tmp_path, model)
    assert run_batch(batch_argv(tasks, out), env, tmp_path).returncode == 0
    again = run_batch(batch_argv(tasks, out), env, tmp_path)
    assert again.returncode == 2 and "--resume" in one_line_error(again.stderr)
    skipped = run_batch(batch_argv(tasks, out, "--resume"), env, tmp_path)
    assert skipped.returncode == 0 and len(model.requests) == 2  # nothing ran again


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "a task is a JSON object"),
        ('{"id": "a", "prompt": "p"}', "missing field 'repo'"),
        ('{"id": "a b", "prompt": "p", "repo": "r"}', "use letters"),
        ('{"id": "a", "prompt": "p", "repo": "r", "colour": 1}', "unknown field 'colour'"),
        ('{"id": "a", "prompt": "p", "repo": "r", "timeoutSeconds": -1}', "timeoutSeconds"),
        ('{"id": "a", "prompt": 5, "repo": "r"}', "'prompt' must be a string"),
    ],
)
def test_a_bad_task_line_names_file_and_line(
    tmp_path: Path, line: str, problem: str, fake_server: FakeModelServer
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "ok", "prompt": "p", "repo": "r"}) + "\n\n" + line + "\n")
    done = run_batch(batch_argv(tasks, tmp_path / "out"), batch_env(tmp_path, fake_server), tmp_path)
    error = one_line_error(done.stderr.replace("ink batch: ", "ink: "))
    assert done.returncode == 2 and "tasks.jsonl:3: " in error and problem in error
    assert not fake_server.requests


def test_bad_settings_fail_once_before_any_task(tmp_path: Path, fake_server: FakeModelServer) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "repo": "."}])
    env = batch_env(tmp_path, fake_server)
    del env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"]
    done = run_batch(batch_argv(tasks, tmp_path / "out"), env, tmp_path)
    assert done.returncode == 2 and "OPENAI_API_KEY" in one_line_error(done.stderr)
    unknown = run_batch(batch_argv(tasks, tmp_path / "out", "--provider", "nope"), env, tmp_path)
    assert unknown.returncode == 2 and "'nope'" in one_line_error(unknown.stderr)
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_a_repository_holding_the_output_directory_is_copied_without_it(
    tmp_path: Path, model: FakeModelServer
) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "old.txt").write_text("x\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "self", "prompt": FIX, "repo": ".", "check": CHECK}]
    )
    done = run_batch(batch_argv(tasks, tmp_path / "out"), batch_env(tmp_path, model), tmp_path)
    assert done.returncode == 0, done.stderr
    line = results(tmp_path / "out")["self"]
    assert line["verdict"] == "pass" and "out/" not in line["diff"]


def test_an_unreachable_ray_address_is_one_clear_error(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "p", "repo": "."}])
    done = run_batch(
        batch_argv(tasks, tmp_path / "out", "--ray", address), batch_env(tmp_path, fake_server), tmp_path
    )
    assert done.returncode == 2
    assert "cannot join the Ray cluster" in one_line_error(done.stderr) and address in done.stderr
