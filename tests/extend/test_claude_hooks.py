"""Claude Code hook parity (issue 27, docs/hooks.md "Claude Code's hooks in ink"): hook scripts written the
way Claude Code's documentation writes them, run by a real ink against the fake model server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args
from tests.mcp_tools.servers import SERVER
from tests.rpc.client import RpcClient

PY = sys.executable
# Claude Code's docs: "continue": false stops Claude; stopReason is shown to the user, not to the model.
STOP_ON_RM = """
import json, sys
event = json.load(sys.stdin)
if "rm -rf" in event["tool_input"].get("command", ""):
    print(json.dumps({"continue": False, "stopReason": "rm -rf needs a human; stopping here"}))
"""
# A PostToolUse logger reading Claude Code's fields (the shape scripts like this one expect).
LOG_EVENT = """
import json, os, sys
event = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a") as log:
    log.write(json.dumps(event) + "\\n")
"""


def user_config(tmp_path: Path, text: str, **env_extra: str) -> dict[str, str]:
    env = ink_env(tmp_path) | env_extra
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)
    return env


def script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return f"{PY} {path}"


def logged(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_continue_false_stops_the_run_as_an_interrupt_and_says_why(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    stop = script(tmp_path, "stop.py", STOP_ON_RM)
    env = user_config(tmp_path, f'[[hooks.pre_tool]]\nmatcher = "*"\ncommand = "{stop}"\n')
    fake_server.script(
        call("bash", {"command": f"touch {project / 'before'}"}, id="c0"),
        call("bash", {"command": "rm -rf build; touch removed"}, id="c1"),
        say("never asked for"),
    )
    args = provider_args(fake_server, "openai", "--permission-mode", "yolo")
    with RpcClient.start(args, env, project) as ink:
        ink.ok("prompt", text="clean up")
        ink.wait_event("tool_end", toolCallId="c0")
        ink.ok("follow_up", text="and then the docs")  # queued: handed back as a user stop hands it back
        end = ink.wait_event("run_end")
    assert end["stopReason"] == "aborted"
    assert end["receipt"]["reason"] == "hook"
    assert end["receipt"]["message"] == "rm -rf needs a human; stopping here"
    assert [i["text"] for i in end["restoredInput"]] == ["and then the docs"]
    assert (project / "before").exists() and not (project / "removed").exists()
    assert len(fake_server.requests) == 2  # the run ended: the model was not asked again


def test_continue_false_in_print_mode_ends_like_an_interrupt_with_the_reason(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    stop = script(tmp_path, "stop.py", STOP_ON_RM)
    env = user_config(tmp_path, f'[[hooks.pre_tool]]\nmatcher = ""\ncommand = "{stop}"\n')
    fake_server.script(call("bash", {"command": "rm -rf /tmp/x"}, id="c1"), say("unused"))
    ran = run_ink(
        ["-p", "go", *provider_args(fake_server, "openai", "--permission-mode", "yolo")], env, project
    )
    assert ran.returncode == 130, ran.stderr
    assert "stopped by a hook: rm -rf needs a human; stopping here" in ran.stderr


def test_hooks_read_the_permission_mode_and_claude_codes_tool_response(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, marks: Path
) -> None:
    log = marks / "events.jsonl"  # hooks run in the sandbox: their marks go where it lets them write
    logger = script(tmp_path, "log.py", LOG_EVENT)
    config = (
        f'[[hooks.pre_tool]]\ncommand = "{logger}"\n'
        f'[[hooks.post_tool]]\nmatcher = "Bash|Write|Edit|Read"\ncommand = "{logger}"\n'
    )
    env = user_config(tmp_path, config, HOOK_LOG=str(log))
    fake_server.script(
        call("bash", {"command": "echo out; echo err >&2; exit 3"}, id="b1"),
        call("write", {"path": "a.txt", "content": "one\n"}, id="w1"),
        call("edit", {"path": "a.txt", "old_text": "one", "new_text": "two"}, id="e1"),
        call("read", {"path": "a.txt"}, id="r1"),
        say("done"),
    )
    args = provider_args(fake_server, "openai", "--permission-mode", "yolo")
    ran = run_ink(["-p", "go", *args], env, project)
    assert ran.returncode == 0, ran.stderr
    events = logged(log)
    pre = [e for e in events if e["hook_event_name"] == "PreToolUse"]
    assert {e["permission_mode"] for e in pre} == {"bypassPermissions"}
    assert {e["ink_permission_mode"] for e in pre} == {"yolo"}
    post = {e["tool_name"]: e for e in events if e["hook_event_name"] == "PostToolUse"}
    bash = post["Bash"]["tool_response"]
    assert isinstance(bash, dict)
    assert "out" in bash["stdout"] and "err" in bash["stdout"] and bash["stderr"] == ""
    assert bash["interrupted"] is False and bash["isError"] is True and "output" in bash  # ink's kept
    path = str(project / "a.txt")
    assert post["Write"]["tool_response"] == post["Write"]["tool_response"] | {
        "type": "create",
        "filePath": path,
        "content": "one\n",
        "success": True,
    }
    edit = post["Edit"]["tool_response"]
    assert isinstance(edit, dict)
    assert (edit["filePath"], edit["oldString"], edit["newString"], edit["replaceAll"]) == (
        path,
        "one",
        "two",
        False,
    )
    read = post["Read"]["tool_response"]
    assert isinstance(read, dict) and read["type"] == "text"
    assert read["file"]["filePath"] == path and "two" in read["file"]["content"]


def mcp_config(hook: str, matcher: str) -> str:
    return (
        f"[mcp.servers.t]\ncommand = {json.dumps(PY)}\nargs = {json.dumps([SERVER, 'stdio'])}\n"
        "startup_timeout = 90\n"
        f'[[hooks.pre_tool]]\nmatcher = "{matcher}"\ncommand = "{hook}"\n'
    )


def test_mcp_tool_matchers_pick_a_servers_tools(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, marks: Path
) -> None:
    deny = script(tmp_path, "deny.py", "import sys\nprint('not this server', file=sys.stderr)\nsys.exit(2)\n")
    other = script(tmp_path, "other.py", f"open({str(marks / 'other')!r}, 'a').write('x')\n")
    config = (
        mcp_config(deny, "mcp__t__.*")
        + f'[[hooks.pre_tool]]\nmatcher = "mcp__t__wipe"\ncommand = "{other}"\n'
    )
    config += f'[[hooks.pre_tool]]\nmatcher = "mcp__other__.*"\ncommand = "{other}"\n'
    env = user_config(tmp_path, config)
    fake_server.script(
        call("mcp__t__echo", {"text": "hi"}, id="m1"),
        call("bash", {"command": f"touch {marks / 'bash'}"}, id="b1"),
        say("done"),
    )
    ran = run_ink(
        ["-p", "go", *provider_args(fake_server, "openai", "--permission-mode", "yolo")],
        env,
        project,
        timeout=180,
    )
    assert ran.returncode == 0, ran.stderr
    results = dict(fake_server.requests[2].tool_results())
    assert "not this server" in results["m1"]  # mcp__t__.* matched the server's tool
    assert (marks / "bash").exists() and "not this server" not in results["b1"]  # not ink's bash
    assert not (marks / "other").exists()  # mcp__t__wipe and mcp__other__.* matched nothing called


def test_a_claude_code_updated_input_in_its_field_names_redirects_a_write(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # Claude Code's documented shape: hookSpecificOutput with hookEventName, permissionDecision and an
    # updatedInput in Claude Code's field names (file_path): ink takes it back to its own (path), runs it
    # as a new call judged again (R37), and tells the model what ran
    redirect = """
import json, sys
event = json.load(sys.stdin)
path = event["tool_input"]["file_path"]
tool_input = dict(event["tool_input"], file_path=path.replace(".env", "env.example"))
answer = {"hookEventName": "PreToolUse", "permissionDecision": "allow",
          "permissionDecisionReason": "secrets stay out", "updatedInput": tool_input}
print(json.dumps({"hookSpecificOutput": answer}))
"""
    hook = script(tmp_path, "redirect.py", redirect)
    env = user_config(tmp_path, f'[[hooks.pre_tool]]\nmatcher = "Write"\ncommand = "{hook}"\n')
    fake_server.script(call("write", {"path": ".env", "content": "KEY=1\n"}, id="w1"), say("ok"))
    ran = run_ink(["-p", "go", *provider_args(fake_server, "openai")], env, project)  # ask mode
    assert ran.returncode == 0, ran.stderr
    assert (project / "env.example").read_text() == "KEY=1\n" and not (project / ".env").exists()
    [(_, result)] = fake_server.requests[1].tool_results()
    assert "a pre_tool hook changed this call's arguments" in result and "env.example" in result
