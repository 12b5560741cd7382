"""The OpenAI Responses dialect against the fake server: encrypted reasoning kept across turns and sent
back unchanged (store: false), aborts mid-reasoning and mid-call leave a history the strict checker
accepts (R19), usage with cached and reasoning tokens, and the ends a response can have."""

from __future__ import annotations

import asyncio
import json

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent
from ink.agent.reply import stream_reply
from ink.agent.tasks import Tasks
from ink.ai.errors import ContextOverflow, RateLimited
from ink.ai.messages import AssistantMessage, Message, ThinkingBlock, ToolCall, ToolResult, UserMessage
from ink.ai.openai_responses import OpenAIResponsesProvider
from ink.ai.openai_responses_convert import responses_body, responses_input
from ink.ai.stream import ThinkingDelta
from tests.ai.helpers import FAST_RETRY, collect, done_message, make_request
from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, Usage, text, thinking, tool_call
from tests.fakeserver.strict_responses import check_responses_history


@pytest.fixture
async def provider(fake_server: FakeModelServer) -> OpenAIResponsesProvider:
    p = OpenAIResponsesProvider(api_key="k", base_url=fake_server.openai_base_url, retry=FAST_RETRY)
    yield p  # type: ignore[misc]
    await p.aclose()


def reasoning_items(body: dict) -> list[dict]:
    return [item for item in body["input"] if item.get("type") == "reasoning"]


async def test_reasoning_items_go_back_exactly_as_they_came(
    fake_server: FakeModelServer, provider: OpenAIResponsesProvider
) -> None:
    fake_server.script(
        Reply([thinking("Plan: "), thinking("read a."), tool_call("read", {"path": "a"}, id="c1")]),
        Reply([thinking("a looks fine"), text("done")]),
        "bye",
    )
    events = await collect(provider, make_request())
    first = done_message(events)
    assert [e.text for e in events if isinstance(e, ThinkingDelta) and e.text] == ["Plan: ", "read a."]
    [block] = [b for b in first.content if isinstance(b, ThinkingBlock)]
    assert block.thinking == "Plan: read a."
    sent_out = fake_server.requests[0]
    history: list[Message] = [UserMessage("hi"), first, ToolResult("c1", "read", "A")]
    second = done_message(await collect(provider, make_request(history)))
    issued_first = json.loads(block.signature or "")
    assert reasoning_items(fake_server.requests[1].body) == [issued_first]  # byte for byte the item
    assert fake_server.requests[1].body["input"][2]["type"] == "function_call"  # right after its reasoning
    await collect(provider, make_request([*history, second, UserMessage("thanks")]))
    third = fake_server.requests[2]
    assert third.outcome == "completed", third.error_message  # strict mode verified both items
    assert len(reasoning_items(third.body)) == 2 and sent_out.body["store"] is False


async def test_reasoning_without_a_summary_is_kept_too(
    fake_server: FakeModelServer, provider: OpenAIResponsesProvider
) -> None:
    fake_server.script(Reply([thinking(""), text("hello")]), "again")
    first = done_message(await collect(provider, make_request()))
    assert isinstance(first.content[0], ThinkingBlock) and first.content[0].thinking == ""
    await collect(provider, make_request([UserMessage("hi"), first, UserMessage("more")]))
    assert fake_server.requests[1].outcome == "completed", fake_server.requests[1].error_message
    assert len(reasoning_items(fake_server.requests[1].body)) == 1


@pytest.mark.parametrize("where", ["mid-reasoning", "after-reasoning", "mid-call"])
async def test_an_aborted_reply_leaves_a_history_the_service_accepts(
    where: str, fake_server: FakeModelServer, provider: OpenAIResponsesProvider
) -> None:
    gate = Gate()
    steps = {
        "mid-reasoning": [thinking("step one"), gate, thinking("step two"), tool_call("read", {"path": "a"})],
        "after-reasoning": [thinking("done thinking"), tool_call("read", {"path": "a"}, id="c1"), gate,
                            thinking("more"), tool_call("read", {"path": "b"}, id="c2")],
        "mid-call": [thinking("hmm"), tool_call("read", {"path": "a"}, id="c1"), thinking("and b"),
                     tool_call("read", {"path": "b"}, id="c2", pieces=4)],
    }[where]  # fmt: skip
    fault = Fault.stall_after(19, gate) if where == "mid-call" else None
    fake_server.script(Reply(steps, fault=fault))
    signal, started = AbortSignal(), asyncio.Event()

    def emit(event: AgentEvent) -> None:
        if event.type == "message_start":
            started.set()

    task = asyncio.create_task(stream_reply(provider, make_request(), signal, emit, tasks=Tasks()))
    await gate.wait_reached_async()
    await asyncio.wait_for(started.wait(), 10)  # the reply's first event has been taken in
    signal.abort("user")
    outcome = await asyncio.wait_for(task, 10)
    message = outcome.message
    assert message is not None and message.stop_reason == "aborted"
    calls = message.tool_calls
    results = [ToolResult(c.id, c.name, "interrupted", is_error=True) for c in calls]
    history = [UserMessage("hi"), message, *results, UserMessage("[interrupted]")]
    body = responses_body(make_request(history))
    assert check_responses_history(body, fake_server.issued) is None
    if where == "mid-reasoning":
        assert reasoning_items(body) == []  # its encrypted content never came: nothing to send
    else:
        assert [c.id for c in calls] == ["c1"] and len(reasoning_items(body)) == 1


def test_reasoning_without_a_following_item_is_left_out() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}
    sig = json.dumps(item)
    alone = AssistantMessage((ThinkingBlock("t", sig),), "aborted")
    followed = AssistantMessage((ThinkingBlock("t", sig), ToolCall("c1", "read", {})), "tool_use")
    assert responses_input([alone]) == []
    assert responses_input([followed])[0] == item
    foreign = AssistantMessage(
        (ThinkingBlock("t", "anthropic-signature"), ToolCall("c1", "read", {})), "stop"
    )
    assert [i["type"] for i in responses_input([foreign])] == ["function_call"]
    deep = AssistantMessage((ThinkingBlock("t", '{"a":' * 100_000), ToolCall("c1", "read", {})), "stop")
    assert [i["type"] for i in responses_input([deep])] == ["function_call"]  # a session file's, edited


def test_the_strict_checker_refuses_what_the_service_refuses() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "A"}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    base = {"model": "m"}
    assert check_responses_history(base | {"input": [call, output]}) is None
    assert "No tool output found" in (check_responses_history(base | {"input": [call]}) or "")
    assert "No tool call found" in (check_responses_history(base | {"input": [output]}) or "")
    assert "could not be verified" in (
        check_responses_history(base | {"input": [reasoning, call, output]}) or ""
    )
    ok = check_responses_history(base | {"input": [reasoning, call, output]}, {"rs_1": "enc"})
    assert ok is None
    alone = check_responses_history(base | {"input": [reasoning]}, {"rs_1": "enc"})
    assert "without its required following item" in (alone or "")
    stored = check_responses_history(
        base | {"input": [{**reasoning, "encrypted_content": None}, call, output]}
    )
    assert "not persisted" in (stored or "")


async def test_usage_counts_cached_and_reasoning_tokens(
    fake_server: FakeModelServer, provider: OpenAIResponsesProvider
) -> None:
    fake_server.script(
        Reply(
            [thinking("x"), text("ok")], usage=Usage(input_tokens=70, output_tokens=40, cache_read_tokens=30)
        )
    )
    usage = done_message(await collect(provider, make_request())).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (70, 30, 40)
    assert usage.reasoning_tokens == 20


async def test_an_incomplete_response_stops_at_the_length_limit(
    fake_server: FakeModelServer, provider: OpenAIResponsesProvider
) -> None:
    fake_server.script(Reply([text("cut sho")], stop="length"))
    message = done_message(await collect(provider, make_request()))
    assert (message.stop_reason, message.text) == ("length", "cut sho")


async def test_failures_before_content_are_retried_and_mapped(
    fake_server: FakeModelServer, provider: OpenAIResponsesProvider
) -> None:
    fake_server.script(Fault.http(429, retry_after=0.01), Fault.http(503), "third time")
    assert done_message(await collect(provider, make_request())).text == "third time"
    assert len(fake_server.requests) == 3
    fake_server.script(Fault.context_overflow())
    with pytest.raises(ContextOverflow):
        await collect(provider, make_request())
    fake_server.script(*[Fault.http(429, retry_after=0.01)] * 3)
    with pytest.raises(RateLimited):
        await collect(provider, make_request())


def test_a_session_that_switches_provider_sends_each_service_only_its_own_reasoning() -> None:
    from ink.ai.anthropic_convert import anthropic_body

    openai_reasoning = json.dumps(
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
    )
    reply = AssistantMessage(
        (
            ThinkingBlock("mine", openai_reasoning),
            ThinkingBlock("theirs", "anthropic-sig"),
            ToolCall("c1", "read", {}),
        ),
        "tool_use",
    )
    history = [UserMessage("hi"), reply, ToolResult("c1", "read", "A")]
    sent = anthropic_body(make_request(history))["messages"][1]["content"]
    assert [b.get("signature") for b in sent if b["type"] == "thinking"] == ["anthropic-sig"]
    items = responses_input(history)
    assert [i.get("id") for i in items if i.get("type") == "reasoning"] == ["rs_1"]
