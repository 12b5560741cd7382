"""A reply cut by the model's output token limit says so, and a cut or invalid tool call is answered
with an error the model can correct (issue 11; README "Exit status", docs/rpc.md ``run_end``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ink.store import load_session
from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Reply, say, text, tool_call
from tests.hardening.inkbytes import assert_all_accepted, print_args, run_bytes
from tests.rpc.conftest import StartRpc

PROTOCOLS = ["openai", "anthropic"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_print_mode_prints_a_cut_answer_warns_and_exits_4(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    fake_server.script(Reply([text("The three steps are: first")], stop="length"))
    done = run_bytes([*print_args(fake_server, protocol), "explain"], ink_env(tmp_path), project)
    assert (done.returncode, done.stdout) == (4, b"The three steps are: first\n")
    assert b"cut off at the model's output token limit (max_tokens)" in done.stderr


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_stream_json_marks_the_cut_reply_and_the_run_end(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    fake_server.script(Reply([text("partial")], stop="length"), say("whole"))
    env = ink_env(tmp_path)
    args = print_args(fake_server, protocol, "--output-format", "stream-json")
    cut = run_bytes([*args, "explain"], env, project)
    events = [json.loads(line) for line in cut.stdout.splitlines()]
    [end] = [e for e in events if e["type"] == "message_end"]
    assert end["message"]["stopReason"] == "length"
    assert events[-1]["type"] == "run_end" and events[-1]["truncated"] is True
    assert cut.returncode == 4
    whole = run_bytes([*args, "--continue", "go on"], env, project)
    assert whole.returncode == 0
    assert "truncated" not in json.loads(whole.stdout.splitlines()[-1])


def test_rpc_run_end_says_the_reply_was_cut(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    fake_server.script(Reply([text("partial")], stop="length"))
    ink = start_rpc()
    ink.ok("prompt", text="explain")
    assert ink.wait_event("run_end")["truncated"] is True


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_tool_call_cut_off_mid_arguments_gets_an_error_result_and_the_run_goes_on(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    cut = '{"path": "report.md", "content": "# A long report\\n\\nIt begins'
    fake_server.script(
        Reply([text("Writing it."), tool_call("write", cut, id="c1")], stop="length"),
        Reply([tool_call("write", {"path": "report.md", "content": "short"}, id="c2")]),
        say("written in pieces"),
        say("next"),
    )
    env = ink_env(tmp_path)
    done = run_bytes([*print_args(fake_server, protocol), "write the report"], env, project)
    assert (done.returncode, done.stdout) == (0, b"written in pieces\n"), done.stderr
    [(call_id, output)] = fake_server.requests[1].tool_results()
    assert call_id == "c1" and output.startswith("Not executed: this call has malformed JSON arguments")
    assert "smaller pieces" in output
    assert (project / "report.md").read_text() == "short"
    again = run_bytes(print_args(fake_server, protocol, "--continue", "next"), env, project)
    assert again.returncode == 0, again.stderr
    assert_all_accepted(fake_server, 4)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_nested_600_deep_is_refused_and_written_with_its_result(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    deep = '{"path": ' + '{"a": ' * 600 + "1" + "}" * 600 + "}"
    fake_server.script(Reply([tool_call("read", deep, id="deep1")]), say("ok"), say("resumed"))
    env = ink_env(tmp_path)
    done = run_bytes([*print_args(fake_server, protocol), "go"], env, project)
    assert (done.returncode, done.stdout) == (0, b"ok\n"), done.stderr
    [(_, output)] = fake_server.requests[1].tool_results()
    assert "nested deeper than 100 levels" in output
    [session] = (tmp_path / "inkhome" / "sessions").rglob("*.jsonl")
    messages = load_session(session).messages
    calls = [c.id for m in messages if m.role == "assistant" for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if m.role == "tool_result"]
    assert calls == results == ["deep1"]
    again = run_bytes(print_args(fake_server, protocol, "--continue", "more"), env, project)
    assert again.returncode == 0, again.stderr
    assert_all_accepted(fake_server, 3)
