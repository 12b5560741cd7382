"""Rendering a neutral ``Reply`` into each protocol's SSE stream, chunk by chunk.

The result is a list of items the server writes in order: ``bytes`` (one complete SSE event, written and
flushed on its own) or a control step (``Gate``, ``Disconnect``, ``Pause``) honoured at that position.
Wire formats follow the real services: OpenAI ``chat.completion.chunk`` objects ending with
``data: [DONE]``; Anthropic named events from ``message_start`` to ``message_stop``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeAlias

from tests.fakeserver.script import (
    Chatter,
    Disconnect,
    Gate,
    Malformed,
    Pause,
    Raw,
    Reply,
    Text,
    Thinking,
    ToolCallStep,
)

Item: TypeAlias = bytes | Gate | Disconnect | Pause | Chatter
NextId = Callable[[], int]

OPENAI_STOP = {"stop": "stop", "tool_use": "tool_calls", "length": "length"}
ANTHROPIC_STOP = {"stop": "end_turn", "tool_use": "tool_use", "length": "max_tokens"}


def sse_data(obj: Any) -> bytes:
    return f"data: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()


def sse_event(name: str, obj: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()


def split_pieces(value: str, pieces: int) -> list[str]:
    """Split ``value`` into at most ``pieces`` non-empty consecutive parts (at least one part)."""
    pieces = max(1, min(pieces, len(value)))
    size, extra = divmod(len(value), pieces)
    out, start = [], 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        out.append(value[start:end])
        start = end
    return out


def args_text(step: ToolCallStep) -> str:
    return step.args if isinstance(step.args, str) else json.dumps(step.args)


def _control(step: object) -> Item | None:
    if isinstance(step, Malformed):
        head = f"event: {step.event}\n" if step.event else ""
        return f"{head}data: {step.raw}\n\n".encode()
    if isinstance(step, Raw):
        return step.data
    if isinstance(step, Gate | Disconnect | Pause | Chatter):
        return step
    return None


class _OpenAIChunks:
    """Builds ``chat.completion.chunk`` events sharing one id, creation time and model."""

    def __init__(self, reply: Reply, body: dict[str, Any], next_id: NextId) -> None:
        options = body.get("stream_options")
        self.include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        self.head = {
            "id": f"chatcmpl-fake{next_id()}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": reply.model or str(body.get("model", "fake-model")),
            "system_fingerprint": "fp_fake",
        }

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        extra = {"usage": None} if self.include_usage else {}
        return sse_data({**self.head, "choices": [choice], **extra})

    def usage(self, reply: Reply) -> bytes:
        return sse_data({**self.head, "choices": [], "usage": openai_usage(reply)})


def render_openai(reply: Reply, body: dict[str, Any], next_id: NextId) -> list[Item]:
    chunks = _OpenAIChunks(reply, body, next_id)
    out: list[Item] = [chunks.chunk({"role": "assistant", "content": "", "refusal": None})]
    index = 0
    for step in reply.steps:
        if isinstance(step, Text):
            out.append(chunks.chunk({"content": step.text}))
        elif isinstance(step, Thinking):
            out.append(chunks.chunk({"content": None, "reasoning_content": step.text}))
        elif isinstance(step, ToolCallStep):
            call_id = step.id or f"call_fake{next_id()}"
            head = {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": step.name, "arguments": ""},
            }
            out.append(chunks.chunk({"tool_calls": [head]}))
            for piece in split_pieces(args_text(step), step.pieces):
                out.append(chunks.chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
            index += 1
        elif (item := _control(step)) is not None:
            out.append(item)
    out.append(chunks.chunk({}, OPENAI_STOP.get(reply.stop_reason, reply.stop_reason)))
    if chunks.include_usage and reply.report_usage:
        out.append(chunks.usage(reply))
    out.append(b"data: [DONE]\n\n")
    if reply.linger is not None:
        out.append(reply.linger)
    return out


def openai_usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input_tokens + u.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


class _AnthropicBlocks:
    """Tracks the open content block so consecutive text (or thinking) steps share one block."""

    def __init__(self, out: list[Item]) -> None:
        self.out = out
        self.index = -1
        self.kind: str | None = None
        self.signature: str | None = None

    def start(self, kind: str, block: dict[str, Any]) -> None:
        self.close()
        self.index += 1
        self.kind = kind
        self.out.append(
            sse_event(
                "content_block_start",
                {"type": "content_block_start", "index": self.index, "content_block": block},
            )
        )

    def delta(self, delta: dict[str, Any]) -> None:
        self.out.append(
            sse_event(
                "content_block_delta", {"type": "content_block_delta", "index": self.index, "delta": delta}
            )
        )

    def close(self) -> None:
        if self.kind is None:
            return
        if self.kind == "thinking" and self.signature is not None:
            self.delta({"type": "signature_delta", "signature": self.signature})
        self.out.append(sse_event("content_block_stop", {"type": "content_block_stop", "index": self.index}))
        self.kind, self.signature = None, None


def _message_start(reply: Reply, body: dict[str, Any], next_id: NextId) -> bytes:
    u = reply.usage
    usage = {
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_write_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "output_tokens": 1,
    }
    message: dict[str, Any] = {
        "id": f"msg_fake{next_id()}",
        "type": "message",
        "role": "assistant",
        "model": reply.model or str(body.get("model", "fake-model")),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return sse_event("message_start", {"type": "message_start", "message": message})


def render_anthropic(reply: Reply, body: dict[str, Any], next_id: NextId) -> list[Item]:
    out: list[Item] = [_message_start(reply, body, next_id), sse_event("ping", {"type": "ping"})]
    blocks = _AnthropicBlocks(out)
    for step in reply.steps:
        if isinstance(step, Text):
            if blocks.kind != "text":
                blocks.start("text", {"type": "text", "text": ""})
            blocks.delta({"type": "text_delta", "text": step.text})
        elif isinstance(step, Thinking):
            if blocks.kind != "thinking":
                blocks.start("thinking", {"type": "thinking", "thinking": ""})
            blocks.delta({"type": "thinking_delta", "thinking": step.text})
            blocks.signature = step.signature
        elif isinstance(step, ToolCallStep):
            call_id = step.id or f"toolu_fake{next_id()}"
            blocks.start("tool_use", {"type": "tool_use", "id": call_id, "name": step.name, "input": {}})
            blocks.delta({"type": "input_json_delta", "partial_json": ""})
            for piece in split_pieces(args_text(step), step.pieces):
                blocks.delta({"type": "input_json_delta", "partial_json": piece})
            blocks.close()
        elif (item := _control(step)) is not None:
            out.append(item)
    blocks.close()
    stop = ANTHROPIC_STOP.get(reply.stop_reason, reply.stop_reason)
    delta = {"stop_reason": stop, "stop_sequence": None}
    usage = {"output_tokens": reply.usage.output_tokens}
    out.append(sse_event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    out.append(sse_event("message_stop", {"type": "message_stop"}))
    if reply.linger is not None:
        out.append(reply.linger)
    return out
