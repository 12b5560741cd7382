"""Compaction against the fake model server: long work keeps going inside the window.

The fake model here has a real window: a request whose messages exceed it gets the provider's "context
overflow" answer, and every reply reports the prompt's true size as usage. It reads files one by one
(large outputs) until all are read, then answers; a request with the summarising system prompt gets a
summary. Both protocols, strict mode on: a compacted history the real APIs would refuse fails the run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent, Notice
from ink.agent.history import History
from ink.agent.loop import LoopResult, LoopSetup, PendingInput, run_loop
from ink.agent.tool import ToolCallContext, ToolOutput
from ink.ai.anthropic import AnthropicProvider
from ink.ai.messages import AssistantMessage, TextBlock, ToolCall, ToolResult, UserMessage
from ink.ai.models import ModelInfo
from ink.ai.openai import OpenAIProvider
from ink.ai.provider import ToolSpec
from ink.run.compaction import SUMMARY_SYSTEM, CompactionSettings, Compactor
from ink.run.usage import UsageTotals
from ink.store import SessionStore, load_session
from tests.ai.helpers import PROTOCOLS, provider_for
from tests.fakeserver import FakeModelServer, Fault, Gate, RecordedRequest, Reply, Usage, text, tool_call
from tests.store.helpers import as_json, strict_errors

WINDOW = 8_000  # tokens the fake model accepts
FILES = 12
OUTPUT_CHARS = 4_000  # ~1,000 tokens per file read: twelve reads do not fit


def prompt_tokens(request: RecordedRequest) -> int:
    """The fake model's tokenizer: JSON characters of system and messages (Responses: instructions and
    input) / 4."""
    body = request.body if isinstance(request.body, dict) else {}
    parts = [body.get(key) for key in ("system", "messages", "instructions", "input") if key in body]
    return len(json.dumps(parts)) // 4


@dataclass
class WindowedModel:
    """The fake server's responder: a model with a window that reads ``FILES`` files, then answers."""

    window: int = WINDOW
    summary_reply: Callable[[], Reply | Fault] = lambda: Reply([text("Read files so far; keep reading.")])
    sizes: list[tuple[str, int]] = field(default_factory=list)  # (kind, prompt tokens) per request
    reads: int = 0  # calls asked for so far: after a compaction the request no longer shows them all

    def __call__(self, request: RecordedRequest) -> Reply | Fault:
        tokens = prompt_tokens(request)
        if SUMMARY_SYSTEM in request.system:
            self.sizes.append(("summary", tokens))
            return self.summary_reply()
        self.sizes.append(("turn", tokens))
        if len(self.sizes) > 4 * FILES:  # a test bug shows as a failure, not as an endless run
            return Fault.http(400, "the fake model got far more requests than the task needs")
        if tokens > self.window:
            return Fault.context_overflow()
        usage = Usage(input_tokens=tokens, output_tokens=20)
        if self.reads < FILES:
            self.reads += 1
            n = self.reads - 1
            return Reply([tool_call("read", {"path": f"f{n}.txt"}, id=f"call{n}")], usage=usage)
        return Reply([text("All files read.")], usage=usage)

    @property
    def turn_sizes(self) -> list[int]:
        return [n for kind, n in self.sizes if kind == "turn"]


class BigRead:
    """A read tool whose every output is ``OUTPUT_CHARS`` characters long."""

    spec = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
    concurrency_safe = True

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        line = f"{args['path']}: some line of the file\n"
        return ToolOutput((line * (OUTPUT_CHARS // len(line) + 1))[:OUTPUT_CHARS])


@pytest.fixture(params=PROTOCOLS)
async def provider(
    request: pytest.FixtureRequest, fake_server: FakeModelServer
) -> AsyncIterator[OpenAIProvider | AnthropicProvider]:
    p = provider_for(str(request.param), fake_server)
    yield p
    await p.aclose()


def compactor(provider: OpenAIProvider | AnthropicProvider, window: int, notices: list[Notice]) -> Compactor:
    settings = CompactionSettings(
        reserve_tokens=1_000, keep_recent_tokens=1_500, summary_max_tokens=500, tool_output_chars=500
    )
    info = ModelInfo("fake-model", window, 1_000)
    return Compactor(provider, "fake-model", info, notify=notices.append, settings=settings)


async def run(
    provider: OpenAIProvider | AnthropicProvider, keeper: Compactor, history: History, signal: AbortSignal
) -> LoopResult:
    setup = LoopSetup(provider, "fake-model", "be brief", (BigRead(),), max_tokens=500, context=keeper)
    notify = keeper.notify

    def emit(event: AgentEvent) -> None:  # the loop hands its emit to the keeper: notices come here
        if isinstance(event, Notice) and notify is not None:
            notify(event)

    first = [PendingInput("in-1", f"read f0.txt to f{FILES - 1}.txt", "steer")]
    return await run_loop(history, first, setup, signal, emit)


async def test_long_run_compacts_and_goes_on_inside_the_window(
    provider: OpenAIProvider | AnthropicProvider, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    model = WindowedModel()
    fake_server.responder = model
    notices: list[Notice] = []
    handle = SessionStore(tmp_path / "sessions").create(tmp_path, "fake-model", provider.name)
    result = await run(provider, compactor(provider, WINDOW, notices), handle.history, AbortSignal())
    handle.close()

    assert result.stop_reason == "completed" and result.batches == FILES
    # strict mode accepted every request
    assert all(r.wait_finished() == "completed" for r in fake_server.requests)
    summaries = [n for kind, n in model.sizes if kind == "summary"]
    assert summaries and max(summaries) <= WINDOW
    assert max(model.turn_sizes) <= WINDOW
    assert FILES * OUTPUT_CHARS // 4 > WINDOW  # without compaction the work could not fit
    history = handle.history.messages
    first = history[0]
    assert isinstance(first, UserMessage) and first.kind == "summary"
    assert isinstance(history[-1], AssistantMessage) and history[-1].text == "All files read."
    assert any("Compacted" in n.text and n.level == "info" for n in notices)
    assert as_json(load_session(handle.path).messages) == as_json(history)  # compaction entries replay


async def test_when_summarising_fails_old_outputs_are_shortened_and_the_user_warned(
    provider: OpenAIProvider | AnthropicProvider, fake_server: FakeModelServer
) -> None:
    model = WindowedModel(summary_reply=lambda: Fault.http(400, "summaries are broken today"))
    fake_server.responder = model
    notices: list[Notice] = []
    history = History()
    result = await run(provider, compactor(provider, WINDOW, notices), history, AbortSignal())

    assert result.stop_reason == "completed" and result.batches == FILES
    assert max(model.turn_sizes) <= WINDOW
    warnings = [n.text for n in notices if n.level == "warning"]
    assert warnings and "summaries are broken today" in warnings[0]
    assert "shortened old tool outputs" in warnings[0]
    messages = history.messages
    assert not any(isinstance(m, UserMessage) and m.kind == "summary" for m in messages)
    assert any(isinstance(m, ToolResult) and "removed to save context" in m.output for m in messages)
    assert strict_errors(messages) == [None, None]


async def test_an_overflow_answer_teaches_the_window_and_the_retry_fits(
    provider: OpenAIProvider | AnthropicProvider, fake_server: FakeModelServer
) -> None:
    """The catalogue may be wrong (an unknown model gets 128k): the provider's refusal is the truth."""
    model = WindowedModel()
    fake_server.responder = model
    notices: list[Notice] = []
    keeper = compactor(provider, 128_000, notices)
    result = await run(provider, keeper, History(), AbortSignal())

    assert result.stop_reason == "completed"
    overflows = [r for r in fake_server.requests if r.wait_finished() == "error"]
    assert len(overflows) == 1 and prompt_tokens(overflows[0]) > WINDOW
    assert keeper.window < WINDOW
    assert any(kind == "summary" for kind, _ in model.sizes)


async def test_an_abort_while_summarising_leaves_the_history_unchanged_and_the_run_ends_aborted(
    provider: OpenAIProvider | AnthropicProvider, fake_server: FakeModelServer
) -> None:
    hold = Gate()
    model = WindowedModel(summary_reply=lambda: Reply([hold, text("never seen")]))
    fake_server.responder = model
    notices: list[Notice] = []
    history, signal = History(), AbortSignal()
    running = asyncio.ensure_future(run(provider, compactor(provider, WINDOW, notices), history, signal))
    await hold.wait_reached_async()
    before = [m for m in history.messages]
    signal.abort("user")
    result = await running
    hold.open()

    assert result.stop_reason == "aborted"
    assert any("interrupted" in n.text and n.level == "warning" for n in notices)
    assert list(history.messages) == before  # stopping did not shorten any tool output
    assert strict_errors(history.messages) == [None, None]


async def test_compact_on_demand_with_a_focus_keeps_the_history_valid(
    provider: OpenAIProvider | AnthropicProvider, fake_server: FakeModelServer
) -> None:
    fake_server.script(Reply([text("The user wants files read; f0-f3 are read.")], usage=Usage(300, 40)))
    history = History()
    tool = BigRead()
    history.append(UserMessage("read four files"))
    for n in range(4):
        call_reply = AssistantMessage(
            (TextBlock(f"reading f{n}"), ToolCall(f"c{n}", "read", {"path": f"f{n}.txt"})), "tool_use"
        )
        history.append(call_reply)
        context = ToolCallContext(call_reply.tool_calls[0], AbortSignal())
        output = await tool.run({"path": f"f{n}.txt"}, context)
        history.append(ToolResult(f"c{n}", "read", output.output))
    history.append(UserMessage("now summarise what you saw"))
    totals = UsageTotals()
    keeper = compactor(provider, WINDOW, [])
    keeper.usage = totals
    outcome = await keeper.compact(history, AbortSignal(), instructions="which files were read")

    assert outcome.changed and outcome.summarised > 0 and outcome.tokens_after < outcome.tokens_before
    (request,) = fake_server.requests
    assert "which files were read" in request.user_texts()[0] and not request.body.get("tools")
    first = history.messages[0]
    assert isinstance(first, UserMessage) and first.kind == "summary" and "f0-f3 are read" in first.text
    assert not isinstance(history.messages[1], ToolResult)  # never a result without its call
    assert strict_errors(history.messages) == [None, None]
    assert totals.session.output_tokens == 40  # the summary's cost is counted


async def test_when_nothing_can_be_done_it_warns_once_and_asks_the_model_nothing(
    provider: OpenAIProvider | AnthropicProvider, fake_server: FakeModelServer
) -> None:
    notices: list[Notice] = []
    keeper = compactor(provider, WINDOW, notices)
    history = History([UserMessage("x" * (4 * WINDOW))])  # one prompt larger than the window
    for _ in range(3):
        await keeper.before_model_call(history, AbortSignal())
    assert [n.level for n in notices] == ["warning"] and "nothing older to summarise" in notices[0].text
    assert fake_server.requests == [] and len(history) == 1
    history.append(AssistantMessage((TextBlock("?"),), "stop"))
    fake_server.script(Fault.http(400, "still too long"))
    await keeper.before_model_call(history, AbortSignal())  # the history changed: it tries again
    assert len(fake_server.requests) == 1 and "still too long" in notices[-1].text


async def test_notices_go_to_the_emit_a_loop_passes_else_to_notify(
    provider: OpenAIProvider | AnthropicProvider,
) -> None:
    notices: list[Notice] = []
    passed: list[object] = []
    keeper = compactor(provider, WINDOW, notices)
    await keeper.compact(History([UserMessage("x" * (4 * WINDOW))]), AbortSignal(), emit=passed.append)
    assert len(passed) == 1 and notices == []
    await keeper.compact(History([UserMessage("x" * (4 * WINDOW))]), AbortSignal())
    assert len(passed) == 1 and len(notices) == 1
