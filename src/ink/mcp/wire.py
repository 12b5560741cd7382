"""MCP's JSON-RPC messages as bytes: one message to a line out, one line (or SSE event) back to a message.

A server's line can be anything: invalid UTF-8, not JSON, nested thousands deep, hundreds of megabytes.
``decode`` never raises anything but ``BadMessage``, which says what was wrong and, when it can tell,
which request the line answered (``request_id``), so that one call fails and the server's other calls
go on. The id is read from the parsed line when it parses, else from where serializers put it: right
after ``"jsonrpc":"2.0"`` at the head (the Python SDK, pydantic's field order) or as the last member at
the tail (the TypeScript SDK), patterns that cannot occur there by accident.

msgspec decodes in one linear pass (a 100 MB line in ~0.15 s) and refuses NaN, numbers out of range and
lone surrogate escapes; a line it refuses only for such an escape is read again by the standard parser and
its strings made sendable (``ink.ai.unicode``), as a prompt with one would be.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ink.ai.depth import too_deep
from ink.ai.unicode import sendable_json

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one message from a server: far above any real result
MAX_DEPTH = 200  # nesting of a message; results deeper than ink's own limit fail their call
ID_WINDOW = 256  # bytes of a line's head and tail searched for the id of a line that does not parse

RequestId = int | str

_HEAD_ID = re.compile(rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{1,64}")')
_TAIL_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{1,64}")\s*\}\s*$')
_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


class BadMessage(Exception):
    """A line or event that is not a JSON-RPC message ink can use; ``request_id`` is the request it
    answered, when that could be read."""

    def __init__(self, problem: str, request_id: RequestId | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.request_id = request_id


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as compact JSON (no newline). Raises ``TypeError`` for a value JSON cannot hold;
    a lone surrogate (from model output) is written as ``?`` by the replacement of ``errors``."""
    try:
        return _encoder.encode(message)
    except (UnicodeEncodeError, msgspec.EncodeError):
        return json.dumps(message, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")


def decode(data: bytes) -> dict[str, Any]:
    """One message from the server. Raises ``BadMessage``."""
    try:
        value = _decoder.decode(data)
    except RecursionError:
        raise BadMessage(
            f"it sent a message nested too deep to read ({size_text(data)})", find_id(data)
        ) from None
    except msgspec.DecodeError as exc:
        value = _decode_again(data, str(exc))
    if not isinstance(value, dict):
        raise BadMessage("it sent JSON that is not a message object")
    if too_deep(value, MAX_DEPTH):
        raise BadMessage(f"it sent a message nested more than {MAX_DEPTH} levels deep", _id_of(value))
    return value


def _decode_again(data: bytes, problem: str) -> Any:
    """msgspec refused ``data``: invalid UTF-8, not JSON, or a lone surrogate escape (which the standard
    parser reads). Raises ``BadMessage`` with the id when it can be found."""
    if "UTF-8" in problem:
        text = data.decode("utf-8", "replace")
        raise BadMessage("it sent a line that is not valid UTF-8", _id_in_text(text) or find_id(data))
    if b"\\u" in data:
        try:
            return sendable_json(json.loads(data, parse_constant=_no_constant), data)
        except (ValueError, RecursionError):
            pass
    raise BadMessage(f"it sent a line that is not JSON ({problem}): {preview(data)}", find_id(data))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _id_in_text(text: str) -> RequestId | None:
    try:
        value = _decoder.decode(text.encode("utf-8"))
    except (msgspec.DecodeError, RecursionError):
        return None
    return _id_of(value) if isinstance(value, dict) else None


def _id_of(value: Mapping[str, Any]) -> RequestId | None:
    found = value.get("id")
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


def find_id(data: bytes) -> RequestId | None:
    """The id of a line that does not parse, from its head or tail (see the module's docstring)."""
    match = _HEAD_ID.match(data[:ID_WINDOW]) or _TAIL_ID.search(data[-ID_WINDOW:])
    if match is None:
        return None
    raw = match.group(1)
    return raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw)


def preview(data: bytes, limit: int = 80) -> str:
    text = data[:limit].decode("utf-8", "backslashreplace")
    return repr(text + ("…" if len(data) > limit else ""))


def size_text(data: bytes | int) -> str:
    size = data if isinstance(data, int) else len(data)
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    return f"{size / 1024:.1f} KiB" if size >= 1024 else f"{size} bytes"
