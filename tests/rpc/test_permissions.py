"""The permission round trip through RPC: ``permission_request`` events answered by the ``permission``
command (CONTRACT.md), with ``--permission-mode ask`` so that a bash command needs an answer.

Each answer is checked by what happened on disk (the command ran or not) and by what the model saw next.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc
from tests.waiting import wait_for_file

ASK = ("--permission-mode", "ask")
TOUCH = "echo ran > out.txt"


def asked(ink: RpcClient, call_id: str) -> dict[str, object]:
    request = ink.wait_event("permission_request", toolCallId=call_id)
    assert request["name"] == "bash" and request["args"] == {"command": TOUCH}
    assert isinstance(request["requestId"], str)
    return request


@pytest.mark.parametrize("decision", ["allow", "always"])
def test_an_allowed_call_runs(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path, decision: str
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("done"))
    ink = start_rpc(*ASK)
    ink.ok("prompt", text="make the file")
    request = asked(ink, "c1")
    state = ink.ok("get_state")
    assert [q["requestId"] for q in state["permissionRequests"]] == [request["requestId"]]
    assert ink.ok("permission", requestId=request["requestId"], decision=decision) is None
    resolved = ink.wait_event("permission_resolved", requestId=request["requestId"])
    assert resolved["decision"] == decision
    end = ink.wait_event("tool_end", toolCallId="c1")
    assert end["result"]["isError"] is False
    assert (project / "out.txt").read_text() == "ran\n"
    ink.wait_event("run_end", stopReason="completed")
    again = ink.fail("permission", requestId=request["requestId"], decision="allow")  # answered already
    assert "no open permission request" in again


def test_a_denied_call_does_not_run_and_the_model_is_told(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("understood"))
    ink = start_rpc(*ASK)
    ink.ok("prompt", text="make the file")
    request = asked(ink, "c1")
    ink.ok("permission", requestId=request["requestId"], decision="deny")
    end = ink.wait_event("tool_end", toolCallId="c1")
    assert end["result"]["isError"] is True and "denied" in end["result"]["output"]
    assert ink.events("tool_running") == []  # R4: refused before running
    ink.wait_event("run_end", stopReason="completed")
    assert not (project / "out.txt").exists()
    [(call_id, output)] = fake_server.requests[1].tool_results()
    assert call_id == "c1" and "denied" in output


def test_an_unanswered_question_times_out_into_a_denial(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "inkhome"
    home.mkdir()
    (home / "config.toml").write_text("permission_timeout = 0.3\n")
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("ok"))
    with RpcClient.start(provider_args(fake_server, "openai", *ASK), ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="make the file")
        request = asked(ink, "c1")
        resolved = ink.wait_event("permission_resolved", requestId=request["requestId"])
        assert resolved["decision"] == "timeout"
        end = ink.wait_event("tool_end", toolCallId="c1")
        assert end["result"]["isError"] is True and "did not answer" in end["result"]["output"]
        ink.wait_event("run_end", stopReason="completed")
        assert not (project / "out.txt").exists()
        assert ink.violations == []


def test_an_abort_while_asking_cancels_the_question(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"))
    ink = start_rpc(*ASK)
    ink.ok("prompt", text="make the file")
    request = asked(ink, "c1")
    ink.ok("abort")
    assert ink.wait_event("permission_resolved", requestId=request["requestId"])["decision"] == "cancelled"
    end = ink.wait_event("run_end")
    assert end["stopReason"] == "aborted"
    assert ink.wait_event("tool_end", toolCallId="c1")["result"]["isError"] is True
    assert not (project / "out.txt").exists()
    assert ink.ok("get_state")["permissionRequests"] == []
    assert "no open permission request" in ink.fail(
        "permission", requestId=request["requestId"], decision="allow"
    )


def test_a_bang_line_is_the_users_own_command_and_is_not_asked_about(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    ink = start_rpc(*ASK)
    bang = ink.ok("prompt", text=f"!{TOUCH}")["inputId"]
    assert ink.wait_event("bang_end", inputId=bang)["exitCode"] == 0
    assert wait_for_file(project / "out.txt") == "ran"
    assert ink.events("permission_request") == []


def test_only_a_permission_command_answers_a_question(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    """R38 over RPC: input sent while a question is open is queued input, never an answer; a malformed
    answer is refused and leaves the question open. The question shows the rule "always" would store."""
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("done"))
    ink = start_rpc(*ASK)
    ink.ok("prompt", text="make the file")
    request = asked(ink, "c1")
    assert request["remember"] == f"bash({TOUCH})"
    for kind, text in (("prompt", "y"), ("steer", "always"), ("follow_up", "allow"), ("prompt", "a")):
        assert ink.ok(kind, text=text)["queued"] is True
    assert "decision" in ink.fail("permission", requestId=request["requestId"], decision="yes")
    assert "requestId" in ink.fail("permission", decision="always")
    state = ink.ok("get_state")
    assert [q["requestId"] for q in state["permissionRequests"]] == [request["requestId"]]
    assert [q["text"] for q in state["queue"]] == ["y", "always", "allow", "a"]
    assert ink.events("permission_resolved") == [] and not (project / "out.txt").exists()
    ink.ok("abort")
    assert ink.wait_event("permission_resolved", requestId=request["requestId"])["decision"] == "cancelled"
    ink.wait_event("run_end", stopReason="aborted")
    assert not (project / "out.txt").exists()
