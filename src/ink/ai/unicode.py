"""Text that can always be sent: the one policy for bytes and code points that are not valid UTF-8.

Every request is JSON encoded as UTF-8, so a single lone surrogate anywhere in the history makes every
later request, and every resumed session, fail with ``UnicodeEncodeError``. The policy (docs/security.md,
"Undecodable text"), applied wherever text enters the history:

- bytes that are not UTF-8 (a latin-1 ``git diff`` on stdin, a file name, a command's output) become
  ``\\xNN`` escapes, one per byte: visible, and precise enough for the model to name the file again
  (the file tools read ``\\xNN`` in a path back as the byte);
- a lone surrogate of Python's ``surrogateescape`` range (U+DC80-U+DCFF, how Python hands over an
  undecodable byte of a file name, ``argv`` or the environment) is that byte: ``\\xNN`` as well;
- any other lone surrogate (a JSON ``"\\ud800"`` from a client or a model) becomes U+FFFD; a high and low
  surrogate that stand next to each other are joined into the character they encode.

Text without surrogates is returned as it is (the same object), so the check costs one scan.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

import msgspec

from ink.ai.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    UserMessage,
)

REPLACEMENT = "\ufffd"
_MAX_DEPTH = 200  # bounds the walk; tool arguments that nest deeper are refused before they get here


# The patterns are compiled on first use: most runs never meet a surrogate or an escape of one.
@cache
def _surrogates() -> re.Pattern[str]:
    return re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


@cache
def _surrogate_escape() -> re.Pattern[str]:
    """A JSON text can only produce a lone surrogate through an escape of one (its raw bytes were decoded)."""
    return re.compile(r"\\u[dD][89a-fA-F]")


@cache
def _surrogate_escape_bytes() -> re.Pattern[bytes]:
    return re.compile(rb"\\u[dD][89a-fA-F]")


T = TypeVar("T")
M = TypeVar("M", bound=Message)


def decode_bytes(data: bytes) -> str:
    """``data`` as text: UTF-8, with each byte that is not part of valid UTF-8 as ``\\xNN``."""
    return data.decode("utf-8", "backslashreplace")


def sendable_text(text: str) -> str:
    """``text`` with every surrogate code point replaced as the module docstring says."""
    if not _has_surrogate(text):
        return text
    return _surrogates().sub(_replace, text)


def sendable_json(value: T, source: str | bytes | None = None) -> T:
    """A parsed JSON value (objects, lists, strings; keys too) with sendable strings. ``source``: the JSON
    text it was parsed from, when known; without a surrogate escape in it the value is returned as is."""
    if isinstance(source, str) and ("\\u" not in source or not _surrogate_escape().search(source)):
        return value
    if isinstance(source, bytes) and (b"\\u" not in source or not _surrogate_escape_bytes().search(source)):
        return value
    return _clean_value(value, 0)  # type: ignore[no-any-return]


def sendable_message(message: M) -> M:
    """``message`` with every text it carries sendable (the same object when nothing had to change)."""
    if not _message_has_surrogate(message):  # the usual case, checked without building anything
        return message
    match message:
        case UserMessage(text=text):
            fixed: Message = msgspec.structs.replace(message, text=sendable_text(text))
        case ToolResult(output=output, name=name, tool_call_id=call_id):
            output, name, call_id = (sendable_text(t) for t in (output, name, call_id))
            fixed = msgspec.structs.replace(message, output=output, name=name, tool_call_id=call_id)
        case AssistantMessage(content=content, error_message=error_message):
            blocks = tuple(_sendable_block(b) for b in content)
            error = None if error_message is None else sendable_text(error_message)
            fixed = msgspec.structs.replace(message, content=blocks, error_message=error)
        case _:
            return message
    return fixed  # type: ignore[return-value]


def _sendable_block(block: TextBlock | ThinkingBlock | ToolCall) -> TextBlock | ThinkingBlock | ToolCall:
    match block:
        case TextBlock(text=text):
            return TextBlock(sendable_text(text))
        case ThinkingBlock(thinking=thinking, signature=signature, redacted=redacted):
            sign = None if signature is None else sendable_text(signature)
            return ThinkingBlock(sendable_text(thinking), sign, redacted)
        case ToolCall(id=call_id, name=name, arguments=arguments):
            return ToolCall(sendable_text(call_id), sendable_text(name), sendable_json(dict(arguments)))
    return block


def _message_has_surrogate(message: Message) -> bool:
    match message:
        case UserMessage(text=text):
            return _has_surrogate(text)
        case ToolResult(output=output, name=name, tool_call_id=call_id):
            return _has_surrogate(output) or _has_surrogate(name) or _has_surrogate(call_id)
        case AssistantMessage(content=content, error_message=error_message):
            return any(map(_block_has_surrogate, content)) or _has_surrogate(error_message or "")
    return False


def _block_has_surrogate(block: TextBlock | ThinkingBlock | ToolCall) -> bool:
    match block:
        case TextBlock(text=text):
            return _has_surrogate(text)
        case ThinkingBlock(thinking=thinking, signature=signature):
            return _has_surrogate(thinking) or _has_surrogate(signature or "")
        case ToolCall(id=call_id, name=name, arguments=arguments):
            return _has_surrogate(call_id) or _has_surrogate(name) or _clean_value(arguments, 0) != arguments
    return False


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _replace(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:
        return found.encode("utf-16", "surrogatepass").decode("utf-16")
    code = ord(found)
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else REPLACEMENT


def _clean_value(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return sendable_text(value)
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, Mapping):
        return {sendable_text(str(k)): _clean_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_value(v, depth + 1) for v in value]
    return value
