"""Through the real ``ink -p``: a FIFO named ``.gitignore`` in a repository's sub-folder held every
file-changing tool call for the checkpoint's 300 s git timeout (issue 29, R42); the unit tests are
tests/checkpoints/test_fifos.py."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.checkpoints.test_fifos import HANG, pytestmark
from tests.cli.inkproc import INK, ink_env
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args
from tests.rpc.conftest import StartRpc

__all__ = ["pytestmark"]


def test_ink_p_writes_at_once_beside_a_fifo_gitignore_and_the_rewind_is_exact(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path, tmp_path: Path
) -> None:
    """Through the real ``ink -p`` (a saved session: checkpoints on) in a git repository whose sub-folder
    holds a FIFO ``.gitignore``: the write happens and ink exits, the FIFO is named once on stderr; the
    session continued over RPC rewinds the file exactly."""
    subprocess.run(["git", "init", "--quiet", str(project)], check=True)
    (project / "sub").mkdir()
    os.mkfifo(project / "sub" / ".gitignore")
    fake_server.script(call("write", {"path": "notes.txt", "content": "new\n"}), say("written"))
    argv = [*INK, "-p", "--permission-mode", "yolo", *provider_args(fake_server, "openai"), "go"]
    env = ink_env(tmp_path)
    done = subprocess.run(argv, env=env, cwd=project, capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0 and done.stdout == "written\n", done.stderr[-2000:]
    assert (project / "notes.txt").read_text() == "new\n"
    assert done.stderr.count("sub/.gitignore: a FIFO") == 1, done.stderr
    ink = start_rpc("--continue")
    [checkpoint] = ink.ok("list_checkpoints")["checkpoints"]
    assert checkpoint["files"] == ["notes.txt"]
    ink.ok("rewind", inputId=checkpoint["inputId"], files=True, conversation=False)
    end = ink.wait_event("rewind_end", timeout=HANG)
    assert end["ok"] is True, end
    assert (project / "notes.txt").read_text() == "the secret is 42\n"
    assert stat.S_ISFIFO((project / "sub" / ".gitignore").lstat().st_mode)
