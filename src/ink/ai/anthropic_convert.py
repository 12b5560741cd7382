"""ink messages -> an Anthropic Messages request body.

Rules the API enforces (checked by the fake server's strict mode):
- roles alternate and the first message is the user's, so a run of tool results and user messages
  (results, then an interruption marker or a steer) becomes ONE user message: ``tool_result`` blocks
  first, then the text blocks;
- every ``tool_use`` has its ``tool_result`` in the immediately following user message;
- text blocks are never empty or whitespace-only (they are left out; a message left empty is dropped
  and its neighbours merged);
- thinking blocks are sent back only with their signature.
Prompt caching: the system prompt and the last user message carry ``cache_control`` breakpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ink.ai.image_budget import within_budget
from ink.ai.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolImage,
    ToolResult,
    UserMessage,
)
from ink.ai.models import lookup
from ink.ai.openai_responses_convert import reasoning_item
from ink.ai.provider import ModelRequest, ToolSpec

EMPTY_RESULT = "(no output)"
CACHE = {"type": "ephemeral"}


def anthropic_body(request: ModelRequest) -> dict[str, Any]:
    """``request.options`` are merged last (for example ``thinking``, ``temperature``)."""
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": anthropic_messages(request.messages, images=lookup(request.model).images),
        "stream": True,
    }
    if request.system.strip():
        body["system"] = [{"type": "text", "text": request.system, "cache_control": CACHE}]
    if request.tools:
        body["tools"] = anthropic_tools(request.tools)
    body.update(request.options)
    return body


def anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": dict(t.parameters)} for t in tools]


def anthropic_messages(messages: Sequence[Message], *, images: bool = False) -> list[dict[str, Any]]:
    """``images``: the model takes images, so a tool result's and a user's images go with them (the newest
    within ``ink.ai.image_budget``)."""
    merged: list[dict[str, Any]] = []
    for message in within_budget(messages) if images else messages:
        role, blocks = _convert(message, images)
        if not blocks:
            continue
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    for entry in merged:
        if entry["role"] == "user":
            # Results must come first in their message; the sort is stable for everything else.
            entry["content"].sort(key=lambda b: b["type"] != "tool_result")
    _mark_cache(merged)
    return merged


def _convert(message: Message, images: bool) -> tuple[str, list[dict[str, Any]]]:
    match message:
        case UserMessage(text=text, images=attached):
            blocks = [{"type": "text", "text": text}] if text.strip() else []
            return "user", blocks + [_image(i) for i in attached or () if images]
        case ToolResult():
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.output if message.output.strip() else EMPTY_RESULT,
            }
            if message.is_error:
                block["is_error"] = True
            if images and message.images:
                block["content"] = [{"type": "text", "text": block["content"]}, *map(_image, message.images)]
            return "user", [block]
        case AssistantMessage():
            return "assistant", [b for b in map(_assistant_block, message.content) if b is not None]
    raise TypeError(f"not a message: {message!r}")


def _image(image: ToolImage) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _assistant_block(block: TextBlock | ThinkingBlock | ToolCall) -> dict[str, Any] | None:
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text} if text.strip() else None
        case ThinkingBlock(signature=data, redacted=True):
            return {"type": "redacted_thinking", "data": data} if data else None
        case ThinkingBlock(thinking=thinking, signature=signature):
            # Without its signature the API rejects the block; dropping it only loses old reasoning. So is
            # OpenAI's encrypted reasoning (a session that switched provider): it is no Anthropic proof.
            if not signature or reasoning_item(block) is not None:
                return None
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case ToolCall():
            return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.arguments)}


def _mark_cache(merged: list[dict[str, Any]]) -> None:
    for entry in reversed(merged):
        if entry["role"] == "user":
            entry["content"][-1] = {**entry["content"][-1], "cache_control": CACHE}
            return
