"""A process's descendants from the kernel's children lists (ink.tools.proctree), which the abort path
reads instead of every process of the system (R35): the same processes psutil finds by everyone's parent,
children forked by any thread included."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import psutil
import pytest

from ink.tools import proctree
from tests.processes import kill_tree
from tests.waiting import poll_until, wait_for_file

_NO_SUCH_PID = 2**22 + 1  # above the largest pid Linux hands out

pytestmark = pytest.mark.skipif(not proctree.available(), reason="the kernel lists no children here")


def test_descendants_are_the_tree_psutil_finds(tmp_path: Path) -> None:
    # Each shell says it is ready once it has forked its own sleeps: the subshell runs on its own time.
    script = "sleep 30 & (sleep 30 & sleep 30 & echo in > inner; wait) & echo out > outer; wait"
    shell = subprocess.Popen(["sh", "-c", script], cwd=tmp_path)
    try:
        wait_for_file(tmp_path / "outer")
        wait_for_file(tmp_path / "inner")
        expected = {p.pid for p in psutil.Process(shell.pid).children(recursive=True)}
        assert len(expected) >= 4
        assert set(proctree.descendants(shell.pid)) == expected
        found = proctree.descendants(shell.pid)
        parents = {pid: psutil.Process(pid).ppid() for pid in found}
        order = {pid: at for at, pid in enumerate(found)}
        assert all(order[parent] < order[pid] for pid, parent in parents.items() if parent in order)
    finally:
        kill_tree(shell.pid)
        shell.wait()


def test_a_child_forked_by_another_thread_is_found() -> None:
    started: list[subprocess.Popen[bytes]] = []
    worker = threading.Thread(target=lambda: started.append(subprocess.Popen(["sleep", "30"])))
    worker.start()
    worker.join()
    (child,) = started
    try:
        assert child.pid in proctree.children(os.getpid())
        assert child.pid in proctree.descendants(os.getpid())
    finally:
        child.kill()
        child.wait()


def test_a_process_that_is_gone_has_no_children() -> None:
    assert proctree.children(_NO_SUCH_PID) == [] and proctree.descendants(_NO_SUCH_PID) == []


def test_a_start_time_is_psutils_since_boot_and_names_one_process(tmp_path: Path) -> None:
    """The stamp that tells a process from a later one with its pid (R35: only processes proven ours are
    signalled): psutil's own start time counted from boot, read without psutil; a zombie keeps it; a
    process that is gone has none. A command name with spaces, parentheses and a newline (the kernel
    shows it as it is) does not shift it."""
    odd = tmp_path / "a) (b c\n) 1 2"
    odd.symlink_to("/bin/sleep" if os.path.exists("/bin/sleep") else "/usr/bin/sleep")
    child = subprocess.Popen([str(odd), "30"])
    try:
        stamp = proctree.start_time(child.pid)
        for pid in (child.pid, os.getpid()):
            since_boot = psutil.Process(pid).create_time() - psutil.boot_time()
            assert proctree.start_time(pid) == pytest.approx(since_boot, abs=1e-6)
        child.kill()
        poll_until(lambda: psutil.Process(child.pid).status() == psutil.STATUS_ZOMBIE, what="a zombie")
        assert proctree.start_time(child.pid) == stamp  # a zombie: dead, its pid not free yet
    finally:
        child.kill()
        child.wait()
    assert proctree.start_time(child.pid) is None and proctree.start_time(_NO_SUCH_PID) is None
