"""Set-up for ``ink batch``: toy repositories, a task file, and a scripted model that fixes each task.

The model (the fake server's responder, shared by every run of a batch) answers a task's first request
with one bash call taken from the prompt (``run: CMD``), and the request carrying its result with "done".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.inkproc import INK, ink_env
from tests.fakeserver import FakeModelServer, Reply, text, tool_call


def scripted_model(request: Any) -> Reply:
    if request.tool_results():
        return Reply([text("done")])
    prompt = request.user_texts()[0]
    command = prompt.split("run: ", 1)[1] if "run: " in prompt else "true"
    return Reply([tool_call("bash", {"command": command}, id=f"c{request.index}")])


@pytest.fixture
def model(fake_server: FakeModelServer) -> FakeModelServer:
    fake_server.responder = scripted_model
    return fake_server


def make_repo(path: Path, *, git: bool) -> Path:
    path.mkdir(parents=True)
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (path / "old.txt").write_text("remove me\n")
    (path / ".gitignore").write_text("build/\n")
    if git:
        quiet = {"check": True, "cwd": path, "capture_output": True}
        subprocess.run(["git", "init", "-q", "-b", "main"], **quiet)
        subprocess.run(["git", "add", "-A"], **quiet)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"], **quiet)
    return path


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


def batch_env(tmp_path: Path, server: FakeModelServer) -> dict[str, str]:
    return ink_env(tmp_path, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=server.openai_base_url)


def batch_argv(tasks: Path, out: Path, *extra: str) -> list[str]:
    return [*INK, "batch", str(tasks), "--out", str(out), "--permission-mode", "yolo", *extra]


def results(out: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {line["id"]: line for line in lines}


FIX = "run: sed -i 's/a - b/a + b/' calc.py && rm old.txt && echo new > new.txt"
CHECK = "python3 -c 'import calc; assert calc.add(2, 3) == 5'"
