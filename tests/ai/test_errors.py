"""Failures map to the error tree with the server's own words; retries only before content streamed."""

from __future__ import annotations

import socket

import pytest

from ink.ai.anthropic import AnthropicProvider
from ink.ai.errors import (
    AuthError,
    BadRequest,
    BadResponse,
    ConnectionFailed,
    ContextOverflow,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
)
from ink.ai.http import NO_RETRY, RetryPolicy
from ink.ai.messages import Message, ToolCall
from ink.ai.openai import OpenAIProvider
from ink.ai.stream import RetryScheduled, TextDelta
from tests.ai.helpers import FAST_RETRY, collect, done_message, make_request, provider_for
from tests.fakeserver import FakeModelServer, Fault, Reply, malformed, text, tool_call

Provider = OpenAIProvider | AnthropicProvider


async def test_429_with_retry_after_is_retried_then_succeeds(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    fake_server.script(Fault.http(429, "Rate limit reached", retry_after=0.02), Reply([text("finally")]))
    events = await collect(provider, make_request())
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1
    assert retries[0].attempt == 1 and retries[0].delay_seconds == pytest.approx(0.02)
    assert "Rate limit reached" in retries[0].error
    assert done_message(events).text == "finally"
    assert len(fake_server.requests) == 2
    assert fake_server.requests[1].body == fake_server.requests[0].body, "the same request is sent again"


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 529])
async def test_retryable_statuses_back_off(fake_server: FakeModelServer, protocol: str, status: int) -> None:
    fake_server.script(Fault.http(status), Fault.http(status), "ok")
    provider = provider_for(
        protocol, fake_server, retry=RetryPolicy(max_attempts=3, base_delay=0.001, jitter=0.0)
    )
    events = await collect(provider, make_request())
    await provider.aclose()
    delays = [e.delay_seconds for e in events if isinstance(e, RetryScheduled)]
    assert delays == [pytest.approx(0.001), pytest.approx(0.002)], "exponential backoff"
    assert done_message(events).text == "ok"


async def test_retries_give_up_after_max_attempts(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(*[Fault.http(500, "boom")] * 3)
    seen: list[object] = []
    with pytest.raises(ServerError, match="boom") as info:
        async for event in provider.stream(make_request()):
            seen.append(event)
    assert info.value.status == 500
    assert len(seen) == 2 and all(isinstance(e, RetryScheduled) for e in seen)
    assert len(fake_server.requests) == 3


async def test_a_retry_after_too_long_is_not_waited_for(fake_server: FakeModelServer, protocol: str) -> None:
    fake_server.script(Fault.http(429, retry_after=120))
    provider = provider_for(protocol, fake_server)
    with pytest.raises(RateLimited) as info:
        await collect(provider, make_request())
    await provider.aclose()
    assert info.value.retry_after == 120
    assert len(fake_server.requests) == 1


async def test_no_retry_once_content_streamed(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(
        Reply([text("a"), text("b"), text("c"), text("d")], fault=Fault.disconnect_after(4)), "unused"
    )
    seen: list[object] = []
    with pytest.raises(ConnectionFailed, match="broke off"):
        async for event in provider.stream(make_request()):
            seen.append(event)
    assert any(isinstance(e, TextDelta) for e in seen)
    assert not any(isinstance(e, RetryScheduled) for e in seen)
    assert len(fake_server.requests) == 1, "the server saw exactly one request"
    assert fake_server.pending == 1


async def test_a_body_ending_before_the_last_event_is_a_connection_failure(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    """The HTTP body ends cleanly, but without [DONE] / message_stop, after text arrived: the reply is not
    complete (and, content having streamed, it is not retried)."""
    # Anthropic: message_start, ping, block, delta; Responses: created, item, part, delta
    after_text = 3 if isinstance(provider, OpenAIProvider) else 4
    fake_server.script(Reply([text("partial"), text("more")], fault=Fault.end_after(after_text)), "unused")
    with pytest.raises(ConnectionFailed, match="ended before the reply was complete"):
        await collect(provider, make_request())
    assert len(fake_server.requests) == 1


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, BadRequest),
        (401, AuthError),
        (403, AuthError),
        (404, BadRequest),
        (422, BadRequest),
        (429, RateLimited),
        (500, ServerError),
        (503, Overloaded),
        (529, Overloaded),
    ],
)
async def test_each_status_is_mapped_with_the_server_message(
    fake_server: FakeModelServer, protocol: str, status: int, error_class: type[ProviderError]
) -> None:
    fake_server.script(
        Fault.http(status, f"the server says {status}", retry_after=3 if status == 429 else None)
    )
    provider = provider_for(protocol, fake_server, retry=NO_RETRY)
    with pytest.raises(ProviderError) as info:
        await collect(provider, make_request())
    await provider.aclose()
    assert type(info.value) is error_class
    assert info.value.message == f"the server says {status}"
    assert info.value.status == status
    assert info.value.provider == protocol
    assert f"HTTP {status}" in str(info.value)
    if status == 429:
        assert isinstance(info.value, RateLimited) and info.value.retry_after == 3


async def test_anthropic_overloaded_error_type_is_overloaded(fake_server: FakeModelServer) -> None:
    fake_server.script(Fault.http(500, "Overloaded", error_type="overloaded_error"))
    provider = AnthropicProvider(api_key="k", base_url=fake_server.anthropic_base_url, retry=NO_RETRY)
    with pytest.raises(Overloaded):
        await collect(provider, make_request())
    await provider.aclose()


async def test_context_overflow_is_recognised(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(Fault.context_overflow())
    with pytest.raises(ContextOverflow) as info:
        await collect(provider, make_request())
    assert info.value.status == 400
    assert "too long" in info.value.message or "maximum context length" in info.value.message
    assert len(fake_server.requests) == 1, "an overflow is not retried"


async def test_wrong_key_is_an_auth_error(protocol: str) -> None:
    with FakeModelServer(api_key="right") as server:
        provider = provider_for(protocol, server, api_key="wrong")
        with pytest.raises(AuthError) as info:
            await collect(provider, make_request())
        await provider.aclose()
    assert info.value.status == 401
    assert len(server.requests) == 1


async def test_connection_refused_names_the_url(protocol: str) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("/v1" if protocol == "openai" else "")
    provider = (OpenAIProvider if protocol == "openai" else AnthropicProvider)(
        api_key="k", base_url=base, retry=FAST_RETRY
    )
    events: list[object] = []
    with pytest.raises(ConnectionFailed, match=f"cannot connect to http://127.0.0.1:{port}/"):
        async for event in provider.stream(make_request()):
            events.append(event)
    await provider.aclose()
    assert len(events) == FAST_RETRY.max_attempts - 1, "connection errors are retried"


async def test_invalid_json_chunk_is_a_bad_response(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(Reply([text("ok"), malformed("{not json")]))
    with pytest.raises(BadResponse, match="invalid JSON"):
        await collect(provider, make_request())


async def test_malformed_after_is_a_bad_response(fake_server: FakeModelServer, provider: Provider) -> None:
    fake_server.script(Reply([text("ok")], fault=Fault.malformed_after(2, raw="[1, 2]")))
    with pytest.raises(BadResponse, match="not a JSON object"):
        await collect(provider, make_request())


@pytest.mark.parametrize(
    "raw",
    [
        '{"choices": 5}',
        '{"choices": [{"delta": "text"}]}',
        '{"choices": [{"delta": {"tool_calls": {"index": 0}}}]}',
        '{"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}',
        '{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": 5}}]}}]}',
        '{"choices": [], "usage": {"prompt_tokens": "many"}}',
    ],
)
async def test_openai_wrong_shapes_are_bad_responses(fake_server: FakeModelServer, raw: str) -> None:
    fake_server.script(Reply([text("a"), malformed(raw)]))
    provider = OpenAIProvider(api_key="k", base_url=fake_server.openai_base_url)
    with pytest.raises(BadResponse, match="malformed chunk"):
        await collect(provider, make_request())
    await provider.aclose()


@pytest.mark.parametrize(
    "raw",
    [
        '{"type": "content_block_delta", "index": 9, "delta": {"type": "text_delta", "text": "x"}}',
        '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}}',
        '{"type": "content_block_start", "index": 1}',
        '{"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use"}}',
        '{"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}',
        '{"index": 0}',
        '{"type": "message_delta", "usage": {"output_tokens": "lots"}}',
    ],
)
async def test_anthropic_wrong_shapes_are_bad_responses(fake_server: FakeModelServer, raw: str) -> None:
    fake_server.script(Reply([text("a"), malformed(raw)]))
    provider = AnthropicProvider(api_key="k", base_url=fake_server.anthropic_base_url)
    with pytest.raises(BadResponse, match="malformed event"):
        await collect(provider, make_request())
    await provider.aclose()


def unusable_call(events: list[object]) -> ToolCall:
    """The one call of the reply, whose arguments could not be used (they are then empty)."""
    [call] = done_message(events).tool_calls
    assert call.arguments == {} and call.arguments_error is not None
    return call


async def test_malformed_tool_arguments_are_kept_as_the_calls_problem_not_a_failed_reply(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    fake_server.script(Reply([tool_call("read", '{"path": "a.txt"', id="c9", pieces=3)]))
    call = unusable_call(await collect(provider, make_request()))
    assert (call.id, call.name) == ("c9", "read")
    assert call.arguments_error is not None
    assert call.arguments_error.startswith("has malformed JSON arguments: they are not valid JSON")
    assert """they began '{"path": "a.txt"' (16 characters)""" in call.arguments_error


async def test_tool_arguments_that_are_not_an_object(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    fake_server.script(Reply([tool_call("read", "[1, 2]", id="c9")]))
    assert "not a JSON object" in str(unusable_call(await collect(provider, make_request())).arguments_error)


async def test_empty_tool_arguments_mean_no_arguments(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    fake_server.script(Reply([tool_call("read", "", id="c9")]))
    message = done_message(await collect(provider, make_request()))
    assert message.tool_calls[0].arguments == {}


async def test_anthropic_error_event_mid_stream(fake_server: FakeModelServer) -> None:
    error = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    fake_server.script(Reply([text("a"), malformed(error, event="error")]))
    provider = AnthropicProvider(api_key="k", base_url=fake_server.anthropic_base_url)
    with pytest.raises(Overloaded, match="Overloaded"):
        await collect(provider, make_request())
    await provider.aclose()


async def test_openai_error_object_mid_stream(fake_server: FakeModelServer) -> None:
    error = '{"error": {"message": "The server had an error", "type": "server_error", "code": null}}'
    fake_server.script(Reply([text("a"), malformed(error)]))
    provider = OpenAIProvider(api_key="k", base_url=fake_server.openai_base_url)
    with pytest.raises(ServerError, match="The server had an error"):
        await collect(provider, make_request())
    await provider.aclose()


async def test_strict_mode_rejection_is_a_bad_request(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    """Were ink ever to send an invalid history, the user would see the service's own explanation."""
    from ink.ai.messages import AssistantMessage, ToolCall, UserMessage

    broken: list[Message] = [
        UserMessage("hi"),
        AssistantMessage((ToolCall("c1", "read", {}),), "tool_use"),
        UserMessage("x"),
    ]
    with pytest.raises(BadRequest) as info:
        await collect(provider, make_request(broken))
    assert "tool" in info.value.message and info.value.status == 400


async def test_a_body_ending_before_any_content_is_retried(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    fake_server.script(Reply([text("partial")], fault=Fault.end_after(1)), "second try")
    events = await collect(provider, make_request())
    assert any(isinstance(e, RetryScheduled) for e in events)
    assert done_message(events).text == "second try"
    assert len(fake_server.requests) == 2


async def test_an_error_event_opening_a_200_stream_is_retried(fake_server: FakeModelServer) -> None:
    """Anthropic may answer 200 and then send ``overloaded_error`` as the stream's first event."""
    overloaded = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    fake_server.script(Reply([malformed(overloaded, event="error")]), "after the overload")
    provider = provider_for("anthropic", fake_server)
    events = await collect(provider, make_request())
    await provider.aclose()
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1 and "Overloaded" in retries[0].error
    assert done_message(events).text == "after the overload"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("[" * 100_000, "nest too deeply to parse"),  # Python's parser gives up (RecursionError)
        ('{"a":' * 600 + "1" + "}" * 600, "nested deeper than 100 levels"),  # parses, but too deep to use
    ],
)
async def test_absurdly_nested_tool_arguments_are_the_calls_problem_not_a_crash(
    fake_server: FakeModelServer, provider: Provider, raw: str, problem: str
) -> None:
    fake_server.script(Reply([tool_call("read", raw, id="deep")]))
    assert problem in str(unusable_call(await collect(provider, make_request())).arguments_error)
