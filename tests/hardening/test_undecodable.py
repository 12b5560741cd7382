"""Undecodable text never poisons a session (issue 11; docs/security.md "Undecodable text").

Each case feeds bytes or code points that are not valid UTF-8 into one boundary of a real ``ink``
process (argv, stdin, a file name a tool lists, a model's reply, an RPC line, a session file) and then
proves that the next request is accepted by the strict fake server and that ``--continue`` works.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Reply, call, say, text, tool_call
from tests.hardening.inkbytes import assert_all_accepted, print_args, run_bytes
from tests.rpc.conftest import StartRpc

PROTOCOLS = ["openai", "anthropic"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_latin1_diff_on_stdin_is_sent_with_byte_escapes_and_the_session_continues(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    fake_server.script(say("reviewed"), say("again"))
    env = ink_env(tmp_path)
    first = run_bytes(print_args(fake_server, protocol), env, project, stdin=b"-caf\xe9\n+caf\xc3\xa9\n")
    assert (first.returncode, first.stdout) == (0, b"reviewed\n"), first.stderr
    assert fake_server.requests[0].user_texts() == ["-caf\\xe9\n+caf\u00e9\n"]
    second = run_bytes(print_args(fake_server, protocol, "--continue", "and now?"), env, project)
    assert (second.returncode, second.stdout) == (0, b"again\n"), second.stderr
    assert fake_server.requests[1].user_texts() == ["-caf\\xe9\n+caf\u00e9\n", "and now?"]
    assert_all_accepted(fake_server, 2)


def test_a_latin1_prompt_argument_is_sent_with_byte_escapes(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(say("ok"), say("ok again"))
    env = ink_env(tmp_path)
    first = run_bytes([*print_args(fake_server), b"r\xe9sum\xe9 please"], env, project)
    assert first.returncode == 0, first.stderr
    second = run_bytes(print_args(fake_server, "openai", "--continue", "more"), env, project)
    assert second.returncode == 0, second.stderr
    assert fake_server.requests[1].user_texts() == ["r\\xe9sum\\xe9 please", "more"]
    assert_all_accepted(fake_server, 2)


@pytest.mark.parametrize("tool", ["ls", "glob", "bash"])
def test_a_file_name_that_is_not_utf8_can_be_listed_and_then_read_by_its_escaped_name(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, tool: str
) -> None:
    (project / "caf\udce9.txt").write_text("latin-1 named content\n")  # the name's bytes: b"caf\xe9.txt"
    args = {"ls": {}, "glob": {"pattern": "*.txt"}, "bash": {"command": "ls"}}[tool]
    fake_server.script(
        call(tool, args, id="c1"),
        call("read", {"path": "caf\\xe9.txt"}, id="c2"),
        say("done"),
        say("continued"),
    )
    env = ink_env(tmp_path)
    done = run_bytes([*print_args(fake_server), "list the files"], env, project)
    assert (done.returncode, done.stdout) == (0, b"done\n"), done.stderr
    [(_, listing)] = fake_server.requests[1].tool_results()
    assert "caf\\xe9.txt" in listing
    [_, (_, content)] = fake_server.requests[2].tool_results()
    assert "latin-1 named content" in content
    again = run_bytes(print_args(fake_server, "openai", "--continue", "go on"), env, project)
    assert again.returncode == 0, again.stderr
    assert_all_accepted(fake_server, 4)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_lone_surrogates_in_a_model_reply_and_its_tool_arguments_are_replaced(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    fake_server.script(
        Reply([text("odd \ud800 text"), tool_call("read", {"path": "notes\udfff.txt"}, id="c1")]),
        say("bye \udc80"),
        say("still fine"),
    )
    env = ink_env(tmp_path)
    done = run_bytes([*print_args(fake_server, protocol), "go"], env, project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"bye \\x80\n"  # the surrogate-escape range reads as the byte it stands for
    assistant = [m for m in fake_server.requests[1].messages if m.get("role") == "assistant"]
    assert "odd \ufffd text" in json.dumps(assistant, ensure_ascii=False)
    assert "notes\ufffd.txt" in json.dumps(assistant, ensure_ascii=False)
    again = run_bytes(print_args(fake_server, protocol, "--continue", "more"), env, project)
    assert (again.returncode, again.stdout) == (0, b"still fine\n"), again.stderr
    assert_all_accepted(fake_server, 3)


def test_an_rpc_prompt_with_a_lone_surrogate_is_taken_with_a_replacement_character(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    fake_server.script(say("one"), say("two"))
    ink = start_rpc("--permission-mode", "yolo")
    ink.send_raw(b'{"type":"prompt","id":1,"text":"a \\ud800 b"}\n')
    assert ink.wait_response(1)["ok"] is True
    mark = ink.wait_event_at("run_end", stopReason="completed")[0] + 1
    ink.ok("prompt", text="next")
    ink.wait_event("run_end", after=mark, stopReason="completed")
    assert fake_server.requests[1].user_texts() == ["a \ufffd b", "next"]
    assert_all_accepted(fake_server, 2)


def test_a_session_poisoned_by_an_older_ink_is_repaired_on_load(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(say("first"), say("repaired"))
    env = ink_env(tmp_path)
    assert run_bytes([*print_args(fake_server), "hello"], env, project).returncode == 0
    [session] = (tmp_path / "inkhome" / "sessions").rglob("*.jsonl")
    poisoned = b'{"type":"message","message":{"role":"user","text":"bad \\ud800 and \\udce9"}}\n'
    session.write_bytes(session.read_bytes() + poisoned)
    again = run_bytes(print_args(fake_server, "openai", "--continue", "next"), env, project)
    assert (again.returncode, again.stdout) == (0, b"repaired\n"), again.stderr
    assert fake_server.requests[1].user_texts() == ["hello", "bad \ufffd and \\xe9", "next"]
    assert_all_accepted(fake_server, 2)


def test_an_acp_prompt_with_a_lone_surrogate_is_taken_with_a_replacement_character(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(say("one"), say("two"))
    ink = start_acp()
    session = open_session(ink, project)
    for words in ("a \ud800 b", "next"):  # the client's JSON carries the surrogate as "\\ud800"
        prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt(words))
        assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert fake_server.requests[1].user_texts() == ["a \ufffd b", "next"]
    assert_all_accepted(fake_server, 2)
