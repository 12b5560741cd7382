"""ink messages -> an OpenAI Chat Completions request body.

Rules the API enforces (and the fake server's strict mode checks): every assistant ``tool_calls`` id is
followed by a ``tool`` message with that id before the next user or assistant message; arguments are a
JSON *string*. Thinking is not sent back (Chat Completions has no field for it). An assistant message
with neither text nor calls (an aborted reply that had only begun) is left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ink.ai.image_budget import within_budget
from ink.ai.messages import AssistantMessage, Message, ToolImage, ToolResult, UserMessage
from ink.ai.models import lookup
from ink.ai.provider import ModelRequest, ToolSpec

EMPTY_RESULT = "(no output)"


def openai_body(request: ModelRequest, *, max_tokens_field: str = "max_tokens") -> dict[str, Any]:
    """``request.options`` are merged last: provider-specific fields (temperature, reasoning_effort...)."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": openai_messages(request.system, request.messages, images=lookup(request.model).images),
        "stream": True,
        "stream_options": {"include_usage": True},
        max_tokens_field: request.max_tokens,
    }
    if request.tools:
        body["tools"] = openai_tools(request.tools)
    body.update(request.options)
    return body


def openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
        }
        for t in tools
    ]


def openai_messages(
    system: str, messages: Sequence[Message], *, images: bool = False
) -> list[dict[str, Any]]:
    """``images``: the model takes images (else a message's images are left out; its text names them). A
    tool message holds text only, so the images of a batch's results follow its last tool message as one
    user message (tool messages must stay together); a user's images go in its own message. The newest
    images within ``ink.ai.image_budget`` go; the text of the others says they were sent earlier."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    pending: list[dict[str, Any]] = []
    for message in within_budget(messages) if images else messages:
        if pending and not isinstance(message, ToolResult):
            out.append(_images_message(pending))
            pending = []
        if images and isinstance(message, ToolResult) and message.images:
            pending += [_image_part(image) for image in message.images]
        match message:
            case UserMessage(text=text, images=attached) if images and attached:
                parts = [{"type": "text", "text": text}, *map(_image_part, attached)]
                out.append({"role": "user", "content": parts})
            case UserMessage(text=text):
                out.append({"role": "user", "content": text})
            case ToolResult():
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": message.tool_call_id,
                        "content": message.output or EMPTY_RESULT,
                    }
                )
            case AssistantMessage():
                converted = _assistant(message)
                if converted is not None:
                    out.append(converted)
    if pending:
        out.append(_images_message(pending))
    return out


def _image_part(image: ToolImage) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _images_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    text = {"type": "text", "text": "The images returned by the tool calls above:"}
    return {"role": "user", "content": [text, *parts]}


def _assistant(message: AssistantMessage) -> dict[str, Any] | None:
    text = message.text
    calls = [
        {
            "id": call.id,
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": json.dumps(dict(call.arguments), ensure_ascii=False),
            },
        }
        for call in message.tool_calls
    ]
    if not text and not calls:
        return None
    converted: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        converted["tool_calls"] = calls
    return converted
