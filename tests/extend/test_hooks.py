"""Hooks (docs/hooks.md) in a real ``ink --mode rpc`` against the fake model server: the hook commands are
real scripts reading the event's JSON on stdin, in Claude Code's shape."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psutil
import pytest

from ink.config.errors import ConfigError
from ink.config.files import parse_config
from ink.extend.hook_process import read_answer
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient
from tests.waiting import wait_for_file

PY = sys.executable
BLOCK_PUSH = """
import json, sys
event = json.load(sys.stdin)
command = event["tool_input"].get("command", "")
if event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "Bash" and "git push" in command:
    print("pushing to main is not allowed here; open a pull request", file=sys.stderr)
    sys.exit(2)
"""


def hooks_config(tmp_path: Path, text: str) -> dict[str, str]:
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)
    return env


def script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return f"{PY} {path}"


def start(server: FakeModelServer, env: dict[str, str], project: Path) -> RpcClient:
    return RpcClient.start(provider_args(server, "openai", "--permission-mode", "yolo"), env, project)


def alive(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def test_a_pre_tool_hook_denies_with_a_reason_the_model_sees(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    command = script(tmp_path, "no_push.py", BLOCK_PUSH)
    env = hooks_config(tmp_path, f'[[hooks.pre_tool]]\nmatcher = "Bash"\ncommand = "{command}"\n')
    fake_server.script(
        call("bash", {"command": "git push origin main; touch pushed"}, id="c1"),
        call("bash", {"command": "touch allowed"}, id="c2"),
        say("I will open a pull request instead."),
    )
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="ship it")
        ink.wait_event("run_end", stopReason="completed")
    [(call_id, refused)] = fake_server.requests[1].tool_results()
    assert call_id == "c1"
    assert "blocked by a pre_tool hook: pushing to main is not allowed here; open a pull request" in refused
    assert not (project / "pushed").exists()
    assert (project / "allowed").exists()  # the same hook let the next call through


def test_a_post_tool_hook_formats_the_written_file(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    formatter = script(
        tmp_path,
        "fmt.py",
        "import json, subprocess, sys\n"
        "path = json.load(sys.stdin)['tool_input']['file_path']\n"
        f"subprocess.run([{PY!r}, '-m', 'ruff', 'format', '-q', path], check=True)\n"
        "print('formatted ' + path)\n",
    )
    config = f'[[hooks.post_tool]]\nmatcher = "Edit|Write"\ncommand = "{formatter}"\ntimeout = 30\n'
    env = hooks_config(tmp_path, config)
    fake_server.script(call("write", {"path": "a.py", "content": "x=[1,2]\n"}, id="w1"), say("written"))
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="write a.py")
        ink.wait_event("run_end", stopReason="completed")
    assert (project / "a.py").read_text() == "x = [1, 2]\n"
    [(_, output)] = fake_server.requests[1].tool_results()
    assert f"[post_tool hook] formatted {project / 'a.py'}" in output


def test_a_hanging_hook_is_killed_at_its_timeout_and_its_call_is_blocked(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # R39: the run goes on, but the call the hook did not answer for does not run
    env = hooks_config(tmp_path, '[[hooks.pre_tool]]\ncommand = "sleep 37.25"\ntimeout = 0.5\n')
    fake_server.script(call("bash", {"command": "touch ran"}, id="c1"), say("done"))
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="go")
        notice = ink.wait_event("notice", level="warning")
        assert (
            "sleep 37.25" in notice["text"] and "did not finish within 0.5 s and was killed" in notice["text"]
        )
        ink.wait_event("run_end", stopReason="completed")
        assert alive("sleep 37.25") == []
    assert not (project / "ran").exists()
    [(_, refused)] = fake_server.requests[1].tool_results()
    assert "did not finish within 0.5 s" in refused and "the call is blocked" in refused


def test_an_abort_kills_a_running_hook(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> None:
    env = hooks_config(tmp_path, '[[hooks.pre_tool]]\ncommand = "echo up > hook-started; sleep 41.75"\n')
    fake_server.script(call("bash", {"command": "touch ran"}, id="c1"), say("unused"))
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="go")
        wait_for_file(project / "hook-started")
        assert alive("sleep 41.75")
        ink.ok("abort")
        end = ink.wait_event("run_end")
        assert end["stopReason"] == "aborted"
        assert alive("sleep 41.75") == []
        [tool_end] = ink.events("tool_end")
        assert tool_end["result"]["isError"] is True
    assert not (project / "ran").exists()


def project_hook(project: Path) -> None:
    (project / ".ink").mkdir()
    (project / ".ink" / "config.toml").write_text('[[hooks.pre_tool]]\ncommand = "echo ran > hook-ran"\n')


def test_an_unapproved_project_hook_does_not_run(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    project_hook(project)
    env = ink_env(tmp_path)
    fake_server.script(
        call("bash", {"command": "touch ran-1"}, id="c1"),
        say("ok"),
        call("bash", {"command": "touch ran-2"}, id="c2"),
        say("ok"),
    )
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="go")
        question = ink.wait_event("permission_request", name="project_hooks")
        assert question["args"]["hooks"] == ["pre_tool: echo ran > hook-ran"]
        ink.ok("permission", requestId=question["requestId"], decision="deny")
        ink.wait_event("run_end", stopReason="completed")
    assert (project / "ran-1").exists() and not (project / "hook-ran").exists()
    printed = run_ink(
        ["-p", "go", *provider_args(fake_server, "openai", "--permission-mode", "yolo")], env, project
    )
    assert printed.returncode == 0, printed.stderr
    assert "project hooks run only once you approved them" in printed.stderr
    assert (project / "ran-2").exists() and not (project / "hook-ran").exists()


def test_an_approval_is_remembered_until_the_hooks_change(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    project_hook(project)
    env = ink_env(tmp_path)
    fake_server.script(
        call("bash", {"command": "true"}, id="c1"),
        say("ok"),
        call("bash", {"command": "true"}, id="c2"),
        say("ok"),
    )
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="go")
        question = ink.wait_event("permission_request", name="project_hooks")
        ink.ok("permission", requestId=question["requestId"], decision="always")
        ink.wait_event("run_end", stopReason="completed")
    assert wait_for_file(project / "hook-ran") == "ran"
    (project / "hook-ran").unlink()
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="again")
        ink.wait_event("run_end", stopReason="completed")
        assert ink.events("permission_request") == []
    assert (project / "hook-ran").exists()


def test_prompt_and_session_hooks_add_context_and_a_refused_prompt_comes_back(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    guard = script(
        tmp_path,
        "guard.py",
        "import json, sys\nprompt = json.load(sys.stdin)['prompt']\n"
        "if 'password' in prompt:\n    print(json.dumps({'decision': 'block', 'reason': 'no secrets'}))\n"
        "else:\n    print(json.dumps({'hookSpecificOutput': {'additionalContext': 'branch: main'}}))\n",
    )
    config = (
        f'[[hooks.user_prompt]]\ncommand = "{guard}"\n'
        '[[hooks.session_start]]\ncommand = "echo session notes"\n'
    )
    env = hooks_config(tmp_path, config)
    fake_server.script(say("first"), say("second"))
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="hello")
        ink.wait_event("run_end", stopReason="completed")
        mark = ink.mark()
        refused = ink.ok("prompt", text="my password is hunter2")
        restored = ink.wait_event("input_restored", after=mark)
        assert restored["restoredInput"][0]["inputId"] == refused["inputId"]
        assert "no secrets" in ink.wait_event("notice", after=mark)["text"]
        ink.wait_event("run_end", after=mark)
        ink.ok("prompt", text="bye")
        ink.wait_event("run_end", stopReason="completed", after=ink.mark() - 1)
    assert fake_server.requests[0].user_texts() == ["hello", "session notes\n\nbranch: main"]
    assert all("hunter2" not in text for text in fake_server.requests[1].user_texts())


def test_a_stop_hook_makes_the_model_go_on(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    checker = script(
        tmp_path,
        "stop.py",
        "import json, sys\nevent = json.load(sys.stdin)\n"
        "if not event['stop_hook_active']:\n"
        "    print('run the tests first', file=sys.stderr)\n"
        "    sys.exit(2)\n",
    )
    env = hooks_config(tmp_path, f'[[hooks.stop]]\ncommand = "{checker}"\n')
    fake_server.script(say("done"), say("tests pass, done"))
    with start(fake_server, env, project) as ink:
        ink.ok("prompt", text="fix it")
        ink.wait_event("run_end", stopReason="completed")
    assert fake_server.requests[1].user_texts()[-1] == "[stop hook] run the tests first"
    assert len(fake_server.requests) == 2


def test_claude_code_answers_are_understood() -> None:
    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}
    assert (read_answer(json.dumps(deny)).decision, read_answer(json.dumps(deny)).reason) == ("deny", "no")
    assert read_answer('{"decision": "approve"}').decision == "allow"
    assert read_answer('{"continue": false, "stopReason": "halt"}').reason == "halt"
    assert read_answer("plain words\n").context == "plain words"
    assert read_answer('{"systemMessage": "hi"}').message == "hi"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[[hooks.pre_tol]]\ncommand = "x"\n', ":1: unknown hook event 'pre_tol'"),
        ("max_tokens = 100\n[[hooks.stop]]\ntimeout = 5\n", ":2: a hook needs command"),
        ('[[hooks.pre_tool]]\ncommand = "x"\nmatcher = "("\n', "is not a valid pattern"),
        ('[[hooks.stop]]\ncommand = "x"\ntimeout = 0\n', "timeout must be a number of seconds"),
    ],
)
def test_a_malformed_hook_is_a_config_error_with_its_line(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(")):
        parse_config(tmp_path / "config.toml", text.encode())
