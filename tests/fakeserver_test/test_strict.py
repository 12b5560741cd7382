"""Strict mode accepts what the real APIs accept and rejects each broken history with their words."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakeserver import FakeModelServer, check_anthropic_history, check_openai_history
from tests.fakeserver_test.client import anthropic_body, openai_body, post


def oa_call(call_id: str, name: str = "read", args: Any = '{"path": "a"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def oa(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return openai_body(list(messages), **extra)


USER = {"role": "user", "content": "hi"}
SYSTEM = {"role": "system", "content": "be brief"}


def oa_assistant(*ids: str, content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": [oa_call(i) for i in ids]}


def oa_tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_openai_valid_histories_pass() -> None:
    assert check_openai_history(oa(SYSTEM, USER)) is None
    assert check_openai_history(oa(USER, oa_assistant("a", "b"), oa_tool("b"), oa_tool("a"), USER)) is None
    assert check_openai_history(oa(USER, {"role": "assistant", "content": "sure"}, USER)) is None
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    assert (
        check_openai_history(oa(USER, oa_assistant("a", content="let me look"), oa_tool("a"), tools=tools))
        is None
    )
    parts = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert check_openai_history(oa(parts)) is None


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (oa(USER, oa_assistant("a"), USER), "did not have response messages: a"),
        (oa(USER, oa_assistant("a", "b"), oa_tool("a")), "did not have response messages: b"),
        (oa(USER, oa_tool("x")), "must be a response to a preceeding message with 'tool_calls'"),
        (oa(USER, oa_assistant("a"), oa_tool("a"), oa_tool("a")), "preceeding message"),
        (oa(USER, oa_assistant("a"), oa_tool("zzz")), "preceeding message"),
        (oa(USER, {"role": "assistant", "content": None}), "expected a string, got null"),
        (
            oa(
                USER,
                {"role": "assistant", "content": None, "tool_calls": [oa_call("a", args={"p": 1})]},
                oa_tool("a"),
            ),
            "expected a string, but got dict",
        ),
        (oa({"role": "robot", "content": "x"}), "Supported values are"),
        ({"model": "m", "stream": True}, "Missing required parameter: 'messages'"),
        ({"model": "m", "messages": []}, "empty array"),
        ({"messages": [USER]}, "you must provide a model parameter"),
        (oa(USER, tools=[{"type": "function", "function": {}}]), "tools[0].function.name"),
    ],
)
def test_openai_broken_histories_fail(body: dict[str, Any], words: str) -> None:
    message = check_openai_history(body)
    assert message is not None and words in message


def an(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return anthropic_body(list(messages), **extra)


def use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "read", "input": {"path": "a"}}


def result(call_id: str, content: Any = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


def txt(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


THINK = {"type": "thinking", "thinking": "hmm", "signature": "sig"}


def test_anthropic_valid_histories_pass() -> None:
    assert check_anthropic_history(an(user(txt("hi")), system="be brief")) is None
    assert check_anthropic_history(an(user(txt("hi")), system=[txt("be brief")])) is None
    history = an(
        {"role": "user", "content": "hi"},
        assistant(THINK, txt("looking"), use("a"), use("b")),
        user(result("b"), result("a", [txt("fine")]), txt("[interrupted by the user]")),
        assistant(txt("done")),
        user(txt("next")),
    )
    assert check_anthropic_history(history) is None
    assert check_anthropic_history(an(user(txt("hi")), assistant(txt("prefill")))) is None
    assert (
        check_anthropic_history(an(user(result_free := txt("x")), {"role": "assistant", "content": ""}))
        is None
    )
    assert result_free["text"] == "x"
    tools = [{"name": "read", "description": "d", "input_schema": {"type": "object"}}]
    assert check_anthropic_history(an(user(txt("hi")), tools=tools)) is None


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            an(user(txt("hi")), assistant(use("a")), user(txt("go on"))),
            "`tool_use` ids were found without `tool_result` blocks immediately after: a",
        ),
        (an(user(txt("hi")), assistant(use("a"), use("b")), user(result("a"))), "immediately after: b"),
        (an(user(txt("hi")), assistant(use("a")), user(txt("first"), result("a"))), "immediately after: a"),
        (an(user(txt("hi")), assistant(use("a"))), "immediately after: a"),
        (an(user(result("x"))), "unexpected `tool_use_id` found in `tool_result` blocks: x"),
        (
            an(user(txt("hi")), assistant(use("a")), user(result("a"), result("a"))),
            "unexpected `tool_use_id`",
        ),
        (an(user(txt("hi")), assistant(txt("x")), user(result("x"))), "unexpected `tool_use_id`"),
        (an(user(txt("a")), user(txt("b"))), 'multiple "user" roles in a row'),
        (an(assistant(txt("a"))), 'first message must use the "user" role'),
        (an({"role": "system", "content": "s"}), 'Unexpected role "system"'),
        (an({"role": "user", "content": ""}), "all messages must have non-empty content"),
        (an({"role": "user", "content": []}), "all messages must have non-empty content"),
        (an(user(txt(""))), "text content blocks must be non-empty"),
        (an(user(txt("  \n"))), "must contain non-whitespace text"),
        (an(user(txt("hi")), assistant(txt("")), user(txt("x"))), "text content blocks must be non-empty"),
        (
            an(user(txt("hi")), assistant({"type": "thinking", "thinking": "t"}, txt("x")), user(txt("y"))),
            "thinking.signature: Field required",
        ),
        (an(user(txt("hi")), assistant(use("a")), user(result("a", [txt("")]))), "must be non-empty"),
        (an(user(txt("hi")), assistant(use("a"), use("a")), user(result("a"))), "ids must be unique"),
        (an(user(txt("hi")), assistant(txt("end "))), "trailing whitespace"),
        (
            an(
                user(txt("hi")),
                assistant({"type": "tool_use", "id": "a", "name": "r", "input": "x"}),
                user(result("a")),
            ),
            "Input should be a valid dictionary",
        ),
        ({"model": "m", "messages": [user(txt("hi"))]}, "max_tokens: Field required"),
        ({"max_tokens": 5, "messages": [user(txt("hi"))]}, "model: Field required"),
        ({"model": "m", "max_tokens": 5}, "messages: Field required"),
        (an(user(txt("hi")), tools=[{"name": "read"}]), "input_schema: Field required"),
    ],
)
def test_anthropic_broken_histories_fail(body: dict[str, Any], words: str) -> None:
    message = check_anthropic_history(body)
    assert message is not None and words in message


def test_strict_mode_answers_400_over_http(fake_server: FakeModelServer) -> None:
    fake_server.script("unused")
    response = post(fake_server, "anthropic", an(user(txt("hi")), assistant(use("a")), user(txt("x"))))
    assert response.status_code == 400
    data = response.json()
    assert data["type"] == "error" and data["error"]["type"] == "invalid_request_error"
    assert "tool_result" in data["error"]["message"]
    response = post(fake_server, "openai", oa(USER, oa_tool("x")))
    assert response.status_code == 400
    assert "preceeding" in response.json()["error"]["message"]
    assert fake_server.pending == 1, "a rejected request does not consume the script"
    assert fake_server.requests[0].error_message is not None


def test_strict_mode_can_be_switched_off() -> None:
    with FakeModelServer(strict=False) as server:
        server.script("accepted")
        response = post(server, "openai", oa(USER, oa_tool("x")))
        assert response.status_code == 200


def test_log_extracts_user_texts_and_tool_results(fake_server: FakeModelServer) -> None:
    fake_server.script("a", "b")
    post(
        fake_server,
        "openai",
        oa(SYSTEM, USER, oa_assistant("c1"), oa_tool("c1", "out"), {"role": "user", "content": "more"}),
    )
    post(
        fake_server,
        "anthropic",
        an(user(txt("hi")), assistant(use("t1")), user(result("t1", "res"), txt("steer")), system="sys"),
    )
    first, second = fake_server.requests
    assert first.user_texts() == ["hi", "more"] and second.user_texts() == ["hi", "steer"]
    assert first.tool_results() == [("c1", "out")] and second.tool_results() == [("t1", "res")]
    assert first.tool_call_ids() == ["c1"] and second.tool_call_ids() == ["t1"]
    assert first.system == "be brief" and second.system == "sys"
    assert fake_server.user_texts() == [["hi", "more"], ["hi", "steer"]]
