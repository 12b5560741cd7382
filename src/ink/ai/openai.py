"""OpenAI Chat Completions streaming, for OpenAI and every compatible server (Ollama, llama.cpp, vLLM,
OpenRouter): text, reasoning (``reasoning_content`` / ``reasoning``), tool calls assembled by index,
usage from the ``stream_options.include_usage`` chunk.

A tool call is complete when a delta for another index starts, when text follows it, or at the finish;
its ``ToolCallReady`` is yielded then. The stream is complete at ``data: [DONE]`` (or, for servers that
omit it, when it ends after a ``finish_reason``); anything else ending it is a ``ConnectionFailed``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgspec

from ink.ai.assembly import MessageBuilder, load_chunk, tool_call
from ink.ai.errors import BadResponse, ConnectionFailed
from ink.ai.http import HttpEndpoint, RequestTimeouts, RetryPolicy, SseProvider
from ink.ai.http1 import HttpClient
from ink.ai.http_errors import error_details, error_for_status
from ink.ai.messages import StopReason, Usage
from ink.ai.openai_convert import openai_body
from ink.ai.provider import ModelRequest
from ink.ai.stream import ReplyDone, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady

OPENAI_BASE_URL = "https://api.openai.com/v1"
FINISH: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "error",
}


class OpenAIProvider(SseProvider):
    """Streams replies from ``{base_url}/chat/completions``.

    ``client``: an ``HttpClient`` shared with others and closed by its owner; without one, the provider
    creates its own and closes it in ``aclose``. ``max_tokens_field``: OpenAI itself wants
    ``max_completion_tokens``; most compatible servers only know ``max_tokens`` (the default for a
    non-OpenAI ``base_url``).
    """

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str = OPENAI_BASE_URL,
        client: HttpClient | None = None,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        timeouts: RequestTimeouts | None = None,
        max_tokens_field: str | None = None,
        name: str = "openai",
    ) -> None:
        self.name = name
        self._api_key = api_key
        self.http = HttpEndpoint(
            base_url.rstrip("/"),
            client=client,
            retry=retry,
            headers=headers,
            timeouts=timeouts,
        )
        default_field = "max_completion_tokens" if self.base_url == OPENAI_BASE_URL else "max_tokens"
        self.max_tokens_field = max_tokens_field or default_field

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _headers(self) -> dict[str, str]:
        return bearer_headers(self._api_key, self.http)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return openai_body(request, max_tokens_field=self.max_tokens_field)

    def _reader(self, request: ModelRequest) -> _ChunkReader:
        return _ChunkReader(MessageBuilder(request.model, self.name), self.name)


def bearer_headers(api_key: str | None, http: HttpEndpoint) -> dict[str, str]:
    """The headers of an OpenAI-style streaming request (both OpenAI APIs): JSON in, SSE out, the key
    as a bearer token when there is one."""
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return http.headers(headers)


class _PendingCall(msgspec.Struct):
    index: int
    id: str
    name: str = ""
    arguments: list[str] = msgspec.field(default_factory=list)
    depth: int = 0  # of the JSON object so far, outside strings
    in_string: bool = False
    escaped: bool = False
    closed: bool = False  # the top-level object is complete: no valid JSON can follow

    def add_arguments(self, piece: str) -> None:
        """Append a piece and follow the JSON nesting in it (one pass over the piece), so a call is
        known to be whole the moment its closing brace arrives: an abort after that keeps it (R19)."""
        self.arguments.append(piece)
        for char in piece:
            if self.escaped:
                self.escaped = False
            elif self.in_string:
                self.escaped = char == "\\"
                self.in_string = char != '"'
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            elif char in "}]":
                self.depth -= 1
                self.closed = self.depth == 0


class _ChunkReader:
    """Turns ``chat.completion.chunk`` objects into stream events and one message (a ``ReplyReader``:
    ``progress`` counts text, reasoning, a call's name or arguments, a whole call, a new finish reason or
    usage; an empty ``choices``, a role-only or ``""`` delta add nothing)."""

    def __init__(self, builder: MessageBuilder, provider: str) -> None:
        self.builder = builder
        self.provider = provider
        self.pending: dict[int, _PendingCall] = {}
        self.completed: set[int] = set()
        self.current: int | None = None
        self.last_index = -1
        self.finish_reason: str | None = None
        self.done = False  # ``[DONE]`` arrived
        self.usage_seen = False
        self.progress = 0
        self.complete = False

    def feed(self, data: str) -> Iterable[StreamEvent]:
        if data[:1] != "{":
            stripped = data.strip()
            if stripped == "[DONE]":
                self.done = self.complete = True
            if stripped == "[DONE]" or not stripped:
                return ()
        chunk = load_chunk(data, self.provider)
        text = self._only_text(chunk)
        if text is not None:  # most chunks of a reply: read without the generators below
            self.builder.add_text(text)
            self.progress += 1
            return (TextDelta(text),)
        return self._feed(chunk)

    def _only_text(self, chunk: dict[str, Any]) -> str | None:
        """The text of a chunk that holds nothing else (no error, usage, finish, reasoning or call, and no
        call in progress that text would complete): what ``_feed`` would make of it, read directly."""
        choices = chunk.get("choices")
        if self.current is not None or type(choices) is not list or not choices:
            return None
        choice, delta = choices[0], None
        if type(choice) is dict and choice.get("finish_reason") is None:
            delta = choice.get("delta")
        if type(delta) is not dict or delta.get("tool_calls") is not None:
            return None
        content = delta.get("content")
        if type(content) is not str or not content:
            return None
        if delta.get("reasoning_content") or delta.get("reasoning"):
            return None
        if chunk.get("error") is not None or chunk.get("usage") is not None:
            return None
        return content

    def _feed(self, chunk: dict[str, Any]) -> Iterator[StreamEvent]:
        if chunk.get("error") is not None:
            message, kind, code = error_details(chunk)
            raise error_for_status(None, message or str(chunk["error"]), self.provider, kind=kind, code=code)
        usage = chunk.get("usage")
        if usage is not None:
            counted = _usage(usage, self.provider)
            self.progress += counted != self.builder.usage
            self.builder.usage = counted
            self.usage_seen = True
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise self._bad("'choices' is not a list", chunk)
        for choice in choices[:1]:
            if not isinstance(choice, dict):
                raise self._bad("a choice is not an object", chunk)
            yield from self._delta(choice.get("delta") or {}, chunk)
            if choice.get("finish_reason") is not None:
                reason = str(choice["finish_reason"])
                self.progress += reason != self.finish_reason
                self.finish_reason = reason
                yield from self._complete_calls()

    def _delta(self, delta: Any, chunk: dict[str, Any]) -> Iterator[StreamEvent]:
        if not isinstance(delta, dict):
            raise self._bad("'delta' is not an object", chunk)
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        content = delta.get("content")
        if self.current is not None and (reasoning or content):
            # Text after a call's deltas means the call is over: it is whole now, not at the finish.
            yield from self._complete(self.current)
            self.current = None
        if isinstance(reasoning, str) and reasoning:
            self.builder.add_thinking(reasoning)
            self.progress += 1
            yield ThinkingDelta(reasoning)
        if isinstance(content, str) and content:
            self.builder.add_text(content)
            self.progress += 1
            yield TextDelta(content)
        calls = delta.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise self._bad("'tool_calls' is not a list", chunk)
            for call in calls:
                yield from self._call_delta(call, chunk)

    def _call_delta(self, call: Any, chunk: dict[str, Any]) -> Iterator[StreamEvent]:
        if not isinstance(call, dict):
            raise self._bad("a tool call delta is not an object", chunk)
        index = call.get("index")
        if isinstance(index, int) and index in self.completed:
            fn = call.get("function")
            if isinstance(fn, dict) and fn.get("arguments"):
                raise self._bad(f"tool call {index} got arguments after its JSON object closed", chunk)
            return
        if index is None:  # some compatible servers omit it: a new id means a new call
            current = self.pending.get(self.current) if self.current is not None else None
            is_new = current is None or (call.get("id") is not None and call["id"] != current.id)
            index = self.last_index + 1 if is_new else self.current
        if not isinstance(index, int):
            raise self._bad("a tool call delta has no integer 'index'", chunk)
        if index != self.current and self.current is not None:
            yield from self._complete(self.current)
        self.current = index
        self.last_index = max(self.last_index, index)
        entry = self.pending.get(index)
        if entry is None:
            entry = self.pending[index] = _PendingCall(
                index, str(call.get("id") or f"call_{uuid.uuid4().hex[:24]}")
            )
        fn = call.get("function") or {}
        if not isinstance(fn, dict):
            raise self._bad("a tool call's 'function' is not an object", chunk)
        if isinstance(fn.get("name"), str) and fn["name"]:
            entry.name += fn["name"]
            self.progress += 1
        arguments = fn.get("arguments")
        if arguments is not None:
            if not isinstance(arguments, str):
                raise self._bad("tool call 'arguments' is not a string", chunk)
            entry.add_arguments(arguments)
            self.progress += bool(arguments)
            if entry.closed:
                yield from self._complete(index)

    def _complete(self, index: int) -> Iterator[StreamEvent]:
        entry = self.pending.pop(index, None)
        if entry is None:
            return
        self.completed.add(index)
        if not entry.name:
            raise BadResponse(f"tool call {entry.id} arrived without a name", provider=self.provider)
        call = tool_call(entry.id, entry.name, "".join(entry.arguments))
        self.builder.add_call(call)
        self.progress += 1
        yield ToolCallReady(call)

    def _complete_calls(self) -> Iterator[StreamEvent]:
        for index in sorted(self.pending):
            yield from self._complete(index)
        self.current = None

    def finish(self) -> Iterator[StreamEvent]:
        if not self.done and self.finish_reason is None:
            raise ConnectionFailed("the stream ended before the reply was complete", provider=self.provider)
        yield from self._complete_calls()
        if not self.usage_seen:  # a server that never counts: unknown, not zero
            self.builder.usage = Usage(accuracy="missing")
        stop = FINISH.get(self.finish_reason or "stop", "stop")
        if self.builder.has_calls and stop != "error":
            stop = "tool_use"
        error = "the reply was stopped by the server's content filter" if stop == "error" else None
        yield ReplyDone(self.builder.message(stop, error))

    def _bad(self, what: str, chunk: dict[str, Any]) -> BadResponse:
        return BadResponse(f"malformed chunk ({what}): {str(chunk)[:200]}", provider=self.provider)


def _usage(data: Any, provider: str) -> Usage:
    if not isinstance(data, dict):
        raise BadResponse(f"malformed chunk ('usage' is not an object): {str(data)[:200]}", provider=provider)
    details = data.get("prompt_tokens_details") or {}
    try:
        cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
        prompt = int(data.get("prompt_tokens") or 0)
        output = int(data.get("completion_tokens") or 0)
    except (TypeError, ValueError) as exc:
        raise BadResponse(
            f"malformed chunk (token counts are not numbers): {str(data)[:200]}", provider=provider
        ) from exc
    return Usage(input_tokens=max(0, prompt - cached), output_tokens=output, cache_read_tokens=cached)
