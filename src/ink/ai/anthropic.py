"""Anthropic Messages streaming: text, thinking with its signature, ``tool_use`` with
``input_json_delta``, stop reason, and usage including cache reads and writes.

A tool call is complete at its ``content_block_stop``; its ``ToolCallReady`` is yielded then. The reply
is complete at ``message_stop``; a stream ending before it is a ``ConnectionFailed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgspec

from ink.ai.anthropic_convert import anthropic_body
from ink.ai.assembly import MessageBuilder, load_chunk, tool_call
from ink.ai.errors import BadResponse, ConnectionFailed
from ink.ai.http import HttpEndpoint, RequestTimeouts, RetryPolicy, SseProvider
from ink.ai.http1 import HttpClient
from ink.ai.http_errors import error_details, error_for_status
from ink.ai.messages import StopReason, ThinkingBlock, Usage
from ink.ai.provider import ModelRequest
from ink.ai.stream import ReplyDone, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
    "refusal": "error",
}


class AnthropicProvider(SseProvider):
    """Streams replies from ``{base_url}/v1/messages``.

    ``client``: an ``HttpClient`` shared with others and closed by its owner; without one, the provider
    creates its own and closes it in ``aclose``.
    """

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str = ANTHROPIC_BASE_URL,
        client: HttpClient | None = None,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        timeouts: RequestTimeouts | None = None,
        name: str = "anthropic",
    ) -> None:
        self.name = name
        self._api_key = api_key
        self.http = HttpEndpoint(
            base_url.rstrip("/").removesuffix("/v1"),
            client=client,
            retry=retry,
            headers=headers,
            timeouts=timeouts,
        )

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def _headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return self.http.headers(headers)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return anthropic_body(request)

    def _reader(self, request: ModelRequest) -> _EventReader:
        return _EventReader(MessageBuilder(request.model, self.name), self.name)


class _ToolUse(msgspec.Struct):
    id: str
    name: str
    json: list[str] = msgspec.field(default_factory=list)


class _EventReader:
    """Turns Messages stream events into stream events and one message (a ``ReplyReader``: ``progress``
    counts text, thinking, a signature, a tool call's start, input and end, a new stop reason or usage;
    ``ping``, an empty block or delta, an empty ``message_delta`` add nothing)."""

    def __init__(self, builder: MessageBuilder, provider: str) -> None:
        self.builder = builder
        self.provider = provider
        self.kinds: dict[int, str] = {}
        self.tools: dict[int, _ToolUse] = {}
        self.stop_reason: str | None = None
        self.complete = False  # message_stop arrived
        self.progress = 0

    def feed(self, data: str) -> Iterable[StreamEvent]:
        if not data.strip():
            return ()
        return self._event(load_chunk(data, self.provider))

    def _event(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        match event.get("type"):
            case "message_start":
                message = event.get("message")
                if not isinstance(message, dict):
                    raise self._bad("message_start without a message", event)
                self._usage(message.get("usage"), event)  # the reply's opening: no content yet
            case "content_block_start":
                yield from self._start(event)
            case "content_block_delta":
                yield from self._delta(event)
            case "content_block_stop":
                yield from self._stop(event)
            case "message_delta":
                delta = event.get("delta")
                if isinstance(delta, dict) and delta.get("stop_reason") is not None:
                    reason = str(delta["stop_reason"])
                    self.progress += reason != self.stop_reason
                    self.stop_reason = reason
                self.progress += self._usage(event.get("usage"), event)
            case "message_stop":
                self.complete = True
            case "error":
                message, kind, _ = error_details(event)
                raise error_for_status(None, message or str(event), self.provider, kind=kind)
            case None:
                raise self._bad("an event without a 'type'", event)
            case _:
                pass  # ping, and event types newer than this code

    def _index(self, event: dict[str, Any]) -> int:
        index = event.get("index")
        if not isinstance(index, int):
            raise self._bad("a content block event without an integer 'index'", event)
        return index

    def _start(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        index = self._index(event)
        block = event.get("content_block")
        if not isinstance(block, dict):
            raise self._bad("content_block_start without a content_block", event)
        kind = str(block.get("type"))
        self.kinds[index] = kind
        if kind == "text":
            self.builder.add_text("")
            if block.get("text"):
                self.builder.add_text(str(block["text"]))
                self.progress += 1
                yield TextDelta(str(block["text"]))
        elif kind == "thinking":
            thinking = str(block.get("thinking") or "")
            self.builder.add_thinking(thinking, new_block=True)
            self.progress += bool(thinking)
        elif kind == "redacted_thinking":
            if not isinstance(block.get("data"), str):
                raise self._bad("a redacted_thinking block without its data", event)
            self.builder.add_block(ThinkingBlock("", block["data"], redacted=True))
            self.progress += 1
        elif kind == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise self._bad("a tool_use block without an id or name", event)
            self.tools[index] = _ToolUse(block["id"], block["name"])
            self.progress += 1

    def _delta(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        index = self._index(event)
        delta = event.get("delta")
        if not isinstance(delta, dict) or index not in self.kinds:
            raise self._bad("a delta for a block that was never started", event)
        match delta.get("type"):
            case "text_delta":
                text = self._str(delta, "text", event)
                if text:
                    self.builder.add_text(text)
                    self.progress += 1
                    yield TextDelta(text)
            case "thinking_delta":
                text = self._str(delta, "thinking", event)
                if text:
                    self.builder.add_thinking(text)
                    self.progress += 1
                    yield ThinkingDelta(text)
            case "signature_delta":
                signature = self._str(delta, "signature", event)
                if signature:
                    self.builder.sign_thinking(signature)
                    self.progress += 1
                    yield ThinkingDelta("", signature)
            case "input_json_delta":
                if index not in self.tools:
                    raise self._bad("input_json_delta for a block that is not a tool_use", event)
                piece = self._str(delta, "partial_json", event)
                self.tools[index].json.append(piece)
                self.progress += bool(piece)
            case _:
                pass  # citations and newer delta types

    def _stop(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        tool = self.tools.pop(self._index(event), None)
        if tool is not None:
            call = tool_call(tool.id, tool.name, "".join(tool.json))
            self.builder.add_call(call)
            self.progress += 1
            yield ToolCallReady(call)

    def _usage(self, usage: Any, event: dict[str, Any]) -> bool:
        """message_start carries input and cache counts; message_delta the final output count (and, on
        newer servers, repeats the others): a field present later replaces the earlier one. Whether the
        counts changed."""
        if usage is None:
            return False
        if not isinstance(usage, dict):
            raise self._bad("'usage' is not an object", event)
        old = self.builder.usage
        try:
            self.builder.usage = Usage(
                input_tokens=_count(usage, "input_tokens", old.input_tokens),
                output_tokens=_count(usage, "output_tokens", old.output_tokens),
                cache_read_tokens=_count(usage, "cache_read_input_tokens", old.cache_read_tokens),
                cache_write_tokens=_count(usage, "cache_creation_input_tokens", old.cache_write_tokens),
            )
        except (TypeError, ValueError) as exc:
            raise self._bad("token counts are not numbers", event) from exc
        return self.builder.usage != old

    def finish(self) -> Iterator[StreamEvent]:
        yield self._done()

    def _done(self) -> ReplyDone:
        if not self.complete:
            raise ConnectionFailed("the stream ended before the reply was complete", provider=self.provider)
        if self.tools:
            raise BadResponse("the reply ended inside a tool_use block", provider=self.provider)
        stop = STOP.get(self.stop_reason or "end_turn", "stop")
        if self.builder.has_calls and stop != "error":
            stop = "tool_use"
        error = "the model refused to answer" if stop == "error" else None
        return ReplyDone(self.builder.message(stop, error))

    def _str(self, delta: dict[str, Any], key: str, event: dict[str, Any]) -> str:
        value = delta.get(key)
        if not isinstance(value, str):
            raise self._bad(f"a {delta.get('type')} without a string '{key}'", event)
        return value

    def _bad(self, what: str, event: dict[str, Any]) -> BadResponse:
        return BadResponse(f"malformed event ({what}): {str(event)[:200]}", provider=self.provider)


def _count(usage: dict[str, Any], key: str, old: int) -> int:
    value = usage.get(key)
    return old if value is None else int(value)
