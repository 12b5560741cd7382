"""Building one assistant message from streamed pieces, shared by the providers.

Blocks keep their arrival order; consecutive text (or thinking) pieces join one block. Tool calls are
added whole, when their arguments are complete (see ``parse_arguments``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ink.ai.errors import BadResponse
from ink.ai.messages import (
    AssistantBlock,
    AssistantMessage,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)


class MessageBuilder:
    def __init__(self, model: str, provider: str) -> None:
        self.model = model
        self.provider = provider
        self.blocks: list[AssistantBlock] = []
        self.usage = Usage()

    def add_text(self, text: str) -> None:
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, TextBlock):
            self.blocks[-1] = TextBlock(last.text + text)
        else:
            self.blocks.append(TextBlock(text))

    def add_thinking(self, text: str, *, new_block: bool = False) -> None:
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, ThinkingBlock) and not new_block:
            self.blocks[-1] = ThinkingBlock(last.thinking + text, last.signature)
        else:
            self.blocks.append(ThinkingBlock(text))

    def sign_thinking(self, signature: str) -> None:
        """Attach Anthropic's signature to the latest thinking block."""
        for i in range(len(self.blocks) - 1, -1, -1):
            block = self.blocks[i]
            if isinstance(block, ThinkingBlock):
                self.blocks[i] = ThinkingBlock(block.thinking, (block.signature or "") + signature)
                return
        raise BadResponse("a thinking signature arrived without a thinking block", provider=self.provider)

    def add_call(self, call: ToolCall) -> None:
        self.blocks.append(call)

    @property
    def has_calls(self) -> bool:
        return any(isinstance(b, ToolCall) for b in self.blocks)

    def message(self, stop: StopReason, error_message: str | None = None) -> AssistantMessage:
        blocks = tuple(b for b in self.blocks if not (isinstance(b, TextBlock) and not b.text))
        return AssistantMessage(blocks, stop, self.model, self.provider, self.usage, error_message)


def parse_arguments(raw: str, name: str, call_id: str, provider: str) -> Mapping[str, Any]:
    """A tool call's JSON arguments as an object. Empty means no arguments. Raises ``BadResponse``."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise BadResponse(
            f"tool call {name!r} ({call_id}) has malformed JSON arguments: {exc}: {raw[:200]!r}",
            provider=provider,
        ) from exc
    if not isinstance(value, dict):
        raise BadResponse(
            f"tool call {name!r} ({call_id}) arguments are not a JSON object: {raw[:200]!r}",
            provider=provider,
        )
    return value


def load_chunk(data: str, provider: str) -> dict[str, Any]:
    """One SSE ``data`` payload as a JSON object. Raises ``BadResponse`` naming what was wrong."""
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise BadResponse(
            f"malformed chunk (invalid JSON: {exc}): {data[:200]!r}", provider=provider
        ) from exc
    if not isinstance(value, dict):
        raise BadResponse(f"malformed chunk (not a JSON object): {data[:200]!r}", provider=provider)
    return value
