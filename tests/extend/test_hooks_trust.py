"""Hooks cannot talk a "no" round (R37) and fail closed (R39): a real ``ink -p`` against the fake model
server with real hook scripts, and ``HookSet`` with real hook processes for the ways a hook can fail."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ink.agent.abort import AbortSignal
from ink.ai.messages import ToolCall
from ink.config.hooks import HookSpec
from ink.config.matchers import matches
from ink.extend.hook_approval import ProjectHookApproval
from ink.extend.hook_events import arguments_from_hook
from ink.extend.hook_process import STDERR_CAP, STDOUT_CAP
from ink.extend.hooks import HookContext, HookSet
from ink.tools.processes import ProcessRegistry
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, Reply, call, say, tool_call
from tests.jsonl_client import provider_args

PY = sys.executable
CLAUDE_ALLOW = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}


def with_hook(tmp_path: Path, name: str, script: str, **table: object) -> dict[str, str]:
    """ink's environment with one pre_tool hook: ``script`` run by Python, reading the event on stdin."""
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    path = tmp_path / name
    path.write_text(script)
    extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())
    (home / "config.toml").write_text(f'[[hooks.pre_tool]]\ncommand = "{PY} {path}"\n{extra}')
    return env


def printed(server: FakeModelServer, env: dict[str, str], project: Path, *flags: str) -> str:
    ran = run_ink(["-p", "go", *provider_args(server, "openai", *flags)], env, project)
    assert ran.returncode == 0, ran.stderr
    return ran.stderr


def first_result(server: FakeModelServer) -> str:
    [(_, result)] = server.requests[1].tool_results()
    return result


@pytest.mark.parametrize("answer", [CLAUDE_ALLOW, {"decision": "approve"}])
@pytest.mark.parametrize("mode", ["ask", "yolo"])
def test_a_hooks_allow_never_beats_a_deny_rule(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, answer: dict[str, object], mode: str
) -> None:
    # R37 (issue 23 item 2): --deny wins over permissionDecision "allow" and the legacy "approve"
    env = with_hook(tmp_path, "allow.py", f"print({json.dumps(json.dumps(answer))})")
    fake_server.script(call("bash", {"command": "touch denied"}, id="c1"), say("ok"))
    printed(fake_server, env, project, "--permission-mode", mode, "--deny", "bash(touch *)")
    assert not (project / "denied").exists()
    assert "forbidden by the permission rule bash(touch *)" in first_result(fake_server)


def test_a_deny_longer_than_the_cap_still_denies(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # R39 (issue 23 item 3): an answer past the cap is not cut into context: the call is blocked
    deny = {"decision": "deny", "reason": "r" * (STDOUT_CAP + 10)}
    env = with_hook(tmp_path, "deny.py", f"import json; print(json.dumps({deny!r}))")
    fake_server.script(call("bash", {"command": "touch ran"}, id="c1"), say("ok"))
    stderr = printed(fake_server, env, project, "--permission-mode", "yolo")
    assert not (project / "ran").exists()
    result = first_result(fake_server)
    assert f"answered more than {STDOUT_CAP} characters" in result and "blocked" in result
    assert len(result) < 2000 and "rrrrrrrrrr" not in stderr


def test_an_updated_input_runs_as_changed_and_the_model_is_told(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # R37 (issue 23 item 4): a sanitising hook's updatedInput is what runs, never silently ignored
    rewrite = {
        "hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "touch safe"}}
    }
    env = with_hook(tmp_path, "rewrite.py", f"print({json.dumps(json.dumps(rewrite))})")
    fake_server.script(call("bash", {"command": "touch unsafe"}, id="c1"), say("ok"))
    stderr = printed(fake_server, env, project)  # ask mode: the hook's allow covers the new call
    assert (project / "safe").exists() and not (project / "unsafe").exists()
    assert (
        'a pre_tool hook changed this call\'s arguments; it ran as {"command": "touch safe"}'
        in first_result(fake_server)
    )
    assert "a pre_tool hook changed the bash call" in stderr


def test_an_updated_input_is_judged_again_by_the_deny_rules(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # R37: the new call is judged from the start: a deny rule on it refuses it, in yolo too
    rewrite = {
        "hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "rm notes.txt"}}
    }
    env = with_hook(tmp_path, "rewrite.py", f"print({json.dumps(json.dumps(rewrite))})")
    fake_server.script(call("bash", {"command": "ls"}, id="c1"), say("ok"))
    printed(fake_server, env, project, "--permission-mode", "yolo", "--deny", "bash(rm *)")
    assert (project / "notes.txt").exists()
    assert "forbidden by the permission rule bash(rm *)" in first_result(fake_server)


def test_a_sub_agents_call_falls_under_the_deny_rules_too(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    # R37: a sub-agent's type and a hook's allow do not take a call past a deny rule, in yolo
    env = with_hook(tmp_path, "allow.py", f"print({json.dumps(json.dumps(CLAUDE_ALLOW))})")
    sub_call = tool_call("bash", {"command": "touch by-sub"}, id="s1")
    delegate = tool_call("task", {"description": "d", "prompt": "do it", "agent": "general"}, id="t1")

    def answer(request: Any) -> Reply:
        if request.system.startswith("You are ink"):
            return say("done") if request.tool_results() else Reply([delegate])
        return say("sub done") if request.tool_results() else Reply([sub_call])

    fake_server.responder = answer
    printed(fake_server, env, project, "--permission-mode", "yolo", "--deny", "bash(touch *)")
    assert not (project / "by-sub").exists()
    refused = [r for request in fake_server.requests for _, r in request.tool_results() if "touch" in r]
    assert refused and "forbidden by the permission rule bash(touch *)" in refused[0]


# -- the ways a pre_tool hook can fail: each blocks the call (R39) ----------------------------------


def hook_set(tmp_path: Path, hooks: Sequence[HookSpec], notes: list[str]) -> HookSet:
    context = HookContext(tmp_path, ProcessRegistry(), 0.2, notes.append, lambda: (None, None))
    return HookSet(hooks, context, ProjectHookApproval(hooks, tmp_path / "inkhome", None, notes.append))


def spec(command: str, timeout: float = 30.0, matcher: str | None = None, scope: str = "user") -> HookSpec:
    return HookSpec("pre_tool", command, "config.toml:1", matcher, timeout, scope)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("exit 1", "failed with exit status 1"),
        ("sleep 30", "did not finish within 0.5 s"),
        ('echo \'{"decision": "deny", "reason": \'', "starts like JSON but is not a JSON object"),
        ("echo '[\"deny\"]'", ""),  # not an object, not an answer: plain text (context), nothing said
        ('echo \'{"decision": "dney"}\'', "a decision ink does not know"),
        ('echo \'{"hookSpecificOutput": {"updatedInput": "rm -rf /"}}\'', "updatedInput that is not"),
        ("no-such-program-ink-test", "failed with exit status 127"),
    ],
)
async def test_a_failing_pre_tool_hook_blocks_the_call(tmp_path: Path, command: str, why: str) -> None:
    # R39: a crash, a timeout, an unreadable answer: "deny" with the reason, and the user is told
    notes: list[str] = []
    hooks = hook_set(tmp_path, [spec(command, timeout=0.5)], notes)
    answer = await hooks.pre_tool(ToolCall("c1", "bash", {"command": "ls"}), AbortSignal())
    if not why:
        assert answer.decision is None
        return
    assert answer.decision == "deny" and why in answer.reason and "the call is blocked" in answer.reason
    assert any(why in note for note in notes)


async def test_a_hooks_stderr_is_kept_bounded(tmp_path: Path) -> None:
    # R39 (issue 23 item 11): 100 MB of stderr becomes a bounded reason, head and tail kept
    command = "echo first-line >&2; head -c 100000000 /dev/zero | tr '\\0' x >&2; echo >&2 last-line; exit 2"
    answer = await hook_set(tmp_path, [spec(command)], []).pre_tool(
        ToolCall("c1", "bash", {"command": "ls"}), AbortSignal()
    )
    assert answer.decision == "deny"
    assert len(answer.reason.encode()) < STDERR_CAP + 1000
    assert answer.reason.startswith("first-line") and answer.reason.endswith("last-line")
    assert "cut from the middle" in answer.reason


async def test_later_hooks_read_the_changed_input_and_an_earlier_allow_lapses(tmp_path: Path) -> None:
    # R37: an allow given for the input before a change does not cover the changed one
    allow = spec('echo \'{"decision": "allow"}\'')
    rewrite = spec("""echo '{"hookSpecificOutput": {"updatedInput": {"command": "echo changed"}}}'""")
    record = "import json,sys; print(json.load(sys.stdin)['tool_input']['command'], file=open('seen','w'))"
    seen = spec(f'{PY} -c "{record}"')
    answer = await hook_set(tmp_path, [allow, rewrite, seen], []).pre_tool(
        ToolCall("c1", "bash", {"command": "ls"}), AbortSignal()
    )
    assert answer.decision is None and answer.updated_input == {"command": "echo changed"}
    assert (tmp_path / "seen").read_text().strip() == "echo changed"


def test_claude_code_field_names_in_an_updated_input_are_taken_back() -> None:
    # R37: an Edit hook written for Claude Code answers file_path/old_string/new_string
    args = {"path": "a.py", "old_text": "x", "new_text": "y"}
    shown = {"path": "a.py", "file_path": "/w/a.py", "old_string": "x", "new_string": "z", "old_text": "x"}
    assert arguments_from_hook(shown, args, Path("/w")) == {"path": "a.py", "old_text": "x", "new_text": "z"}
    moved = {"file_path": "/w/b.py", "old_string": "x", "new_string": "y"}
    assert arguments_from_hook(moved, args, Path("/w")) == {
        "path": "/w/b.py",
        "old_text": "x",
        "new_text": "y",
    }


# -- matchers (R39, issue 23 item 7) ----------------------------------------------------------------


@pytest.mark.timeout(30)
def test_no_matcher_can_hold_ink() -> None:
    # R39: Python's re needs ~0.5 s for 22 characters here and doubles with each one; RE2 is linear
    started = time.monotonic()
    assert not matches("(.|[a-z_])*Z", "mcp__" + "a_b" * 3000)
    assert not matches("(a|aa)+b", "a" * 10000)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        ("Bash", "bash", True),
        ("Edit|Write", "write", True),
        ("Edit|Write", "bash", False),
        ("mcp__.*", "mcp__github__create_issue", True),
        ("mcp__github__.*", "mcp__gitlab__x", False),
        ("Notebook.*", "NotebookEdit", True),
        ("*", "anything", True),
        ("", "anything", True),
        ("Bash", "Bashful", False),
    ],
)
def test_claude_code_matchers_keep_working(matcher: str, name: str, expected: bool) -> None:
    assert matches(matcher, name) is expected


async def test_an_unapproved_project_hook_is_not_evaluated_not_even_its_matcher(tmp_path: Path) -> None:
    # R39: the approval comes before anything of a project's hook; without it (nobody to ask) nothing
    # of it runs, and the question is put even when its matcher would not have matched
    notes: list[str] = []
    project = spec("touch ran", matcher="(.|[a-z_])*Z", scope="project")
    hooks = hook_set(tmp_path, [project], notes)
    answer = await hooks.pre_tool(ToolCall("c1", "bash", {"command": "ls"}), AbortSignal())
    assert answer.decision is None and not (tmp_path / "ran").exists()
    assert any("project hooks run only once you approved them" in note for note in notes)
