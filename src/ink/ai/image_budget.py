"""How many images one model request carries: the newest within a budget, the older ones named instead.

Images stay in the history (a screenshot an MCP tool returned, one the user attached), so every later
request would send each of them again: twenty results of 1 MB images made a 28 MB request on every turn.
``within_budget`` keeps the newest images up to ``MAX_REQUEST_IMAGES`` and ``MAX_REQUEST_IMAGE_BYTES``
(decoded) and replaces the others, in the request only, by a line in their message's text saying the
model saw them earlier; the history and the session file keep them.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ink.ai.messages import Message, ToolImage, ToolResult, UserMessage

MAX_REQUEST_IMAGES = 20
MAX_REQUEST_IMAGE_BYTES = 10 * 1024 * 1024


def within_budget(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` as sent: the same objects when their images fit (the usual case)."""
    count = size = 0
    over: set[int] = set()
    for index in range(len(messages) - 1, -1, -1):
        for image in _images(messages[index]):
            count += 1
            size += len(image.data) * 3 // 4
            if count > MAX_REQUEST_IMAGES or size > MAX_REQUEST_IMAGE_BYTES:
                over.add(index)
    if not over:
        return messages
    return [_without_images(m) if i in over else m for i, m in enumerate(messages)]


def _images(message: Message) -> tuple[ToolImage, ...]:
    if isinstance(message, ToolResult | UserMessage):
        return message.images or ()
    return ()


def _without_images(message: Message) -> Message:
    """The message without its images, its text naming them (a message's images go or stay together:
    the newest ones first in the budget, so an older message is the one left without)."""
    images = _images(message)
    note = (
        f"\n[{len(images)} image(s) left out of this request: the model saw them earlier, and the request "
        f"carries at most {MAX_REQUEST_IMAGES} images, {MAX_REQUEST_IMAGE_BYTES >> 20} MiB]"
    )
    if isinstance(message, ToolResult):
        return msgspec.structs.replace(message, output=message.output + note, images=None)
    if isinstance(message, UserMessage):
        return msgspec.structs.replace(message, text=message.text + note, images=None)
    return message
