"""Measuring and cutting a history: the mechanism under compaction (no I/O, no model calls).

Token counts here are estimates: a reported ``Usage`` when one is valid, else characters / 4. Every cut
keeps the history valid for strict APIs: the kept part starts at a user or assistant message, never at a
tool result, so no call is separated from its result (R19).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from msgspec.structs import replace

from ink.ai.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    UserMessage,
)

CHARS_PER_TOKEN = 4
IMAGE_CHARS = 1600 * CHARS_PER_TOKEN  # an image costs about 1,600 tokens (a large screenshot's price)
SHORTEN_SLACK = 200
TRUNCATED_NOTE = "\n[... {n} characters of this output were removed to save context ...]\n"


def message_chars(message: Message) -> int:
    match message:
        case UserMessage(text=text, images=images):
            return len(text) + IMAGE_CHARS * len(images or ())
        case ToolResult(output=output, name=name, images=images):
            return len(output) + len(name) + IMAGE_CHARS * len(images or ())
        case AssistantMessage(content=content):
            return sum(_block_chars(b) for b in content)
    return 0


def _block_chars(block: TextBlock | ThinkingBlock | ToolCall) -> int:
    match block:
        case TextBlock(text=text):
            return len(text)
        case ThinkingBlock(thinking=thinking, signature=signature):
            return len(thinking) + len(signature or "")
        case ToolCall(name=name, arguments=arguments):
            return len(name) + len(json.dumps(arguments, ensure_ascii=False, default=str))
    return 0


def chars_to_tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def messages_tokens(messages: Sequence[Message]) -> int:
    return chars_to_tokens(sum(message_chars(m) for m in messages))


def last_replacement_time(messages: Sequence[Message]) -> float:
    """When the history was last compacted, as far as it shows: the newest summary's timestamp."""
    return max(
        (m.timestamp for m in messages if isinstance(m, UserMessage) and m.kind == "summary"), default=0.0
    )


def estimate_tokens(messages: Sequence[Message], overhead_tokens: int, valid_after: float) -> int:
    """Tokens the next request will need for ``messages``.

    The newest complete assistant reply newer than ``valid_after`` reports what its request used (system
    prompt and tools included); what came after it is estimated from its characters. Replies from before a
    compaction describe a longer history and are not used; without a usable one, everything is estimated
    and ``overhead_tokens`` (system prompt, tool specs) is added.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            isinstance(message, AssistantMessage)
            and message.stop_reason not in ("aborted", "error")
            and message.usage.context_tokens > 0
            and message.timestamp > valid_after
        ):
            return message.usage.context_tokens + messages_tokens(messages[index + 1 :])
    return overhead_tokens + messages_tokens(messages)


def find_cut(messages: Sequence[Message], keep_tokens: int) -> int | None:
    """Where the kept recent part should start, or None when nothing older is worth summarising.

    The cut is the earliest turn boundary (a user or assistant message) whose tail fits ``keep_tokens``;
    when even the last turn is larger, the last boundary. The older part must hold more than an earlier
    summary, or summarising it again would gain nothing.
    """
    boundaries = [
        i for i in range(1, len(messages)) if isinstance(messages[i], UserMessage | AssistantMessage)
    ]
    if not boundaries:
        return None
    tail_tokens = [0] * (len(messages) + 1)
    for i in range(len(messages) - 1, -1, -1):
        tail_tokens[i] = tail_tokens[i + 1] + chars_to_tokens(message_chars(messages[i]))
    fitting = [i for i in boundaries if tail_tokens[i] <= keep_tokens]
    cut = fitting[0] if fitting else boundaries[-1]
    older = messages[:cut]
    if all(isinstance(m, UserMessage) and m.kind == "summary" for m in older):
        return None
    return cut


def truncate_tool_outputs(messages: Sequence[Message], end: int, max_chars: int) -> tuple[list[Message], int]:
    """Copy of ``messages`` whose tool results before index ``end`` keep at most about ``max_chars``
    characters (head and tail, with a note of what was removed). Returns it and the characters removed."""
    out = list(messages)
    removed = 0
    for i in range(min(end, len(out))):
        message = out[i]
        if not isinstance(message, ToolResult):
            continue
        shortened = shorten(message.output, max_chars)
        if len(shortened) < len(message.output):
            removed += len(message.output) - len(shortened)
            out[i] = replace(message, output=shortened)
    return out, removed


def shorten(text: str, max_chars: int) -> str:
    """``text`` cut to its first and last ``max_chars`` characters with a note in between, when that saves
    something worth it."""
    if len(text) <= max_chars + SHORTEN_SLACK:  # also leaves text shortened before as it is
        return text
    head = max_chars * 2 // 3
    tail = max_chars - head
    cut = len(text) - head - tail
    return text[:head] + TRUNCATED_NOTE.format(n=cut) + (text[-tail:] if tail else "")


def transcript(messages: Sequence[Message], max_chars: int, output_chars: int = 2_000) -> str:
    """The messages as plain text for a summarising request: tool outputs shortened, and the middle of
    the whole left out when it is longer than ``max_chars`` (the start and the recent end matter most)."""
    parts = [_render(m, output_chars) for m in messages]
    text = "\n\n".join(parts)
    return shorten(text, max_chars)


def _render(message: Message, output_chars: int) -> str:
    match message:
        case UserMessage(kind="summary", text=text):
            return f"[summary of the conversation before this point]\n{text}"
        case UserMessage(kind="interruption", text=text):
            return f"[the user interrupted the run] {text}"
        case UserMessage(text=text):
            return f"[user]\n{text}"
        case ToolResult(name=name, output=output, is_error=is_error):
            label = "tool error" if is_error else "tool result"
            return f"[{label}: {name}]\n{shorten(output, output_chars)}"
        case AssistantMessage(content=content):
            return "\n".join(_render_block(b) for b in content if not isinstance(b, ThinkingBlock))
    return ""


def _render_block(block: TextBlock | ThinkingBlock | ToolCall) -> str:
    if isinstance(block, ToolCall):
        args = json.dumps(block.arguments, ensure_ascii=False, default=str)
        return f"[assistant called {block.name}] {shorten(args, 1_000)}"
    if isinstance(block, TextBlock):
        return f"[assistant]\n{block.text}"
    return ""
