"""ink messages -> an OpenAI Responses API request body (``POST /responses``).

Nothing is stored on the server (``store: false``): every request carries the whole conversation as
input items. Reasoning survives between turns as the service's encrypted reasoning items
(``include: ["reasoning.encrypted_content"]``): the provider keeps each one, exactly as it arrived, as the
``signature`` of a ``ThinkingBlock`` (a JSON object of ``type: "reasoning"``), and it is sent back
unchanged.

Rules the API enforces (and the fake server's strict mode checks): every ``function_call`` is answered by
a ``function_call_output`` with its ``call_id``; a reasoning item must be followed by the item it led to
(a message or a function call), so reasoning whose reply was cut off before anything followed it (an
abort) is left out; reasoning without its encrypted content cannot be sent at all.
"""

from __future__ import annotations

import json
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
from ink.ai.provider import ModelRequest, ToolSpec

EMPTY_RESULT = "(no output)"


def responses_body(request: ModelRequest) -> dict[str, Any]:
    """``request.options`` are merged last (``reasoning``, ``temperature``...)."""
    body: dict[str, Any] = {
        "model": request.model,
        "input": responses_input(request.messages, images=lookup(request.model).images),
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": request.max_tokens,
    }
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = responses_tools(request.tools)
    body.update(request.options)
    return body


def responses_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": dict(t.parameters),
            "strict": False,  # ink's schemas have optional fields; strict mode would require them all
        }
        for t in tools
    ]


def responses_input(messages: Sequence[Message], *, images: bool = False) -> list[dict[str, Any]]:
    """``images``: the model takes images, so a user's attached images go with its text (else the text,
    which names them, goes alone). A ``function_call_output`` holds text only, so the images of a batch's
    results follow its last output as one user message (the text of each result names them). The newest
    images within ``ink.ai.image_budget`` go; the text of the others says they were sent earlier."""
    items: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for message in within_budget(messages) if images else messages:
        if pending and not isinstance(message, ToolResult):
            items.append(_images_message(pending))
            pending = []
        if images and isinstance(message, ToolResult) and message.images:
            pending += [_input_image(image) for image in message.images]
        match message:
            case UserMessage(text=text, images=attached) if images and attached:
                parts = [{"type": "input_text", "text": text}, *map(_input_image, attached)]
                items.append({"role": "user", "content": parts})
            case UserMessage(text=text):
                items.append({"role": "user", "content": text})
            case ToolResult():
                output = message.output or EMPTY_RESULT
                items.append(
                    {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}
                )
            case AssistantMessage():
                items.extend(_assistant_items(message))
    if pending:
        items.append(_images_message(pending))
    return items


def _images_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    text = {"type": "input_text", "text": "The images returned by the tool calls above:"}
    return {"role": "user", "content": [text, *parts]}


def _input_image(image: ToolImage) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:{image.mime_type};base64,{image.data}"}


def reasoning_item(block: ThinkingBlock) -> dict[str, Any] | None:
    """The reasoning item a thinking block carries (see the module doc), or None."""
    if not block.signature or not block.signature.startswith("{"):
        return None
    try:
        item = json.loads(block.signature)
    except (ValueError, RecursionError):  # RecursionError: a session file's, nested too deep to parse
        return None
    if isinstance(item, dict) and item.get("type") == "reasoning" and item.get("encrypted_content"):
        return item
    return None


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # reasoning items not yet followed by what they led to
    for block in message.content:
        if isinstance(block, ThinkingBlock):
            item = reasoning_item(block)
            if item is not None:
                waiting.append(item)
            continue
        converted = _output_item(block)
        if converted is None:
            continue
        items += [*waiting, converted]
        waiting = []
    return items


def _output_item(block: TextBlock | ToolCall) -> dict[str, Any] | None:
    if isinstance(block, ToolCall):
        arguments = json.dumps(dict(block.arguments), ensure_ascii=False)
        return {"type": "function_call", "call_id": block.id, "name": block.name, "arguments": arguments}
    if not block.text:
        return None
    content = [{"type": "output_text", "text": block.text, "annotations": []}]
    return {"type": "message", "role": "assistant", "content": content}
