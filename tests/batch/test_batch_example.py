"""The worked example of docs/batch.md runs as documented: its task file, its toy repositories, its checks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.batch.conftest import batch_argv, batch_env, results
from tests.fakeserver import FakeModelServer, Reply, text, tool_call

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "batch"
FIXES = {  # the scripted model's edit for each prompt; parse's "fix" is wrong on purpose
    "add()": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
    "greet()": {"path": "greet.py", "old_text": "name.lower()", "new_text": "name.capitalize()"},
    "parse()": {"path": "parse.py", "old_text": "int(text)", "new_text": "int(float(text))"},
}


def example_model(request: Any) -> Reply:
    if request.tool_results():
        return Reply([text("fixed")])
    prompt = request.user_texts()[0]
    edit = next(fix for key, fix in FIXES.items() if key in prompt)
    return Reply([tool_call("edit", edit, id="c1")])


def test_the_documented_evaluation_gives_its_documented_verdicts(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.responder = example_model
    evals = tmp_path / "evals"
    shutil.copytree(EXAMPLE, evals)
    out = tmp_path / "runs"
    done = subprocess.run(  # relative paths, as a user types them
        batch_argv(
            Path("evals/tasks.jsonl"), Path("runs"), "--jobs", "4", "--permission-mode", "accept-edits"
        ),
        env=batch_env(tmp_path, fake_server),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    verdicts = {task_id: line["verdict"] for task_id, line in results(out).items()}
    assert verdicts == {"calc-add": "pass", "greet-case": "pass", "parse-float": "fail"}
    assert "3 tasks: 1 fail, 2 pass" in done.stdout
    assert (EXAMPLE / "calc" / "calc.py").read_text().count("a - b") == 1  # the example itself untouched
