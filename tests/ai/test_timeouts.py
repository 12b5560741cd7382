"""Deadlines on a model request (issue 11, "Hangs"): a server that takes the request and says nothing,
one that sends only keep-alives, one that goes silent mid-reply, and a 200 with an empty stream; and
(issue 29, "Replies that never end") one that sends only events without content, before the reply or in
its middle: only content moves the deadline.

Each timeout is proven by what the fake server saw: the client left a stream that was still held open
(so it was the client's deadline, not the server's), after keep-alives that did not reset it, and no
second request came (not retried). Timeouts are small and configured; nothing here sleeps.
"""

from __future__ import annotations

import pytest

from ink.ai.anthropic import AnthropicProvider
from ink.ai.errors import BadResponse, Silent
from ink.ai.http import RequestTimeouts
from ink.ai.openai import OpenAIProvider
from ink.ai.openai_responses import OpenAIResponsesProvider
from ink.ai.stream import TextDelta
from tests.ai.helpers import FAST_RETRY, collect, make_request
from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, chatter, text

Provider = OpenAIProvider | AnthropicProvider | OpenAIResponsesProvider


def timed_provider(protocol: str, server: FakeModelServer, timeouts: RequestTimeouts) -> Provider:
    if protocol == "openai":
        return OpenAIProvider(
            api_key="k", base_url=server.openai_base_url, retry=FAST_RETRY, timeouts=timeouts
        )
    if protocol == "openai-responses":
        return OpenAIResponsesProvider(
            api_key="k", base_url=server.openai_base_url, retry=FAST_RETRY, timeouts=timeouts
        )
    return AnthropicProvider(
        api_key="k", base_url=server.anthropic_base_url, retry=FAST_RETRY, timeouts=timeouts
    )


async def failure_of(provider: Provider) -> Exception:
    try:
        await collect(provider, make_request())
    except Exception as exc:
        return exc
    finally:
        await provider.aclose()
    raise AssertionError("the stream ended without an error")


async def test_a_server_that_never_answers_hits_first_byte_timeout_and_is_not_retried(
    fake_server: FakeModelServer, protocol: str
) -> None:
    fake_server.script(Fault.hang(seconds=30), "never asked for")
    provider = timed_provider(protocol, fake_server, RequestTimeouts(first_byte=0.3, idle=30))
    error = await failure_of(provider)
    assert isinstance(error, Silent), error
    assert "first_byte_timeout = 0.3 s" in str(error) and "not retried" in str(error)
    (request,) = await fake_server.wait_for_requests_async(1)
    await request.wait_finished_async()
    assert request.outcome == "client_left", "the client gave up while the server still held the request"
    assert len(fake_server.requests) == 1 and fake_server.pending == 1


async def test_keep_alives_alone_count_as_silence(fake_server: FakeModelServer, protocol: str) -> None:
    """SSE comments (and Anthropic's ping events) arrive all along, yet the first-byte deadline passes."""
    fake_server.script(Fault.keep_alive(interval=0.01, seconds=30), "never asked for")
    provider = timed_provider(protocol, fake_server, RequestTimeouts(first_byte=0.5, idle=30))
    error = await failure_of(provider)
    assert isinstance(error, Silent) and "first_byte_timeout" in str(error), error
    (request,) = await fake_server.wait_for_requests_async(1)
    await request.wait_finished_async()
    assert request.outcome == "client_left"
    assert request.status == 200 and request.chunks_sent >= 2, "keep-alives were sent before the timeout"
    assert len(fake_server.requests) == 1 and fake_server.pending == 1


async def test_silence_mid_reply_hits_idle_timeout(fake_server: FakeModelServer, protocol: str) -> None:
    held = Gate(timeout=30)
    fake_server.script(Reply([text("partial "), held, text("more")]))  # held after the first text
    provider = timed_provider(protocol, fake_server, RequestTimeouts(first_byte=30, idle=0.3))
    seen: list[object] = []
    with pytest.raises(Silent, match=r"idle_timeout = 0\.3 s"):
        async for event in provider.stream(make_request()):
            seen.append(event)
    await provider.aclose()
    assert held.reached.is_set() and not held.opened.is_set()
    assert any(isinstance(e, TextDelta) for e in seen), "the deadline moved on with each event"
    (request,) = await fake_server.wait_for_requests_async(1)
    await request.wait_finished_async()
    assert request.outcome == "client_left"


async def test_a_slow_consumer_is_not_the_servers_silence(
    fake_server: FakeModelServer, protocol: str
) -> None:
    """The idle deadline runs only while ink waits for the server: a consumer that takes longer than
    ``idle`` between two events (a busy terminal) does not time out a reply that is all there."""
    import asyncio

    fake_server.script(Reply([text("a"), text("b"), text("c")]))
    provider = timed_provider(protocol, fake_server, RequestTimeouts(first_byte=30, idle=0.2))
    texts = []
    async for event in provider.stream(make_request()):
        if isinstance(event, TextDelta):
            texts.append(event.text)
            await asyncio.sleep(0.3)  # the consumer's own pause, longer than idle (not synchronisation)
    await provider.aclose()
    assert "".join(texts) == "abc"


async def test_an_empty_200_stream_is_reported_and_not_retried(
    fake_server: FakeModelServer, protocol: str
) -> None:
    fake_server.script(Fault.empty(), "never asked for")
    provider = timed_provider(protocol, fake_server, RequestTimeouts())
    error = await failure_of(provider)
    assert isinstance(error, BadResponse), error
    assert "answered 200 with an empty event stream" in str(error) and "not retried" in str(error)
    assert len(fake_server.requests) == 1 and fake_server.pending == 1


CONTENTLESS_KINDS = 6  # one round of each protocol's events without content (tests/fakeserver/contentless.py)


async def test_events_without_content_before_the_reply_count_as_silence(
    fake_server: FakeModelServer, protocol: str
) -> None:
    """Empty ``choices``, role-only and ``""`` deltas, empty blocks, ``in_progress``: the server answers
    all along and says nothing, so the first-byte deadline passes instead of the reply never ending."""
    fake_server.script(Reply([chatter(interval=0.01, seconds=60)]), "never asked for")
    provider = timed_provider(protocol, fake_server, RequestTimeouts(first_byte=1.0, idle=60))
    error = await failure_of(provider)
    assert isinstance(error, Silent) and "first_byte_timeout = 1 s" in str(error), error
    (request,) = await fake_server.wait_for_requests_async(1)
    await request.wait_finished_async()
    assert request.outcome == "client_left", "the client gave up while events still came"
    assert request.chunks_sent > CONTENTLESS_KINDS, "every kind of event without content was sent"
    assert len(fake_server.requests) == 1


async def test_events_without_content_mid_reply_count_as_silence(
    fake_server: FakeModelServer, protocol: str
) -> None:
    fake_server.script(Reply([text("partial "), chatter(interval=0.01, seconds=60)]))
    provider = timed_provider(protocol, fake_server, RequestTimeouts(first_byte=60, idle=1.0))
    seen: list[object] = []
    with pytest.raises(Silent, match=r"idle_timeout = 1 s"):
        async for event in provider.stream(make_request()):
            seen.append(event)
    await provider.aclose()
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["partial "], "and no empty deltas"
    (request,) = await fake_server.wait_for_requests_async(1)
    await request.wait_finished_async()
    assert request.outcome == "client_left"
    assert request.chunks_sent > CONTENTLESS_KINDS
