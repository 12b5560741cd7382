"""Fixtures for the tool tests: a real workspace in tmp_path, a real process registry, real signals."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import psutil
import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import Tool, ToolCallContext, ToolOutput
from ink.ai.messages import ToolCall
from ink.tools import ProcessRegistry, Workspace, default_tools


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


@pytest.fixture
async def registry() -> AsyncIterator[ProcessRegistry]:
    """A registry whose leftovers are reaped after the test, so one failure cannot leak sleepers."""
    processes = ProcessRegistry()
    yield processes
    await processes.terminate_all(0.1)


@pytest.fixture
def tools(ws: Workspace, registry: ProcessRegistry) -> dict[str, Tool]:
    return {tool.spec.name: tool for tool in default_tools(ws, registry, kill_delay=0.2)}


def ctx(signal: AbortSignal | None = None) -> ToolCallContext:
    return ToolCallContext(ToolCall("call-1", "tool", {}), signal or AbortSignal())


async def call(tool: Tool, signal: AbortSignal | None = None, **args: Any) -> ToolOutput:
    return await tool.run(args, ctx(signal))


def is_gone(pid: int) -> bool:
    """True when ``pid`` has exited (a zombie waiting to be reaped counts as exited)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait for a condition to become true (polling an observable state, not hoping a delay suffices)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)


class Marker:
    """An ``on_output`` callback that sets an event when a marker text has appeared in the output."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.seen = asyncio.Event()
        self.text = ""

    def __call__(self, chunk: str) -> None:
        self.text += chunk
        if self.marker in self.text:
            self.seen.set()


def write_bytes(path: Path, data: bytes, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mode is not None:
        os.chmod(path, mode)
    return path


def args_of(**kwargs: Any) -> Mapping[str, Any]:
    return kwargs
