"""Waiting for a condition that no event announces (a file a subprocess writes, a pid that appears).

This polls a predicate until it holds or the timeout passes; it never waits for time to pass in the hope
that something happened. Prefer an event when the code under test emits one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path


def wait_for_file(path: Path, timeout: float = 20.0) -> str:
    """The text of a marker file a scripted command writes, once it is there and not blank. Raises
    ``TimeoutError``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.01)
    raise TimeoutError(f"{path} never appeared")


async def wait_until(predicate: Callable[[], object], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not hold within {timeout} s")
        await asyncio.sleep(0.005)


def poll_until(predicate: Callable[[], object], timeout: float = 10.0, what: str = "condition") -> None:
    """``wait_until`` for threads and plain tests: polls ``predicate``; raises ``TimeoutError``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not hold within {timeout} s")
        time.sleep(0.01)
