"""Ending 20 background jobs when ``ink --mode rpc`` exits (R43, R35). Used by the run-control bench.

Each run starts one ink, has the fake model start 20 jobs in one reply (``bash`` with ``background:
true``: a shell that marks that it runs, then a ``sleep 1000`` child and a ``setsid`` grandchild), waits
until all 20 trees run, then closes ink's stdin and measures:
- end of input -> ink's process exited (it ends every job, with its tree, before it exits);
- end of input -> every process of the 20 jobs gone (keepers, shells, children, setsid escapees),
  polled from a thread.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from tests.fakeserver import FakeModelServer, Reply, ToolCallStep

from bench.rpc_throughput import Ink, project

JOBS = 20
COMMAND = "sleep 1000 & (setsid sleep 1000 &); touch started-{n}; wait"


def measure(runs: int) -> dict[str, list[float]]:
    exited: list[float] = []
    gone: list[float] = []
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            took_exit, took_gone = one_run(server, Path(tmp))
            exited.append(took_exit * 1000)
            gone.append(took_gone * 1000)
    return {
        f"end of input -> exit, {JOBS} jobs running (RPC)": exited,
        f"end of input -> {JOBS} job trees gone (RPC)": gone,
    }


def one_run(server: FakeModelServer, work: Path) -> tuple[float, float]:
    folder = project(work)
    for old in folder.glob("started-*"):
        old.unlink()
    args = [{"command": COMMAND.format(n=n), "background": True} for n in range(JOBS)]
    server.script(Reply([ToolCallStep("bash", a, f"j{n}") for n, a in enumerate(args)]), Reply([]))
    argv = [sys.executable, "-m", "ink", "--mode", "rpc", "--no-session", "--permission-mode", "yolo"]
    argv += ["--base-url", server.openai_base_url, "--api-key", "k"]
    ink = Ink(server.openai_base_url, "openai", work, argv)
    ink.send({"type": "prompt", "id": "p", "text": "start twenty"})
    ink.read_until(b'"run_end"')
    deadline = time.monotonic() + 60
    while len(list(folder.glob("started-*"))) < JOBS:
        if time.monotonic() > deadline:
            raise SystemExit("bench: the jobs never all started")
        time.sleep(0.005)
    tree = ink.ps.children(recursive=True)  # every keeper, shell, sleep and setsid sleep
    if len(tree) < 4 * JOBS:
        raise SystemExit(f"bench: expected {4 * JOBS}+ job processes, found {len(tree)}")
    gone_at: list[float] = []
    watcher = threading.Thread(target=_watch_gone, args=(tree, gone_at), daemon=True)
    watcher.start()
    started = time.perf_counter()
    assert ink.proc.stdin is not None
    ink.proc.stdin.close()
    ink.proc.wait(60)
    exited = time.perf_counter() - started
    watcher.join(30)
    if not gone_at:
        raise SystemExit("bench: job processes outlived ink")
    return exited, gone_at[0] - started


def _watch_gone(tree: list[psutil.Process], gone_at: list[float]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not any(_running(p) for p in tree):
            gone_at.append(time.perf_counter())
            return
        time.sleep(0.0005)


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
