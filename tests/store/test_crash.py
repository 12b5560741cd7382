"""kill -9 of a process writing a session, at several moments: the session always loads valid.

The full-stack version (``ink --mode rpc`` killed mid-stream, mid-tool) belongs to the RPC frontend; this
one kills a real process that records through the same writer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ink.ai.messages import ToolResult
from ink.store import SessionStore
from tests.store.crash_writer import SCRIPT
from tests.store.helpers import as_json, project, strict_errors

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kill_after", [1, 2, 3, 4, 6])
def test_kill_9_at_any_step_leaves_a_session_that_loads_valid(tmp_path: Path, kill_after: int) -> None:
    sessions, cwd = SessionStore(tmp_path / "sessions"), project(tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.store.crash_writer", str(sessions.session_dir), str(cwd)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        for step in range(1, kill_after + 1):
            assert child.stdout.readline().strip() == f"after {step}"
            if step < kill_after:
                child.stdin.write("go\n")
                child.stdin.flush()
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    handle = sessions.continue_latest(cwd)
    messages = handle.history.messages
    assert as_json(messages[:kill_after]) == as_json(SCRIPT[:kill_after])  # nothing written was lost
    assert strict_errors(messages) == [None, None]
    dangling = {2: ["a", "b", "c"], 3: ["b", "c"], 4: ["c"]}.get(kill_after, [])
    assert [r.tool_call_id for r in handle.loaded.repair.inserted] == dangling  # type: ignore[union-attr]
    assert all(isinstance(m, ToolResult) and m.is_error for m in messages[kill_after:])
    handle.close()
