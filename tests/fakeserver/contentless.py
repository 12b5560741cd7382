"""Events that carry no content, as a server might send while it thinks (``Chatter``): each protocol's
framing is valid, yet none adds text, thinking, a tool call, usage or a stop reason to the reply."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

COMMENT = b": still here\n\n"


def _data(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()


def _openai() -> Iterator[bytes]:
    head = {"id": "chatcmpl-chatter", "object": "chat.completion.chunk", "created": 0, "model": "fake-model"}

    def choice(delta: dict[str, Any]) -> bytes:
        return _data({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})

    while True:
        yield _data({**head, "choices": []})
        yield choice({"role": "assistant"})
        yield choice({"content": ""})
        yield choice({"content": None, "reasoning_content": ""})
        yield choice({})
        yield COMMENT


def _anthropic() -> Iterator[bytes]:
    for index in itertools.count(100):  # blocks of their own, past any the reply opened
        yield _data({"type": "ping"}, "ping")
        block = {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        yield _data(block, "content_block_start")
        delta = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": ""}}
        yield _data(delta, "content_block_delta")
        yield _data({"type": "content_block_stop", "index": index}, "content_block_stop")
        yield _data({"type": "message_delta", "delta": {"stop_reason": None}, "usage": None}, "message_delta")
        yield COMMENT


def _responses() -> Iterator[bytes]:
    for seq in itertools.count(10_000, 3):
        progress = {
            "type": "response.in_progress",
            "sequence_number": seq,
            "response": {"status": "in_progress"},
        }
        yield _data(progress, "response.in_progress")
        text = {"type": "response.output_text.delta", "sequence_number": seq + 1, "item_id": "x", "delta": ""}
        yield _data(text, "response.output_text.delta")
        thought = {**text, "type": "response.reasoning_summary_text.delta", "sequence_number": seq + 2}
        yield _data(thought, "response.reasoning_summary_text.delta")
        yield COMMENT


def contentless_events(protocol: str) -> Iterator[bytes]:
    """Without end: the caller stops when the client leaves."""
    if protocol == "anthropic":
        return _anthropic()
    if protocol == "responses":
        return _responses()
    return _openai()
