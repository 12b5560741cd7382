"""Leaving the sandbox for one call, in each frontend (R41): print mode refuses it unless a
``bash-unsandboxed`` rule allows it; RPC, ACP and the terminal UI ask, the question saying that the call
leaves the sandbox and why, and an answer lets it write where the sandbox would not. Real ink processes,
the real sandbox, the fake model server; the target is outside every folder the sandbox lets a command
write."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.acp.conftest import StartAcp, open_session, start_acp, text_prompt
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, Reply, call, say, tool_call
from tests.jsonl_client import provider_args
from tests.rpc.conftest import StartRpc, start_rpc
from tests.sandbox.conftest import outside
from tests.tui.conftest import StartInk, start_ink

__all__ = ["outside", "start_acp", "start_ink", "start_rpc"]  # fixtures of the frontends' suites

REASON = "the release notes live outside the project"


def leave(target: Path) -> dict[str, object]:
    return {"command": f"echo x > {shlex.quote(str(target))}", "sandbox": False, "reason": REASON}


def test_R41_print_mode_refuses_leaving_unless_a_rule_allows_it(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, outside: Path
) -> None:
    target = outside / "escaped"
    args = leave(target)
    env = ink_env(tmp_path)
    for allow in ((), ("--allow", f"bash({args['command']})")):  # no rule, then a plain allow: refused
        fake_server.script(call("bash", args, id="c1"), say("could not"))
        done = run_ink(
            ["-p", *provider_args(fake_server, "openai", "--permission-mode", "yolo", *allow), "go"],
            env,
            project,
        )
        assert done.returncode == 0, done.stderr
        assert not target.exists()
        rule = f"bash-unsandboxed({args['command']})"
        assert f"--allow {shlex.quote(rule)}" in done.stderr  # the warning names what would allow it
        [(_, result)] = fake_server.requests[-1].tool_results()
        assert "outside the sandbox" in result and "nobody can answer" in result
    fake_server.script(call("bash", args, id="c1"), say("done"))
    allowed = ("--allow", f"bash-unsandboxed({args['command']})")
    done = run_ink(["-p", *provider_args(fake_server, "openai", *allowed), "go"], env, project)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "x\n"  # out of the sandbox by the rule, in ask mode, nobody asked
    [(_, result)] = fake_server.requests[-1].tool_results()
    assert "[ran outside the sandbox" in result


def test_R41_rpc_asks_and_always_stores_the_unsandboxed_rule(
    fake_server: FakeModelServer,
    start_rpc: StartRpc,
    project: Path,
    outside: Path,
) -> None:
    target = outside / "escaped"
    args = leave(target)
    fake_server.script(call("bash", args, id="c1"), call("bash", args, id="c2"), say("done"))
    ink = start_rpc("--permission-mode", "yolo")  # yolo too asks before a call leaves the sandbox
    assert ink.ok("get_state")["sandbox"] == "workspace-write"
    ink.ok("prompt", text="write the notes")
    request = ink.wait_event("permission_request", toolCallId="c1")
    assert request["reason"] == f"it asks to run OUTSIDE the sandbox: {REASON}"
    assert request["remember"] == f"bash-unsandboxed({args['command']})"
    assert not target.exists()
    ink.ok("permission", requestId=request["requestId"], decision="always")
    end = ink.wait_event("tool_end", toolCallId="c1")
    assert end["result"]["isError"] is False and target.read_text() == "x\n"
    assert end["result"]["details"][-1] | {"kind": "", "target": ""} == {
        "type": "sandbox",
        "sandbox": "off",
        "kind": "",
        "target": "",
    }
    second = ink.wait_event("tool_end", toolCallId="c2")  # the stored rule answers: no second question
    assert second["result"]["isError"] is False
    ink.wait_event("run_end", stopReason="completed")
    assert len(ink.events("permission_request")) == 1


def test_R41_acp_asks_with_the_reason_and_a_deny_keeps_it_inside(
    fake_server: FakeModelServer,
    start_acp: StartAcp,
    project: Path,
    outside: Path,
) -> None:
    target = outside / "escaped"
    fake_server.script(call("bash", leave(target), id="b1"), say("understood"))
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("write the notes"))
    question = ink.wait_request("session/request_permission")
    asked = question["params"]["toolCall"]
    assert asked["title"].startswith("bash (outside the sandbox) echo x >")
    said = [c["content"]["text"] for c in asked.get("content", []) if c["content"]["type"] == "text"]
    assert said == [f"it asks to run OUTSIDE the sandbox: {REASON}"]
    ink.answer(question["id"], {"outcome": {"outcome": "selected", "optionId": "deny"}})
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert not target.exists()
    (_, result), *_ = fake_server.requests[1].tool_results()
    assert "denied permission" in result and "outside the sandbox" in result


def test_R41_the_terminal_ui_asks_and_shows_the_sandbox_in_the_status_line(
    fake_server: FakeModelServer,
    start_ink: StartInk,
    project: Path,
    outside: Path,
) -> None:
    target = outside / "escaped"
    args = leave(target)
    fake_server.script(Reply([tool_call("bash", args, id="c1")]), say("Written."))
    ink = start_ink(permission_mode="yolo")
    ink.wait_text("sandbox workspace-write")  # the status line says what commands run in
    ink.type_line("write the notes")
    ink.wait_text("it asks to run OUTSIDE the sandbox")
    screen = " ".join(ink.text().split())  # the question may wrap
    assert REASON in screen and "bash-unsandboxed(" in screen
    assert not target.exists()
    ink.answer("y")
    ink.wait_text("Written.")
    assert target.read_text() == "x\n"
    ink.send("\x1b[Z")  # Shift+Tab switches the permission mode, never the sandbox
    ink.wait_text("ask · gpt-4.1 · sandbox workspace-write")


def test_R41_read_only_refuses_workspace_writes_end_to_end(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(call("bash", {"command": "echo x > made.txt"}, id="c1"), say("could not"))
    flags = provider_args(fake_server, "openai", "--permission-mode", "yolo", "--sandbox", "read-only")
    done = run_ink(["-p", "--output-format", "stream-json", *flags, "go"], ink_env(tmp_path), project)
    assert done.returncode == 0, done.stderr
    assert not (project / "made.txt").exists()
    ends = [json.loads(line) for line in done.stdout.splitlines() if '"tool_end"' in line]
    [end] = [e for e in ends if e.get("type") == "tool_end"]
    assert {"type": "sandbox", "sandbox": "denied", "kind": "write", "target": "made.txt"} in end["result"][
        "details"
    ]


def test_R41_print_mode_is_sandboxed_by_default_and_off_turns_it_off(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, outside: Path
) -> None:
    target = outside / "escaped"
    command = {"command": f"echo x > {shlex.quote(str(target))}"}
    env = ink_env(tmp_path)
    fake_server.script(call("bash", command, id="c1"), say("could not"))
    done = run_ink(
        ["-p", *provider_args(fake_server, "openai", "--permission-mode", "yolo"), "go"], env, project
    )
    assert done.returncode == 0 and not target.exists(), done.stderr
    [(_, result)] = fake_server.requests[-1].tool_results()
    assert "[sandbox: denied. The sandbox (workspace-write) refused to write" in result
    fake_server.script(call("bash", command, id="c1"), say("done"))
    flags = provider_args(fake_server, "openai", "--permission-mode", "yolo", "--sandbox", "off")
    done = run_ink(["-p", *flags, "go"], env, project)
    assert done.returncode == 0 and target.read_text() == "x\n", done.stderr


def test_R41_the_status_line_says_no_sandbox_when_it_is_off() -> None:
    from ink.frontends.tui.panels import Status, sandbox_label, status_fragments

    assert [sandbox_label(m) for m in ("workspace-write", "read-only", "off")] == [
        "sandbox workspace-write",
        "sandbox read-only",
        "no sandbox",
    ]
    status = Status("idle", "", 0.0, "gpt-4.1", "~/proj", "1 in · 1 out", "", "", "ask", "no sandbox")
    right = "".join(text for _style, text in status_fragments(status, 120))
    assert "ask · gpt-4.1 · no sandbox · ~/proj" in right
