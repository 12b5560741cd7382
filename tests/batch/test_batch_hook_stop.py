"""A hook's ``"continue": false`` in ``ink batch`` (docs/hooks.md): the task it stopped ends as an
interrupt ends it, its result saying who stopped it and why, and the batch goes on with the next task,
as Claude Code's headless runs do."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.batch.conftest import CHECK, FIX, batch_argv, batch_env, make_repo, results, write_tasks
from tests.batch.test_batch_local import run_batch
from tests.fakeserver import FakeModelServer

STOP_ON_RM = """
import json, sys
event = json.load(sys.stdin)
if "rm -rf" in event["tool_input"].get("command", ""):
    print(json.dumps({"continue": False, "stopReason": "no rm -rf in a batch"}))
"""


def test_a_hook_stop_ends_its_task_and_the_batch_goes_on(tmp_path: Path, model: FakeModelServer) -> None:
    make_repo(tmp_path / "repo", git=True)
    hook = tmp_path / "stop.py"
    hook.write_text(STOP_ON_RM)
    env = batch_env(tmp_path, model)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        f'[[hooks.pre_tool]]\nmatcher = "Bash"\ncommand = "{sys.executable} {hook}"\n'
    )
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "stopped", "prompt": "run: rm -rf build && touch wiped", "repo": "repo"},
            {"id": "good", "prompt": FIX, "repo": "repo", "check": CHECK},
        ],
    )
    out = tmp_path / "out"
    done = run_batch(batch_argv(tasks, out), env, tmp_path)
    lines = results(out)
    stopped = lines["stopped"]
    assert stopped["stopReason"] == "aborted" and not stopped.get("crashed"), stopped
    assert stopped["receipt"]["reason"] == "hook"
    assert stopped["receipt"]["message"] == "no rm -rf in a batch"
    assert "wiped" not in stopped["diff"]
    assert lines["good"]["verdict"] == "pass"
    assert done.returncode == 0, done.stderr
