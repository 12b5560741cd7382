"""Shared helpers of the RPC suite: held replies, marker files written by scripted commands, processes."""

from __future__ import annotations

import time
from pathlib import Path

import psutil

from tests.fakeserver import Gate, Reply


def held(*steps: object) -> tuple[Gate, Reply]:
    """A reply that waits at a gate before its steps."""
    gate = Gate()
    return gate, Reply([gate, *steps])  # type: ignore[list-item]


def wait_for_file(path: Path, timeout: float = 20.0) -> str:
    """Wait for a marker file a scripted command writes (condition polling, not a hoping sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.01)
    raise TimeoutError(f"{path} never appeared")


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def kill_tree(pid: int) -> None:
    """Clean-up after a test that killed ink with -9 (nothing could reap its children then)."""
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    for proc in [*root.children(recursive=True), root]:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
