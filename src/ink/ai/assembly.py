"""Building one assistant message from streamed pieces, shared by the providers.

Blocks keep their arrival order; consecutive text (or thinking) pieces join one block. Tool calls are
added whole, when their arguments are complete (see ``tool_call``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ink.ai.depth import MAX_JSON_DEPTH, too_deep
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
from ink.ai.models import priced
from ink.ai.unicode import sendable_json, sendable_text


class GrowingBlocks:
    """Assistant blocks in arrival order, whose last text or thinking block grows piece by piece.

    A reply may stream tens of thousands of tiny pieces: joining each into a new frozen block would copy
    the whole text every time (quadratic). Pieces are kept aside and joined into the last block only when
    the blocks are read or another block follows.
    """

    def __init__(self) -> None:
        self._blocks: list[AssistantBlock] = []
        self._pending: list[str] = []  # pieces that belong to the end of the last block

    @property
    def blocks(self) -> list[AssistantBlock]:
        """The blocks with every piece joined in (the live list: callers must not mutate it)."""
        self._join()
        return self._blocks

    def last(self) -> AssistantBlock | None:
        """The last block; its type is right, its text may lag behind its pending pieces."""
        return self._blocks[-1] if self._blocks else None

    def append(self, block: AssistantBlock) -> None:
        self._join()
        self._blocks.append(block)

    def grow(self, text: str) -> None:
        """Add ``text`` to the end of the last block, which must be a text or thinking block."""
        self._pending.append(text)

    def set(self, index: int, block: AssistantBlock) -> None:
        self._join()
        self._blocks[index] = block

    def _join(self) -> None:
        if not self._pending:
            return
        more, self._pending = "".join(self._pending), []
        last = self._blocks[-1]
        if isinstance(last, TextBlock):
            self._blocks[-1] = TextBlock(last.text + more)
        elif isinstance(last, ThinkingBlock):
            self._blocks[-1] = ThinkingBlock(last.thinking + more, last.signature)


class MessageBuilder:
    def __init__(self, model: str, provider: str) -> None:
        self.model = model
        self.provider = provider
        self._growing = GrowingBlocks()
        self.usage = Usage()

    @property
    def blocks(self) -> list[AssistantBlock]:
        return self._growing.blocks

    def add_text(self, text: str) -> None:
        if isinstance(self._growing.last(), TextBlock):
            self._growing.grow(text)
        else:
            self._growing.append(TextBlock(text))

    def add_thinking(self, text: str, *, new_block: bool = False) -> None:
        if isinstance(self._growing.last(), ThinkingBlock) and not new_block:
            self._growing.grow(text)
        else:
            self._growing.append(ThinkingBlock(text))

    def sign_thinking(self, signature: str) -> None:
        """Attach a signature (Anthropic's proof, OpenAI's encrypted reasoning item) to the thinking block
        it closes: the latest one since the last text or call. Reasoning that streamed no text at all (an
        empty OpenAI reasoning summary) gets an empty thinking block of its own to carry it."""
        blocks = self._growing.blocks
        for i in range(len(blocks) - 1, -1, -1):
            block = blocks[i]
            if isinstance(block, ThinkingBlock):
                self._growing.set(i, ThinkingBlock(block.thinking, (block.signature or "") + signature))
                return
            if isinstance(block, TextBlock | ToolCall):
                break
        self._growing.append(ThinkingBlock("", signature))

    def add_call(self, call: ToolCall) -> None:
        self._growing.append(call)

    def add_block(self, block: AssistantBlock) -> None:
        """A block that arrives whole (Anthropic's redacted thinking)."""
        self._growing.append(block)

    @property
    def has_calls(self) -> bool:
        return any(isinstance(b, ToolCall) for b in self._growing.blocks)

    def message(self, stop: StopReason, error_message: str | None = None) -> AssistantMessage:
        blocks = tuple(b for b in self._growing.blocks if not (isinstance(b, TextBlock) and not b.text))
        usage = priced(self.usage, self.model)
        return AssistantMessage(blocks, stop, self.model, self.provider, usage, error_message)


def tool_call(call_id: str, name: str, raw: str) -> ToolCall:
    """The call with its JSON arguments parsed. Arguments that cannot be used (invalid or cut-off JSON,
    not an object, nesting deeper than ``MAX_JSON_DEPTH``) do not fail the reply: the call carries the
    problem in ``arguments_error`` and is answered with it, so the model can send it again."""
    if not raw.strip():
        return ToolCall(call_id, name, {})
    try:  # NaN and Infinity are not JSON: no request could carry them back
        value = json.loads(raw, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting too deep to parse
        reason = (
            "nest too deeply to parse" if isinstance(exc, RecursionError) else f"are not valid JSON ({exc})"
        )
        return _unusable(call_id, name, f"has malformed JSON arguments: they {reason}", raw)
    if not isinstance(value, dict):
        return _unusable(call_id, name, "has arguments that are not a JSON object", raw)
    if too_deep(value):
        return _unusable(call_id, name, f"has arguments nested deeper than {MAX_JSON_DEPTH} levels", raw)
    return ToolCall(call_id, name, sendable_json(value, raw))


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _unusable(call_id: str, name: str, problem: str, raw: str) -> ToolCall:
    start = sendable_text(raw[:200])
    return ToolCall(call_id, name, {}, f"{problem}; they began {start!r} ({len(raw)} characters)")


_scan_object: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]  # C scanner


def _loads(data: str) -> Any:
    """``json.loads(data)``; an object with nothing around it (every chunk of a reply) goes straight to
    the scanner, without the wrapper's type checks and two whitespace searches."""
    if data[:1] == "{":
        try:
            value, end = _scan_object(data, 0)
        except (ValueError, StopIteration, RecursionError):
            pass  # json.loads raises the error with its usual message
        else:
            if end == len(data):
                return value
    return json.loads(data)


def load_chunk(data: str, provider: str) -> dict[str, Any]:
    """One SSE ``data`` payload as a JSON object. Raises ``BadResponse`` naming what was wrong."""
    try:
        value = _loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting too deep to parse
        raise BadResponse(
            f"malformed chunk (invalid JSON: {exc}): {data[:200]!r}", provider=provider
        ) from exc
    if not isinstance(value, dict):
        raise BadResponse(f"malformed chunk (not a JSON object): {data[:200]!r}", provider=provider)
    return sendable_json(value, data)  # a "\\ud800" in model text must not poison the history
