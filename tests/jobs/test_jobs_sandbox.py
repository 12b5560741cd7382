"""R43 with R41: a background job runs in the sandbox like any bash call (the default workspace-write:
no write outside the workspace, no network unless allowed), through ``ink --mode rpc``."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.fakeserver import FakeModelServer, call, say
from tests.jobs.helpers import free_port
from tests.rpc.conftest import StartRpc
from tests.sandbox.conftest import outside

__all__ = ["outside"]  # the fixture: a folder no sandboxed command may write


def test_a_job_is_confined_like_any_bash_call(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path, outside: Path
) -> None:
    port = free_port()
    serve = f"{sys.executable} -m http.server {port} --bind 127.0.0.1"
    command = f"echo escaped > {outside}/x.txt; echo inside > inside.txt; {serve}"
    fake_server.script(call("bash", {"command": command, "background": True}, id="c1"), say("started"))
    ink = start_rpc("--permission-mode", "yolo")
    ink.ok("prompt", text="start it")
    end = ink.wait_event("job_end")
    assert end["exitCode"] == 1  # the server could not bind: the network is off in the sandbox
    output = Path(ink.events("job_start")[0]["output"]).read_text()
    assert "x.txt: Permission denied" in output and "Network is unreachable" in output, output
    assert not (outside / "x.txt").exists() and (project / "inside.txt").read_text() == "inside\n"
