"""Both providers stream replies from the fake server over real HTTP, in both wire formats."""

from __future__ import annotations

import asyncio

from ink.ai.anthropic import AnthropicProvider
from ink.ai.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)
from ink.ai.openai import OpenAIProvider
from ink.ai.openai_responses import OpenAIResponsesProvider
from ink.ai.stream import ReplyDone, TextDelta, ThinkingDelta, ToolCallReady
from tests.ai.helpers import collect, done_message, make_request
from tests.fakeserver import FakeModelServer, Gate, Reply, text, thinking, tool_call
from tests.fakeserver import Usage as FakeUsage

Provider = OpenAIProvider | AnthropicProvider | OpenAIResponsesProvider


async def test_text_arrives_one_delta_per_chunk(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(Reply([text("Hel"), text("lo "), text("world")]))
    events = await collect(provider, make_request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo ", "world"]
    message = done_message(events)
    assert message.content == (TextBlock("Hello world"),)
    assert message.stop_reason == "stop"
    assert message.model == "fake-model" and message.provider == provider.name


async def test_chunked_tool_call_arguments_are_reassembled(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    args_a = {"path": "src/a very long path/with spaces/ünïcode.txt", "limit": 40}
    args_b = {"path": "b.txt", "nested": {"list": [1, 2, {"x": "y"}]}}
    fake_server.script(
        Reply(
            [
                text("Reading"),
                tool_call("read", args_a, id="c1", pieces=7),
                tool_call("read", args_b, id="c2", pieces=5),
            ]
        )
    )
    events = await collect(provider, make_request())
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert ready == [ToolCall("c1", "read", args_a), ToolCall("c2", "read", args_b)]
    message = done_message(events)
    assert message.stop_reason == "tool_use"
    assert message.content == (TextBlock("Reading"), *ready)
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ReplyDone") > max(i for i, k in enumerate(kinds) if k == "ToolCallReady")


async def test_a_call_is_ready_as_soon_as_its_block_closes(fake_server: FakeModelServer) -> None:
    """Anthropic marks the end of each call (content_block_stop): the call is usable before the reply
    ends, so an abort later in the reply still knows it arrived whole (R19)."""
    gate = Gate()
    fake_server.script(
        Reply([tool_call("read", {"path": "a"}, id="c1"), gate, tool_call("read", {"path": "b"}, id="c2")])
    )
    provider = AnthropicProvider(api_key="k", base_url=fake_server.anthropic_base_url)
    stream = provider.stream(make_request())
    try:
        first = await anext(stream)
        while not isinstance(first, ToolCallReady):
            first = await anext(stream)
        assert first.call.id == "c1"
        assert not fake_server.requests[0].finished.is_set(), "c1 was ready while the reply was held"
        gate.open()
        rest = [e async for e in stream]
        assert [e.call.id for e in rest if isinstance(e, ToolCallReady)] == ["c2"]
    finally:
        gate.open()
        await stream.aclose()
        await provider.aclose()


async def test_openai_call_is_ready_when_the_next_index_starts(fake_server: FakeModelServer) -> None:
    gate = Gate()
    fake_server.script(
        Reply([tool_call("read", {"path": "a"}, id="c1"), tool_call("read", {"path": "b"}, id="c2"), gate])
    )
    provider = OpenAIProvider(api_key="k", base_url=fake_server.openai_base_url)
    stream = provider.stream(make_request())
    try:
        event = await anext(stream)
        while not isinstance(event, ToolCallReady):
            event = await anext(stream)
        assert event.call.id == "c1"
        assert not fake_server.requests[0].finished.is_set(), "c1 was ready while the reply was held"
        gate.open()
        rest = [e async for e in stream]
        assert [e.call.id for e in rest if isinstance(e, ToolCallReady)] == ["c2"]
        assert isinstance(rest[-1], ReplyDone)
    finally:
        gate.open()
        await stream.aclose()
        await provider.aclose()


async def test_usage_includes_cache_tokens(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(
        Reply(
            [text("ok")],
            usage=FakeUsage(input_tokens=100, output_tokens=20, cache_read_tokens=900, cache_write_tokens=0),
        )
    )
    message = done_message(await collect(provider, make_request()))
    # priced where the reply is assembled: the test model has no known prices
    assert message.usage == Usage(input_tokens=100, output_tokens=20, cache_read_tokens=900, cost_usd=None)


async def test_anthropic_usage_counts_cache_writes(fake_server: FakeModelServer) -> None:
    fake_server.script(
        Reply(
            [text("ok")],
            usage=FakeUsage(input_tokens=7, output_tokens=3, cache_read_tokens=11, cache_write_tokens=13),
        )
    )
    provider = AnthropicProvider(api_key="k", base_url=fake_server.anthropic_base_url)
    message = done_message(await collect(provider, make_request()))
    await provider.aclose()
    assert message.usage == Usage(7, 3, 11, 13, cost_usd=None)


async def test_length_stop_is_mapped(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(Reply([text("cut sh")], stop="length"))
    assert done_message(await collect(provider, make_request())).stop_reason == "length"


async def test_thinking_with_signature_round_trips(fake_server: FakeModelServer) -> None:
    fake_server.script(
        Reply(
            [
                thinking("let me "),
                thinking("think", signature="sig-123"),
                text("answer"),
                tool_call("read", {"path": "a"}, id="t1"),
            ]
        ),
        Reply([text("done")]),
    )
    provider = AnthropicProvider(api_key="k", base_url=fake_server.anthropic_base_url)
    events = await collect(provider, make_request())
    assert [e.text for e in events if isinstance(e, ThinkingDelta) and e.text] == ["let me ", "think"]
    assert [e.signature for e in events if isinstance(e, ThinkingDelta) and e.signature] == ["sig-123"]
    message = done_message(events)
    assert message.content[0] == ThinkingBlock("let me think", "sig-123")
    history: list[Message] = [UserMessage("hi"), message, ToolResult("t1", "read", "file text")]
    done_message(await collect(provider, make_request(history)))
    await provider.aclose()
    sent = fake_server.requests[1].messages[1]["content"]
    assert sent[0] == {"type": "thinking", "thinking": "let me think", "signature": "sig-123"}
    assert fake_server.requests[1].wait_finished() == "completed", "strict mode accepted the history"


async def test_openai_reasoning_content_becomes_thinking(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply([thinking("hmm"), text("hi")]), Reply([text("again")]))
    provider = OpenAIProvider(api_key="k", base_url=fake_server.openai_base_url)
    events = await collect(provider, make_request())
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["hmm"]
    message = done_message(events)
    assert message.content == (ThinkingBlock("hmm"), TextBlock("hi"))
    await collect(provider, make_request([UserMessage("hi"), message, UserMessage("more")]))
    await provider.aclose()
    assert fake_server.requests[1].messages[2] == {"role": "assistant", "content": "hi"}


async def test_request_shape_and_headers(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script("ok")
    await collect(provider, make_request())
    request = fake_server.requests[0]
    assert request.system == "be brief"
    assert request.user_texts() == ["hi"]
    assert request.body["stream"] is True and request.body["model"] == "fake-model"
    if isinstance(provider, OpenAIProvider):
        assert request.headers["authorization"] == "Bearer test-key"
        assert request.body["stream_options"] == {"include_usage": True}
        assert request.body["max_tokens"] == 1000
        assert request.body["tools"][0]["function"]["name"] == "read"
    elif isinstance(provider, OpenAIResponsesProvider):
        assert request.headers["authorization"] == "Bearer test-key"
        assert request.body["store"] is False  # nothing kept on the server: the input carries it all
        assert request.body["include"] == ["reasoning.encrypted_content"]
        assert request.body["max_output_tokens"] == 1000
        assert request.body["tools"][0]["name"] == "read"
    else:
        assert request.headers["x-api-key"] == "test-key"
        assert request.headers["anthropic-version"] == "2023-06-01"
        assert request.body["max_tokens"] == 1000
        assert request.body["tools"][0]["input_schema"]["required"] == ["path"]


async def test_full_turn_history_passes_strict_mode(fake_server: FakeModelServer, provider: Provider) -> None:
    """A reply with calls, its results, and a steer after them: ink's next request is valid."""
    fake_server.script(
        Reply([text("Let me look"), tool_call("read", {"path": "a"}), tool_call("read", {"path": "b"})]),
        Reply([text("done")]),
    )
    first = done_message(await collect(provider, make_request()))
    results = [ToolResult(c.id, c.name, f"content of {c.arguments['path']}") for c in first.tool_calls]
    history: list[Message] = [UserMessage("hi"), first, *results, UserMessage("also check c")]
    second = done_message(await collect(provider, make_request(history)))
    assert second.text == "done"
    request = fake_server.requests[1]
    assert request.wait_finished() == "completed"
    assert request.user_texts() == ["hi", "also check c"]
    assert [r[1] for r in request.tool_results()] == ["content of a", "content of b"]


async def test_providers_can_share_one_client(fake_server: FakeModelServer) -> None:
    from ink.ai.http1 import HttpClient

    fake_server.script("a", "b")
    client = HttpClient()
    one = OpenAIProvider(api_key="k", base_url=fake_server.openai_base_url, client=client)
    two = AnthropicProvider(api_key="k", base_url=fake_server.anthropic_base_url, client=client)
    texts = [done_message(await collect(p, make_request())).text for p in (one, two)]
    await one.aclose()  # does not close a client it does not own
    assert not client.is_closed
    await client.aclose()
    assert texts == ["a", "b"]
    assert len({r.peer for r in fake_server.requests}) == 1, "one pooled connection served both providers"


async def test_concurrent_streams_do_not_mix(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.responder = lambda request: Reply([text(request.user_texts()[-1].upper())])
    prompts = [f"prompt {i}" for i in range(8)]
    events = await asyncio.gather(*(collect(provider, make_request([UserMessage(p)])) for p in prompts))
    assert [done_message(e).text for e in events] == [p.upper() for p in prompts]


async def test_sequential_calls_reuse_the_connection(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    """The provider reads past the last event, so the next model call skips a new (TLS) handshake."""
    fake_server.script("one", "two", "three")
    for _ in range(3):
        done_message(await collect(provider, make_request()))
    assert len({r.peer for r in fake_server.requests}) == 1
