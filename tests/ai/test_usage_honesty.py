"""Usage is honest: a server that reports none gives *unknown* usage (not zeros passing for a count), and
a reply cut off by an abort gets an estimate marked as one (its prompt was sent and billed all the same)."""

from __future__ import annotations

import asyncio

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent
from ink.agent.reply import stream_reply
from ink.agent.tasks import Tasks
from ink.ai.anthropic import AnthropicProvider
from ink.ai.messages import Usage, message_from_json, message_to_json
from tests.ai.helpers import collect, done_message, make_request
from tests.fakeserver import FakeModelServer, Gate, Reply, text
from tests.fakeserver import Usage as FakeUsage


async def test_a_server_that_reports_no_usage_gives_unknown_usage(
    fake_server: FakeModelServer, provider
) -> None:  # type: ignore[no-untyped-def]
    if isinstance(provider, AnthropicProvider):
        return  # Anthropic reports usage in every message_start: there is no such server
    fake_server.script(Reply([text("hi")], report_usage=False))
    usage = done_message(await collect(provider, make_request())).usage
    assert usage.accuracy == "missing" and usage.output_tokens == 0 and usage.cost_usd is None  # unknown
    fake_server.script(Reply([text("hi")], usage=FakeUsage(input_tokens=12, output_tokens=3)))
    counted = done_message(await collect(provider, make_request())).usage
    assert counted.accuracy is None and (counted.input_tokens, counted.output_tokens) == (12, 3)


async def test_an_aborted_reply_has_estimated_usage(fake_server: FakeModelServer, provider) -> None:  # type: ignore[no-untyped-def]
    gate = Gate()
    fake_server.script(Reply([text("x" * 400), gate, text("never")]))
    signal, started = AbortSignal(), asyncio.Event()

    def emit(event: AgentEvent) -> None:
        if event.type == "text_delta":
            started.set()

    request = make_request(system="s" * 4000)
    task = asyncio.create_task(stream_reply(provider, request, signal, emit, tasks=Tasks()))
    await gate.wait_reached_async()
    await asyncio.wait_for(started.wait(), 10)
    signal.abort("user")
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.message is not None and outcome.message.stop_reason == "aborted"
    usage = outcome.message.usage
    assert usage.accuracy == "estimated"
    assert 1000 <= usage.input_tokens < 1200 and usage.output_tokens == 100
    assert message_from_json(message_to_json(outcome.message)).usage == usage  # kept in sessions as such


def test_a_sum_is_as_accurate_as_its_least_accurate_part() -> None:
    reported, estimated, missing = Usage(1, 1), Usage(2, 2, accuracy="estimated"), Usage(accuracy="missing")
    assert (reported + reported).accuracy is None
    assert (reported + estimated).accuracy == "estimated"
    assert (estimated + missing).accuracy == "missing" and (missing + reported).accuracy == "missing"
