"""OpenAI Responses API streaming (``POST {base_url}/responses``): text, reasoning summaries (as thinking),
encrypted reasoning items kept across turns without server-side storage, function calls, and usage with
cached and reasoning tokens.

Each output item streams between ``response.output_item.added`` and ``response.output_item.done``. A
function call is whole at its ``output_item.done`` (its ``ToolCallReady`` is yielded then, R19); a
reasoning item's done carries its ``encrypted_content``, kept as the item's JSON in the thinking block's
signature and sent back unchanged (``openai_responses_convert``). The reply is complete at
``response.completed`` (or ``response.incomplete``: cut at the output limit); ``response.failed`` and
``error`` events raise the mapped ``ProviderError``; a stream that ends before any of them is a
``ConnectionFailed``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ink.ai.assembly import MessageBuilder, load_chunk, tool_call
from ink.ai.errors import BadResponse, ConnectionFailed
from ink.ai.http import HttpEndpoint, RequestTimeouts, RetryPolicy, SseProvider
from ink.ai.http1 import HttpClient
from ink.ai.http_errors import error_for_status
from ink.ai.messages import StopReason, ToolCall, Usage
from ink.ai.openai import OPENAI_BASE_URL, bearer_headers
from ink.ai.openai_responses_convert import responses_body
from ink.ai.provider import ModelRequest
from ink.ai.stream import ReplyDone, StreamEvent, TextDelta, ThinkingDelta, ToolCallReady

TEXT_EVENTS = ("response.output_text.delta", "response.refusal.delta")
REASONING_EVENTS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")
END_EVENTS = ("response.completed", "response.incomplete", "response.failed")


class OpenAIResponsesProvider(SseProvider):
    """Streams replies from ``{base_url}/responses``; ``client`` as ``OpenAIProvider``."""

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str = OPENAI_BASE_URL,
        client: HttpClient | None = None,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        name: str = "openai-responses",
        timeouts: RequestTimeouts | None = None,
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

    @property
    def url(self) -> str:
        return f"{self.base_url}/responses"

    def _headers(self) -> dict[str, str]:
        return bearer_headers(self._api_key, self.http)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return responses_body(request)

    def _reader(self, request: ModelRequest) -> _EventReader:
        return _EventReader(MessageBuilder(request.model, self.name), self.name)


class _EventReader:
    """Turns Responses stream events into stream events and one message (a ``ReplyReader``: ``progress``
    counts text, reasoning, a call's arguments, a finished call or signed reasoning item; events such as
    ``response.in_progress`` and ``""`` deltas add nothing)."""

    def __init__(self, builder: MessageBuilder, provider: str) -> None:
        self.builder = builder
        self.provider = provider
        self.arguments: dict[str, list[str]] = {}  # function call item id -> argument pieces so far
        self.summary_at: dict[str, int] = {}  # reasoning item id -> summary part being streamed
        self.stop: StopReason | None = None
        self.error: str | None = None
        self.progress = 0
        self.complete = False  # the response ended (``stop`` says how)

    def feed(self, data: str) -> Iterable[StreamEvent]:
        if not data.strip():
            return ()
        return self._event(load_chunk(data, self.provider))

    def _event(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        kind = event.get("type")
        if kind in TEXT_EVENTS:
            delta = _text(event, "delta")
            if delta:
                self.builder.add_text(delta)
                self.progress += 1
                yield TextDelta(delta)
        elif kind in REASONING_EVENTS:
            yield from self._reasoning(event)
        elif kind == "response.function_call_arguments.delta":
            piece = _text(event, "delta")
            self.arguments.setdefault(str(event.get("item_id")), []).append(piece)
            self.progress += bool(piece)
        elif kind == "response.output_item.done":
            yield from self._item_done(event.get("item"))
        elif kind in END_EVENTS:
            self._end(str(kind), event.get("response"))
        elif kind == "error":
            raise _failure(event, self.provider)

    def _reasoning(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        delta = _text(event, "delta")
        if not delta:
            return
        item_id = str(event.get("item_id"))
        part = event.get("summary_index", event.get("content_index", 0))
        first = item_id not in self.summary_at
        if not first and part != self.summary_at[item_id]:
            delta = "\n\n" + delta  # a new summary paragraph of the same reasoning
        self.summary_at[item_id] = part if isinstance(part, int) else 0
        self.builder.add_thinking(delta, new_block=first)
        self.progress += 1
        yield ThinkingDelta(delta)

    def _item_done(self, item: Any) -> Iterator[StreamEvent]:
        if not isinstance(item, dict):
            raise BadResponse(f"malformed output item: {str(item)[:200]}", provider=self.provider)
        if item.get("type") == "reasoning" and item.get("encrypted_content"):
            signature = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
            self.builder.sign_thinking(signature)
            self.progress += 1
            yield ThinkingDelta("", signature)
        elif item.get("type") == "function_call":
            call = self._call(item)
            self.builder.add_call(call)
            self.progress += 1
            yield ToolCallReady(call)

    def _call(self, item: dict[str, Any]) -> ToolCall:
        call_id, name = item.get("call_id"), item.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str) or not name:
            raise BadResponse(
                f"function call without call_id or name: {str(item)[:200]}", provider=self.provider
            )
        raw = item.get("arguments")
        if not isinstance(raw, str):
            raw = "".join(self.arguments.get(str(item.get("id")), []))
        return tool_call(call_id, name, raw)

    def _end(self, kind: str, response: Any) -> None:
        response = response if isinstance(response, dict) else {}
        if kind == "response.failed":
            raise _failure(response, self.provider)
        usage = response.get("usage")
        self.builder.usage = _usage(usage, self.provider) if usage is not None else Usage(accuracy="missing")
        self.complete = True
        self.progress += 1
        if kind == "response.completed":
            self.stop = "tool_use" if self.builder.has_calls else "stop"
            return
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        if reason == "content_filter":
            self.stop, self.error = "error", "the reply was stopped by the server's content filter"
        else:
            self.stop = "length"

    def finish(self) -> Iterator[StreamEvent]:
        if self.stop is None:
            raise ConnectionFailed("the stream ended before the reply was complete", provider=self.provider)
        yield ReplyDone(self.builder.message(self.stop, self.error))


def _text(event: dict[str, Any], key: str) -> str:
    value = event.get(key)
    return value if isinstance(value, str) else ""


def _failure(payload: dict[str, Any], provider: str) -> Exception:
    nested = payload.get("error")
    error: dict[str, Any] = nested if isinstance(nested, dict) else payload
    message = str(error.get("message") or "the response failed")
    code = error.get("code")
    return error_for_status(None, message, provider, kind=None, code=str(code) if code else None)


def _usage(data: Any, provider: str) -> Usage:
    if not isinstance(data, dict):
        raise BadResponse(f"malformed usage: {str(data)[:200]}", provider=provider)
    details = data.get("input_tokens_details")
    output_details = data.get("output_tokens_details")
    try:
        cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
        reasoning = (
            int(output_details.get("reasoning_tokens") or 0) if isinstance(output_details, dict) else 0
        )
        prompt = int(data.get("input_tokens") or 0)
        output = int(data.get("output_tokens") or 0)
    except (TypeError, ValueError) as exc:
        raise BadResponse(
            f"malformed usage (counts are not numbers): {str(data)[:200]}", provider=provider
        ) from exc
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )
