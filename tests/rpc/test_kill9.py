"""Issue 6: ``kill -9`` of ``ink --mode rpc`` at several moments of a scripted run; every time
``--continue`` loads a history that the fake server's strict mode accepts (the next request succeeds),
in both protocols.

Moments: while a reply streams (held at a gate), while a tool runs (a real ``sleep`` in bash), and just
after a tool result (the next reply held at its start). The session file is written as things happen,
so what was there at the kill is what the next process finds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, Gate, Reply, call, say, text
from tests.jsonl_client import provider_args
from tests.processes import kill_tree
from tests.rpc.client import RpcClient
from tests.waiting import wait_for_file

PROTOCOLS = ["openai", "anthropic"]
YOLO = ("--permission-mode", "yolo")


def killed_while_streaming(server: FakeModelServer, ink: RpcClient, project: Path) -> None:
    gate = Gate()
    server.script(Reply([text("partial "), gate, text("never sent")]))
    ink.ok("prompt", text="first")
    gate.wait_reached()
    ink.wait_event("text_delta", text="partial ")
    kill9(ink)
    gate.open()


def killed_during_a_tool(server: FakeModelServer, ink: RpcClient, project: Path) -> None:
    server.script(call("bash", {"command": "echo $$ > shell.pid; sleep 60"}, id="c1"))
    ink.ok("prompt", text="first")
    shell = int(wait_for_file(project / "shell.pid"))
    ink.wait_event("tool_start", toolCallId="c1")
    kill9(ink)
    kill_tree(shell)  # nobody is left to end it: the orphan is the test's to clean up


def killed_after_a_tool_result(server: FakeModelServer, ink: RpcClient, project: Path) -> None:
    gate = Gate()
    server.script(call("read", {"path": "notes.txt"}, id="c1"), Reply([gate, text("never sent")]))
    ink.ok("prompt", text="first")
    ink.wait_event("tool_end", toolCallId="c1")
    gate.wait_reached()  # the next request is out: the result was in the history before it
    kill9(ink)
    gate.open()


def kill9(ink: RpcClient) -> None:
    ink.proc.kill()
    assert ink.wait_exit() == -9


MOMENTS: dict[str, Callable[[FakeModelServer, RpcClient, Path], None]] = {
    "streaming": killed_while_streaming,
    "during_a_tool": killed_during_a_tool,
    "after_a_tool_result": killed_after_a_tool_result,
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("moment", list(MOMENTS))
def test_continue_after_kill_9_loads_a_history_the_strict_server_accepts(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str, moment: str
) -> None:
    args, env = provider_args(fake_server, protocol, *YOLO), ink_env(tmp_path)
    with RpcClient.start(args, env, project) as first:
        session_id = first.ok("get_state")["sessionId"]
        MOMENTS[moment](fake_server, first, project)
    fake_server.clear_script()
    before = len(fake_server.requests)
    fake_server.script(say("resumed fine"))
    with RpcClient.start([*args, "--continue"], env, project) as again:
        assert again.ok("get_state")["sessionId"] == session_id
        messages = again.ok("get_messages")["messages"]
        assert messages[0]["role"] == "user" and messages[0]["text"] == "first"
        calls = {
            b["id"]
            for m in messages
            if m["role"] == "assistant"
            for b in m["content"]
            if b["type"] == "tool_call"
        }
        results = [m["toolCallId"] for m in messages if m["role"] == "tool_result"]
        assert sorted(results) == sorted(calls)  # R19: every call has exactly one result
        again.ok("prompt", text="second")
        end = again.wait_event("run_end")
        assert end["stopReason"] == "completed", (end, again.stderr)
        again.close_stdin()
        assert again.wait_exit() == 0
    request = fake_server.requests[before]
    assert request.wait_finished() == "completed", request.error_message  # strict mode accepted the history
    assert request.user_texts()[0] == "first" and request.user_texts()[-1] == "second"
    if moment != "streaming":
        assert [cid for cid, _ in request.tool_results()] == ["c1"]


def test_print_mode_continues_after_kill_9_too(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    env = ink_env(tmp_path)
    with RpcClient.start(provider_args(fake_server, "anthropic", *YOLO), env, project) as first:
        killed_during_a_tool(fake_server, first, project)
    fake_server.clear_script()
    fake_server.script(say("resumed in print mode"))
    base = fake_server.base_url("anthropic")
    done = run_ink(
        ["-p", "--continue", "--provider", "anthropic", "--base-url", base, "--api-key", "k", "second"],
        env,
        project,
    )
    assert (done.returncode, done.stdout) == (0, "resumed in print mode\n"), done.stderr
    assert fake_server.last.wait_finished() == "completed"
