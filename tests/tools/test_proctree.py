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
from tests.waiting import wait_for_file

_NO_SUCH_PID = 2**22 + 1  # above the largest pid Linux hands out

pytestmark = pytest.mark.skipif(not proctree.available(), reason="the kernel lists no children here")


def test_descendants_are_the_tree_psutil_finds(tmp_path: Path) -> None:
    script = "sleep 30 & (sleep 30 & sleep 30 & wait) & echo ready > ready; wait"
    shell = subprocess.Popen(["sh", "-c", script], cwd=tmp_path)
    try:
        wait_for_file(tmp_path / "ready")
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
