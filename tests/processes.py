"""Checking on the processes ink started, from outside: is one gone, and killing what a test left."""

from __future__ import annotations

import psutil


def gone(pid: int) -> bool:
    """True when ``pid`` has exited (a zombie waiting to be reaped counts as exited)."""
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
