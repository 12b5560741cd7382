"""Abort is cancelling the consumer: the provider stops reading and closes the connection at once (R17)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent
from ink.agent.reply import stream_reply
from ink.agent.tasks import Tasks
from ink.ai.anthropic import AnthropicProvider
from ink.ai.messages import TextBlock, ToolCall
from ink.ai.openai import OpenAIProvider
from ink.ai.provider import ModelRequest
from ink.ai.stream import RetryScheduled, StreamEvent, TextDelta, ToolCallReady
from tests.ai.helpers import make_request
from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, text, tool_call

Provider = OpenAIProvider | AnthropicProvider


async def _consume_until(
    provider: Provider, reached: asyncio.Event, seen: list[StreamEvent], kind: type
) -> None:
    async for event in provider.stream(make_request()):
        seen.append(event)
        if isinstance(event, kind):
            reached.set()


async def test_abort_mid_stream_closes_the_connection(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("partial"), gate, text("never")]))
    got_text = asyncio.Event()
    seen: list[StreamEvent] = []
    task = asyncio.create_task(_consume_until(provider, got_text, seen, TextDelta))
    await asyncio.wait_for(got_text.wait(), 10)
    await gate.wait_reached_async()
    cancelled_at = time.monotonic()
    task.cancel()
    await asyncio.wait({task})
    closed_in = time.monotonic() - cancelled_at
    assert task.cancelled(), "the provider never swallows the cancellation"
    request = fake_server.requests[0]
    assert await request.wait_finished_async() == "client_left", "the server log shows the client left"
    assert request.client_left_at is not None
    left_after = request.client_left_at - cancelled_at
    print(
        f"cancel -> task done {closed_in * 1000:.2f} ms, cancel -> server saw EOF {left_after * 1000:.2f} ms"
    )
    assert closed_in < 0.25 and left_after < 0.5
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["partial"]
    assert not gate.opened.is_set()


async def test_abort_during_a_retry_wait_sends_nothing_more(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    fake_server.script(Fault.http(429, retry_after=30), "never requested")
    retrying = asyncio.Event()
    seen: list[StreamEvent] = []
    task = asyncio.create_task(_consume_until(provider, retrying, seen, RetryScheduled))
    await asyncio.wait_for(retrying.wait(), 10)
    task.cancel()
    await asyncio.wait({task})
    assert task.cancelled()
    assert len(fake_server.requests) == 1 and fake_server.pending == 1


class _Watch:
    """A provider that passes everything through and tells when call c1 was handed to the consumer."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.c1_ready = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        async for event in self.inner.stream(request):
            yield event
            if isinstance(event, ToolCallReady) and event.call.id == "c1":
                self.c1_ready.set()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_aborted_reply_keeps_text_and_only_whole_calls(
    fake_server: FakeModelServer, provider: Provider
) -> None:
    """R19 end to end with the agent's reply helper: abort while the second call's arguments stream."""
    gate = Gate()
    # Hold the stream after the first piece of c2's arguments (chunk counts of each wire format).
    inside_c2 = 8 if isinstance(provider, OpenAIProvider) else 14
    calls = [tool_call("read", {"path": "a"}, id="c1"), tool_call("read", {"path": "b"}, id="c2")]
    fake_server.script(Reply([text("Reading two files"), *calls], fault=Fault.stall_after(inside_c2, gate)))
    signal = AbortSignal()
    events: list[AgentEvent] = []
    watched = _Watch(provider)
    task = asyncio.create_task(stream_reply(watched, make_request(), signal, events.append, tasks=Tasks()))
    await gate.wait_reached_async()
    await asyncio.wait_for(watched.c1_ready.wait(), 10)
    signal.abort("user")
    outcome = await asyncio.wait_for(task, 10)
    assert await fake_server.requests[0].wait_finished_async() == "client_left"
    assert outcome.message is not None and outcome.error is None
    assert outcome.message.stop_reason == "aborted"
    assert outcome.message.content == (TextBlock("Reading two files"), ToolCall("c1", "read", {"path": "a"}))
    assert [e.type for e in events][-1] == "message_end"


async def test_an_openai_call_is_whole_at_its_closing_brace_not_at_the_next_chunk(
    fake_server: FakeModelServer,
) -> None:
    """R19 for OpenAI: with nothing after a call's last argument piece, the call is still known to be
    whole, so an abort at that moment keeps it."""
    gate = Gate()
    args = {"path": 'a "quoted} {name}.txt', "nested": {"list": [1, {"x": "}"}]}}
    fake_server.script(Reply([tool_call("read", args, id="c1", pieces=7), gate, text("never")]))
    provider = OpenAIProvider(api_key="k", base_url=fake_server.openai_base_url)
    ready = asyncio.Event()
    seen: list[StreamEvent] = []
    task = asyncio.create_task(_consume_until(provider, ready, seen, ToolCallReady))
    await asyncio.wait_for(ready.wait(), 10)  # before the gate opens: the closing brace was enough
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    [call] = [e.call for e in seen if isinstance(e, ToolCallReady)]
    assert call == ToolCall("c1", "read", args)
    gate.open()
    await provider.aclose()
