"""Building providers against the fake server and collecting what they stream."""

from __future__ import annotations

from collections.abc import Sequence

from ink.ai.anthropic import AnthropicProvider
from ink.ai.http import RetryPolicy
from ink.ai.messages import AssistantMessage, Message, UserMessage
from ink.ai.openai import OpenAIProvider
from ink.ai.openai_responses import OpenAIResponsesProvider
from ink.ai.provider import ModelRequest, Provider, ToolSpec
from ink.ai.stream import ReplyDone, StreamEvent
from tests.fakeserver import FakeModelServer

PROTOCOLS = ["openai", "anthropic", "openai-responses"]
FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, jitter=0.0)
READ = ToolSpec(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def provider_for(
    protocol: str, server: FakeModelServer, *, retry: RetryPolicy = FAST_RETRY, api_key: str = "test-key"
) -> OpenAIProvider | AnthropicProvider | OpenAIResponsesProvider:
    if protocol == "openai-responses":
        return OpenAIResponsesProvider(api_key=api_key, base_url=server.openai_base_url, retry=retry)
    if protocol == "openai":
        return OpenAIProvider(api_key=api_key, base_url=server.openai_base_url, retry=retry)
    return AnthropicProvider(api_key=api_key, base_url=server.anthropic_base_url, retry=retry)


def make_request(
    messages: Sequence[Message] | None = None,
    *,
    tools: Sequence[ToolSpec] = (READ,),
    system: str = "be brief",
) -> ModelRequest:
    return ModelRequest(
        model="fake-model",
        system=system,
        messages=list(messages) if messages is not None else [UserMessage("hi")],
        tools=tools,
        max_tokens=1000,
    )


async def collect(provider: Provider, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


def done_message(events: Sequence[StreamEvent]) -> AssistantMessage:
    last = events[-1]
    assert isinstance(last, ReplyDone), f"the stream must end with ReplyDone, got {last!r}"
    assert sum(isinstance(e, ReplyDone) for e in events) == 1
    return last.message
