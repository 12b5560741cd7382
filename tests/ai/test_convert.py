"""ink's histories convert into requests the real APIs accept (checked by the fake server's strict rules)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from ink.ai.anthropic_convert import anthropic_body
from ink.ai.details import ExitStatus, FileDiff
from ink.ai.messages import (
    AssistantBlock,
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
    message_from_json,
    message_to_json,
)
from ink.ai.openai_convert import openai_body
from tests.ai.helpers import collect, done_message, make_request, provider_for
from tests.fakeserver import (
    FakeModelServer,
    Reply,
    check_anthropic_history,
    check_openai_history,
    malformed,
    text,
)

NOT_EXECUTED = "Cancelled by the user: not executed."
MARKER = UserMessage("[interrupted by the user]", kind="interruption")


def both_valid(history: Sequence[Message]) -> tuple[dict, dict]:  # type: ignore[type-arg]
    request = make_request(history)
    oa, an = openai_body(request), anthropic_body(request)
    assert check_openai_history(oa) is None, check_openai_history(oa)
    assert check_anthropic_history(an) is None, check_anthropic_history(an)
    return oa, an


def calls(*ids: str) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(i, "read", {"path": i}) for i in ids)


def test_results_then_user_messages_merge_into_one_anthropic_message() -> None:
    history: list[Message] = [
        UserMessage("hi"),
        AssistantMessage((TextBlock("reading"), *calls("c1", "c2")), "tool_use"),
        ToolResult("c1", "read", "one"),
        ToolResult("c2", "read", "two"),
        MARKER,
        UserMessage("now something else"),
    ]
    oa, an = both_valid(history)
    assert [m["role"] for m in an["messages"]] == ["user", "assistant", "user"]
    last = an["messages"][2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text", "text"]
    assert [b.get("tool_use_id") or b["text"] for b in last] == [
        "c1",
        "c2",
        "[interrupted by the user]",
        "now something else",
    ]
    assert [m["role"] for m in oa["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "user",
    ]


def test_aborted_partial_reply_with_not_executed_results_is_valid() -> None:
    partial = AssistantMessage((TextBlock("I will read"), *calls("c1")), "aborted")
    history: list[Message] = [
        UserMessage("go"),
        partial,
        ToolResult("c1", "read", NOT_EXECUTED, is_error=True),
        MARKER,
        UserMessage("next"),
    ]
    oa, an = both_valid(history)
    result = an["messages"][2]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "c1", "content": NOT_EXECUTED, "is_error": True}
    assert oa["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": NOT_EXECUTED}


def test_an_empty_aborted_reply_is_left_out() -> None:
    history: list[Message] = [
        UserMessage("go"),
        AssistantMessage((), "aborted"),
        MARKER,
        UserMessage("again"),
    ]
    oa, an = both_valid(history)
    assert [m["role"] for m in an["messages"]] == ["user"]
    assert [m["role"] for m in oa["messages"]] == ["system", "user", "user", "user"]


def test_blocks_the_api_rejects_are_dropped() -> None:
    reply = AssistantMessage(
        (
            ThinkingBlock("unsigned"),
            TextBlock(""),
            TextBlock("  "),
            ThinkingBlock("signed", "s1"),
            TextBlock("ok"),
        ),
        "stop",
    )
    history: list[Message] = [UserMessage("hi"), reply, UserMessage("   "), UserMessage("more")]
    _, an = both_valid(history)
    assert an["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "signed", "signature": "s1"},
        {"type": "text", "text": "ok"},
    ]
    assert [b["text"] for b in an["messages"][2]["content"]] == ["more"]


def test_only_unsigned_thinking_drops_the_message() -> None:
    history: list[Message] = [
        UserMessage("hi"),
        AssistantMessage((ThinkingBlock("hmm"),), "aborted"),
        UserMessage("go on"),
    ]
    oa, an = both_valid(history)
    assert len(an["messages"]) == 1
    assert all(m["role"] != "assistant" for m in oa["messages"])


def test_empty_tool_output_is_said_so() -> None:
    history: list[Message] = [
        UserMessage("hi"),
        AssistantMessage(calls("c1"), "tool_use"),
        ToolResult("c1", "read", ""),
    ]
    oa, an = both_valid(history)
    assert an["messages"][2]["content"][0]["content"] == "(no output)"
    assert oa["messages"][-1]["content"] == "(no output)"


def test_openai_tool_calls_carry_json_string_arguments() -> None:
    args = {"path": "ü.txt", "n": [1, {"x": None}]}
    history: list[Message] = [
        UserMessage("hi"),
        AssistantMessage((ToolCall("c1", "read", args),), "tool_use"),
        ToolResult("c1", "read", "x"),
    ]
    oa, _ = both_valid(history)
    assistant = oa["messages"][2]
    assert assistant["content"] is None
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == args


def test_anthropic_cache_breakpoints_on_system_and_last_user_block() -> None:
    _, an = both_valid([UserMessage("a"), AssistantMessage((TextBlock("b"),), "stop"), UserMessage("c")])
    assert an["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert an["messages"][2]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in an["messages"][0]["content"][-1]


def test_options_are_merged_into_the_body() -> None:
    from ink.ai.provider import ModelRequest

    request = ModelRequest("m", "", [UserMessage("hi")], options={"temperature": 0.2})
    assert openai_body(request)["temperature"] == 0.2
    assert anthropic_body(request)["temperature"] == 0.2
    assert "system" not in anthropic_body(request)
    assert openai_body(request)["messages"][0]["role"] == "user"


USER_TEXTS = st.sampled_from(["hi", "steer: also b", "[interrupted by the user]", "  padded  ", "ünï"])
REPLY_TEXTS = st.sampled_from(["", " ", "\n", "ok", "Reading the file.", "done "])
OUTPUTS = st.sampled_from(["", "out", "  ", NOT_EXECUTED, "line1\nline2"])


@st.composite
def loop_histories(draw: st.DrawFn) -> list[Message]:
    """Histories as the loop writes them: turns of user input, replies (maybe cut off by an abort, with
    or without thinking and text), one result per call in call order, steers and markers after results."""
    ids = itertools.count()
    history: list[Message] = []
    for _turn in range(draw(st.integers(1, 4))):
        history.extend(UserMessage(draw(USER_TEXTS)) for _ in range(draw(st.integers(1, 2))))
        for _step in range(draw(st.integers(0, 3))):
            blocks: list[AssistantBlock] = []
            if draw(st.booleans()):
                blocks.append(ThinkingBlock("thought", draw(st.sampled_from([None, "sig"]))))
            if draw(st.booleans()):
                blocks.append(TextBlock(draw(REPLY_TEXTS)))
            made = calls(*(f"call{next(ids)}" for _ in range(draw(st.integers(0, 3)))))
            stop = draw(st.sampled_from(["stop", "aborted", "error", "length"])) if not made else "tool_use"
            history.append(AssistantMessage((*blocks, *made), stop))  # type: ignore[arg-type]
            history.extend(
                ToolResult(c.id, c.name, draw(OUTPUTS), is_error=draw(st.booleans())) for c in made
            )
            history.extend(draw(st.lists(st.sampled_from([MARKER, UserMessage("steer")]), max_size=2)))
            if not made:
                break
    history.append(UserMessage("next prompt"))
    return history


@settings(max_examples=300, deadline=None)
@given(loop_histories())
def test_every_loop_history_converts_to_a_valid_request(history: list[Message]) -> None:
    both_valid(history)


async def test_converted_histories_are_accepted_over_http(fake_server: FakeModelServer) -> None:
    """The same check through the real server, for a history with every awkward part at once."""
    from tests.ai.helpers import collect, done_message, provider_for

    history: list[Message] = [
        UserMessage("hi"),
        AssistantMessage((ThinkingBlock("t"), TextBlock(" "), *calls("c1", "c2")), "aborted"),
        ToolResult("c1", "read", ""),
        ToolResult("c2", "read", NOT_EXECUTED, is_error=True),
        MARKER,
        UserMessage("continue"),
    ]
    for protocol in ("openai", "anthropic"):
        fake_server.script(Reply([text("fine")]))
        provider = provider_for(protocol, fake_server)
        assert done_message(await collect(provider, make_request(history))).text == "fine"
        await provider.aclose()
    assert [r.user_texts()[-2:] for r in fake_server.requests] == [
        ["[interrupted by the user]", "continue"]
    ] * 2


def test_results_are_put_first_in_a_merged_anthropic_message() -> None:
    """Defensive: even a steer recorded between a call and its result yields a valid Anthropic request."""
    history: list[Message] = [
        UserMessage("hi"),
        AssistantMessage(calls("c1"), "tool_use"),
        UserMessage("steer"),
        ToolResult("c1", "read", "x"),
    ]
    an = anthropic_body(make_request(history))
    assert [b["type"] for b in an["messages"][2]["content"]] == ["tool_result", "text"]
    assert check_anthropic_history(an) is None


async def test_redacted_thinking_is_kept_and_sent_back_unchanged(fake_server: FakeModelServer) -> None:
    """With thinking and tools on, Anthropic rejects a tool loop that drops its redacted_thinking blocks."""
    start = {
        "type": "content_block_start",
        "index": 9,
        "content_block": {"type": "redacted_thinking", "data": "EnCr"},
    }
    stop = {"type": "content_block_stop", "index": 9}
    fake_server.script(
        Reply(
            [
                malformed(json.dumps(start), event="content_block_start"),
                malformed(json.dumps(stop), event="content_block_stop"),
                text("ok"),
            ]
        )
    )
    provider = provider_for("anthropic", fake_server)
    message = done_message(await collect(provider, make_request()))
    await provider.aclose()
    assert message.content[0] == ThinkingBlock("", "EnCr", redacted=True)
    body = anthropic_body(make_request([UserMessage("hi"), message, UserMessage("go on")]))
    assert body["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": "EnCr"}
    assert check_anthropic_history(body) is None


def test_tool_result_details_are_for_the_user_never_for_the_model() -> None:
    detailed = ToolResult("c1", "read", "one", details=(FileDiff("/w/a", "secret before", "after", "@@"),))
    history: list[Message] = [UserMessage("hi"), AssistantMessage(calls("c1"), "tool_use"), detailed]
    plain = [*history[:2], ToolResult("c1", "read", "one")]
    assert both_valid(history) == both_valid(plain)
    assert "secret before" not in json.dumps(both_valid(history))
    stored = message_to_json(detailed)  # the session file keeps them, and reads them back
    assert stored["details"][0]["before"] == "secret before"
    assert message_from_json(stored) == detailed
    status = ToolResult("c2", "bash", "x", details=(ExitStatus(None, "SIGKILL", interrupted=True),))
    assert message_from_json(message_to_json(status)) == status


def test_json_form_writes_required_nulls_and_leaves_out_other_nones() -> None:
    """The JSON form (docs/design/CONTRACT.md): keys camelCase in declaration order; a ``None`` field is
    left out unless its record names it in ``json_always`` (a created file's ``before``, an exit code
    that could not be collected, an unknown cost), which is written as ``null``."""
    created = ToolResult("c1", "write", "ok", details=(FileDiff("/w/new", None, "x\n", "@@"),))
    killed = ToolResult("c2", "bash", "", details=(ExitStatus(None, "SIGKILL"),))
    assert json.dumps(message_to_json(created)["details"]) == (
        '[{"path": "/w/new", "before": null, "after": "x\\n", "unified": "@@", "type": "file_diff"}]'
    )
    status = {"exitCode": None, "signal": "SIGKILL", "timedOut": False, "interrupted": False}
    assert message_to_json(killed)["details"] == [{**status, "type": "exit_status"}]
    reply = message_to_json(AssistantMessage((), "stop", usage=Usage(cost_usd=None), timestamp=1.0))
    assert "errorMessage" not in reply and "accuracy" not in reply["usage"]
    assert reply["usage"]["costUsd"] is None
