"""The lines of a session file.

One JSON object per line, ``type`` first (listing counts messages without parsing every line):

    {"type":"session","version":1,"id":..,"cwd":..,"model":..,"provider":..,"inkVersion":..,"created":..}
    {"type":"message","timestamp":..,"message":{..message_to_json..}}
    {"type":"compaction","timestamp":..,"reason":"compaction","removed":R,"kept":K,"messages":[..]}
    {"type":"replace", ..same fields as compaction, for any other wholesale replacement..}
    {"type":"model_change","timestamp":..,"model":..,"provider":..}
    {"type":"usage","timestamp":..,"model":..,"source":..,"usage":{..}}  (a sub-agent's model call)
    {"type":"job_start"|"job_end","timestamp":..,"jobId":..,..}  (a background job: ink.store.jobs)
    {"type":"plan","timestamp":..,"entries":[{"content":..,"status":..}],"explanation"?:..}  (the plan)

A compaction entry says: drop the first ``removed`` messages of the history (which then has ``kept``
messages left) and put ``messages`` (the summary, or truncated copies) in front of what is left. Times are
Unix seconds. A line counts once its newline is written; a last line without one is a torn write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from ink.ai.unicode import sendable_json
from ink.redaction import MIN_SECRET_LENGTH, REDACTED, redact, usable_secrets

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "redact", "redact_tree", "usable_secrets"]  # re-exported

FORMAT_VERSION = 1
MESSAGE_PREFIX = b'{"type":"message"'


def encode(entry: dict[str, Any]) -> bytes:
    """One line, newline included. The history holds no lone surrogate (ink.ai.unicode); should one come
    anyway it is written as a JSON escape, which ``decode`` turns into the replacement policy's text."""
    # default=str: a tool argument JSON cannot hold is stored as its text rather than failing the write
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8", "backslashreplace") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """Parse one line. Raises ``ValueError`` with the reason when it is not a JSON object with a type."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ValueError(f"invalid JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError("not an entry object with a 'type'")
    return sendable_json(data, line)  # repairs a session an older ink wrote with lone surrogates


def ends_complete(data: bytes) -> bool:
    """Whether ``data`` (a session file's bytes) ends with a complete entry: a newline, or a last line
    that parses as an entry although its newline is missing (a crash between the two, or an editor)."""
    if not data or data.endswith(b"\n"):
        return True
    try:
        decode(data[data.rfind(b"\n") + 1 :])
    except ValueError:
        return False
    return True


def redact_tree(value: Any, secrets: Sequence[str]) -> Any:
    """``redact`` applied to every string of a JSON tree, object keys included (a model's tool arguments
    may use a secret as a key). Recognisable credentials (``Authorization`` headers, key formats) go even
    when ``secrets`` is empty."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return _redacted_object(value, secrets)
    if isinstance(value, list):
        return [redact_tree(v, secrets) for v in value]
    return value


def _redacted_object(value: dict[Any, Any], secrets: Sequence[str]) -> dict[Any, Any]:
    """Keys redacted too; two keys that redact alike both stay (``[REDACTED]``, ``[REDACTED]#2``)."""
    out: dict[Any, Any] = {}
    for key, item in value.items():
        name = redact(key, secrets) if isinstance(key, str) else key
        if name != key:
            base, number = name, 1
            while name in out or name in value:
                number += 1
                name = f"{base}#{number}"
        out[name] = redact_tree(item, secrets)
    return out


class SessionHeader(msgspec.Struct):
    """The first line of a session file. Mutable until written: a model change before the first entry
    updates the header instead of adding an entry."""

    id: str
    cwd: str
    model: str
    provider: str
    ink_version: str
    created: float

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.id,
            "cwd": self.cwd,
            "model": self.model,
            "provider": self.provider,
            "inkVersion": self.ink_version,
            "created": self.created,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionHeader:
        """Raises ``ValueError`` when ``data`` is not a session header."""
        if data.get("type") != "session" or not isinstance(data.get("id"), str) or not data["id"]:
            raise ValueError("the first line is not a session header")
        try:
            return cls(
                data["id"],
                str(data.get("cwd", "")),
                str(data.get("model", "")),
                str(data.get("provider", "")),
                str(data.get("inkVersion", "")),
                float(data.get("created", 0.0)),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"malformed session header: {exc}") from exc
