"""``ink batch`` loses and alters nothing (issue 29): what a workspace copy reads, what a diff holds,
what a Ctrl+C leaves in the results, and how a task file is read.

- the copy takes regular files, folders and symlinks only, within a byte budget, and stops on Ctrl+C;
- a diff is git's bytes: ``git apply`` of ``diffs/ID.diff`` on the original gives the workspace the run
  left, CRLF, latin-1, binary and mode changes included, and a long diff is cut only as documented;
- a check interrupted by Ctrl+C leaves the task cancelled (``--resume`` runs it again), a Ctrl+C while a
  finished run's diff is collected leaves the diff, and after ``--resume`` each id has one line;
- a task file is read as it streams in: a bad line is named before the rest arrives.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.batch.conftest import CHECK, batch_argv, batch_env, make_repo, results, write_tasks
from tests.cli.inkproc import one_line_error
from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.waiting import poll_until, wait_for_file


def run_batch(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


def start_batch(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def runs_command(command: str) -> Any:
    """The scripted model: one bash call with ``command``, then "done"."""
    return lambda request: (
        say("done") if request.tool_results() else Reply([tool_call("bash", {"command": command}, id="c1")])
    )


# --- the workspace copy ---------------------------------------------------------------------------


def test_a_copy_leaves_out_fifos_and_devices_and_copies_links_as_links(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", git=False)
    os.mkfifo(repo / "pipe")
    (repo / "zero").symlink_to("/dev/zero")
    (repo / "sub").mkdir()
    (repo / "sub" / "link-to-calc").symlink_to("../calc.py")
    if os.geteuid() == 0:  # a character device made in the repository (0 when not root: skipped part)
        os.mknod(repo / "sub" / "zero-device", 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    fake_server.responder = runs_command("ls -la > listing.txt")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo"}])
    out = tmp_path / "out"
    done = run_batch(batch_argv(tasks, out, "--keep-workspaces"), batch_env(tmp_path, fake_server), tmp_path)
    assert done.returncode == 0, done.stderr
    line = results(out)["t"]
    workspace = out / "tasks" / "t" / "workspace"
    assert (workspace / "calc.py").read_bytes() == (repo / "calc.py").read_bytes()
    assert os.readlink(workspace / "zero") == "/dev/zero"  # the link itself, never what it points to
    assert os.readlink(workspace / "sub" / "link-to-calc") == "../calc.py"
    assert not (workspace / "pipe").exists() and not (workspace / "sub" / "zero-device").exists()
    assert "left out pipe: a FIFO, not a file" in line["notes"]
    if os.geteuid() == 0:
        assert "left out sub/zero-device: a character device, not a file" in line["notes"]


def test_a_copy_over_its_budget_is_a_workspace_error(fake_server: FakeModelServer, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", git=False)
    os.truncate(repo / "old.txt", 1 << 40)  # sparse: a terabyte that uses no disk
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo"}])
    out = tmp_path / "out"
    done = run_batch(
        batch_argv(tasks, out, "--max-copy-bytes", "10M"), batch_env(tmp_path, fake_server), tmp_path
    )
    assert done.returncode == 1, done.stderr
    line = results(out)["t"]
    assert line["stage"] == "workspace" and "over the copy budget of 10 MiB" in line["error"], line
    assert not fake_server.requests


def test_ctrl_c_stops_a_copy_at_once(fake_server: FakeModelServer, tmp_path: Path) -> None:
    # shutil.copytree read a character device (or a sparse terabyte) for ever, and Ctrl+C could not stop
    # the thread it ran in
    repo = make_repo(tmp_path / "repo", git=False)
    os.truncate(repo / "old.txt", 1 << 40)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo"}])
    out = tmp_path / "out"
    batch = start_batch(
        batch_argv(tasks, out, "--max-copy-bytes", "2T"), batch_env(tmp_path, fake_server), tmp_path
    )
    copied = out / "tasks" / "t" / "workspace" / "old.txt"
    try:
        poll_until(
            lambda: copied.exists() and copied.stat().st_size > 0, timeout=120, what="the copy to start"
        )
        batch.send_signal(signal.SIGINT)
        _, stderr = batch.communicate(timeout=60)  # the copy stops within a chunk, not after a terabyte
    finally:
        batch.kill()
    assert batch.returncode == 130, stderr
    line = results(out)["t"]
    assert line["cancelled"] is True and line["stage"] == "workspace" and "interrupted" in line["error"]


# --- diffs ----------------------------------------------------------------------------------------

CHANGE = """python3 - <<'EOF'
import os
open('crlf.txt', 'ab').write(b'third\\r\\n')
open('latin1.txt', 'wb').write('caf\\xe9 cr\\xe8me\\n'.encode('latin-1'))
open('blob.bin', 'wb').write(bytes(reversed(range(256))) * 8)
open('long.txt', 'w').write(''.join(f'changed line {n} ' + 'y' * 480 + '\\n' for n in range(6000)))
open('new.txt', 'wb').write(b'brand new\\r\\nwith crlf\\r\\n')
os.remove('old.txt')
os.chmod('calc.py', 0o755)
EOF"""


def hostile_bytes_repo(repo: Path) -> Path:
    make_repo(repo, git=False)
    (repo / "crlf.txt").write_bytes(b"first\r\nsecond\r\n")
    (repo / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 8)
    (repo / "long.txt").write_text("".join(f"line {n} " + "x" * 480 + "\n" for n in range(6000)))
    (repo / ".gitattributes").write_text("* text=auto eol=crlf\n*.txt ident\n")  # must not convert a byte
    return repo


def tree_of(root: Path) -> dict[str, tuple[bytes, int]]:
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(root).parts:
            found[str(path.relative_to(root))] = (
                path.read_bytes(),
                stat.S_IMODE(path.stat().st_mode) & 0o111,
            )
    return found


def test_the_diff_file_is_gits_bytes_and_git_apply_reproduces_the_run(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    repo = hostile_bytes_repo(tmp_path / "repo")
    fake_server.responder = runs_command(CHANGE)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo"}])
    out = tmp_path / "out"
    done = run_batch(batch_argv(tasks, out, "--keep-workspaces"), batch_env(tmp_path, fake_server), tmp_path)
    assert done.returncode == 0, done.stderr
    line = results(out)["t"]
    assert line["diffFile"] == "diffs/t.diff"
    diff = (out / line["diffFile"]).read_bytes()
    assert b"GIT binary patch" in diff and b"third\r\n" in diff and "cr\xe8me".encode("latin-1") in diff
    applied = tmp_path / "applied"
    shutil.copytree(repo, applied, symlinks=True)
    subprocess.run(["git", "apply", "--binary", str(out / line["diffFile"])], cwd=applied, check=True)
    assert tree_of(applied) == tree_of(out / "tasks" / "t" / "workspace")  # every byte and mode
    # the line's own text: cut at a line end (documented), not UTF-8 (said), never pretending
    assert line["diffExact"] is False
    assert "not UTF-8" in line["diffNote"] and "first" in line["diffNote"], line["diffNote"]
    text = line["diff"].encode()
    assert len(text) <= 2_000_000 + 3 * 2_000 and text.endswith(b"\n")


def test_a_utf8_diff_in_the_line_is_exact(fake_server: FakeModelServer, tmp_path: Path) -> None:
    make_repo(tmp_path / "repo", git=False)
    (tmp_path / "repo" / "crlf.txt").write_bytes(b"one\r\n")
    fake_server.responder = runs_command("printf 'two\\r\\n' >> crlf.txt")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo"}])
    out = tmp_path / "out"
    assert run_batch(batch_argv(tasks, out), batch_env(tmp_path, fake_server), tmp_path).returncode == 0
    line = results(out)["t"]
    assert line["diffExact"] is True and line["diffNote"] is None
    assert line["diff"].encode() == (out / line["diffFile"]).read_bytes() and "+two\r\n" in line["diff"]


# --- Ctrl+C and --resume --------------------------------------------------------------------------


def test_ctrl_c_during_a_check_leaves_the_task_cancelled_and_resume_runs_it_again(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", git=False)
    fake_server.responder = runs_command("sed -i 's/a - b/a + b/' calc.py")
    marker = tmp_path / "check.pid"
    slow_check = f"echo $$ > {marker}; sleep 300"
    tasks_file = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo", "check": slow_check}]
    )
    out = tmp_path / "out"
    env = batch_env(tmp_path, fake_server)
    batch = start_batch(batch_argv(tasks_file, out), env, tmp_path)
    try:
        wait_for_file(marker, timeout=120)
        batch.send_signal(signal.SIGINT)
        _, stderr = batch.communicate(timeout=120)
    finally:
        batch.kill()
    assert batch.returncode == 130, stderr
    line = results(out)["t"]
    assert line["cancelled"] is True and line["verdict"] is None, line  # was: cancelled false, never rerun
    assert line["stopReason"] == "completed" and "+    return a + b" in line["diff"]  # the run's work kept

    write_tasks(tasks_file, [{"id": "t", "prompt": "p", "repo": "repo", "check": CHECK}])
    again = run_batch(batch_argv(tasks_file, out, "--resume"), env, tmp_path)
    assert again.returncode == 0, again.stderr
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1, lines  # the new line replaced the cancelled one
    assert results(out)["t"]["verdict"] == "pass" and not results(out)["t"]["cancelled"]


def test_ctrl_c_while_a_finished_runs_diff_is_collected_keeps_the_diff(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repo", git=False)
    marker = tmp_path / "made"
    many = f"python3 -c \"[open(f'f{{n}}.txt', 'w').write(str(n)) for n in range(5000)]\"; touch {marker}"
    fake_server.responder = runs_command(many)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "p", "repo": "repo"}])
    out = tmp_path / "out"
    batch = start_batch(batch_argv(tasks, out), batch_env(tmp_path, fake_server), tmp_path)
    adding = out / "tasks" / "t" / "baseline.git" / "index.lock"  # git add holds it while it works
    try:
        poll_until(marker.exists, timeout=120, what="the run's files")
        _poll_fast(adding.exists, timeout=120, what="the diff's git add")  # the run has ended by then
        batch.send_signal(signal.SIGINT)
        batch.communicate(timeout=240)
    finally:
        batch.kill()
    line = results(out)["t"]
    assert line["stopReason"] == "completed" and line["cancelled"] is False and line["error"] is None, line
    assert "+4999" in (out / line["diffFile"]).read_text()


def _poll_fast(predicate: Any, timeout: float, what: str) -> None:
    """``poll_until`` for a state that may last only a fraction of a second."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout} s")
        time.sleep(0.0005)


# --- the task file --------------------------------------------------------------------------------


def test_a_bad_line_is_named_as_soon_as_it_is_read(fake_server: FakeModelServer, tmp_path: Path) -> None:
    # the task file was read whole first: a pipe whose writer stays open was never named
    fifo = tmp_path / "tasks.jsonl"
    os.mkfifo(fifo)
    good = '{"id": "a", "prompt": "p", "repo": "."}\n'
    done: list[subprocess.CompletedProcess[str]] = []
    ink = threading.Thread(
        target=lambda: done.append(
            run_batch(batch_argv(fifo, tmp_path / "out"), batch_env(tmp_path, fake_server), tmp_path)
        )
    )
    ink.start()
    with open(fifo, "w") as writer:  # held open until ink answered
        writer.write(good + good.replace('"a"', '"b"') + "not json\n")
        writer.flush()
        ink.join(timeout=120)
    assert done, "ink batch waited for the end of the file"
    error = one_line_error(done[0].stderr)
    assert done[0].returncode == 2 and "tasks.jsonl:3: not JSON" in error


def test_a_huge_task_file_stops_at_the_task_limit(fake_server: FakeModelServer, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    with open(tasks, "w") as file:
        file.writelines(f'{{"id": "t{n}", "prompt": "p", "repo": "."}}\n' for n in range(1_000_000))
        file.write("bad\n")
    done = run_batch(batch_argv(tasks, tmp_path / "out"), batch_env(tmp_path, fake_server), tmp_path)
    error = one_line_error(done.stderr)  # read no further than the limit (was: all of it, 45 s and 562 MB)
    assert done.returncode == 2 and "tasks.jsonl:100001: more than 100,000 tasks" in error, error


def test_the_users_git_variables_do_not_steer_the_batchs_own_git(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """``ink batch`` run from a git hook inherits ``GIT_DIR`` and ``GIT_WORK_TREE``: its own clone,
    checkout and diff must still work on the task's copy, and never touch the repository they name."""
    make_repo(tmp_path / "repo", git=True)
    other = make_repo(tmp_path / "other", git=True)
    before = subprocess.run(["git", "log", "--format=%H", "--all"], cwd=other, capture_output=True, text=True)
    fake_server.responder = runs_command("echo changed >> calc.py")
    task = {"id": "t", "prompt": "p", "repo": "repo", "rev": "HEAD"}  # a rev: cloned and checked out by git
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task])
    out = tmp_path / "out"
    env = batch_env(tmp_path, fake_server) | {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)}
    done = run_batch(batch_argv(tasks, out), env, tmp_path)
    assert done.returncode == 0, done.stderr
    line = results(out)["t"]
    assert line["error"] is None and "+changed" in line["diff"], line
    after = subprocess.run(["git", "log", "--format=%H", "--all"], cwd=other, capture_output=True, text=True)
    assert after.stdout == before.stdout and (other / "calc.py").read_text().count("changed") == 0
