"""Reading JSON so that every value read can be written back as it came, and means one thing.

Python reads ``1e400`` as infinity and ``NaN`` as not-a-number, neither of which JSON can express: an id
read that way would be echoed as ``null``. ``load_json`` refuses such a line instead, with
an error that names the number, so a client never gets an answer it cannot match to its request.

An object that names a key twice is refused too: JSON leaves its meaning open, Python keeps the last,
other readers the first. ``{"decision": "deny", "decision": "allow"}`` answered a permission question
"allow" where a client, a proxy or a log that reads the first saw a "deny" (R39: an answer that can be
read two ways is not an answer).
"""

from __future__ import annotations

import json
import math
from typing import Any

_SHOWN = 40  # characters of an offending number quoted in the error


def load_json(text: str | bytes) -> Any:
    """``json.loads`` that raises ``ValueError`` for NaN/Infinity literals and for numbers out of the
    range of a float (``1e400``, and ``1e-400``, which would read as 0), instead of reading them as
    values JSON cannot write back."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=_unique)
    except DuplicateKey as exc:
        raise DuplicateKey(exc.key, text) from None


class DuplicateKey(ValueError):
    """An object names ``key`` twice; ``lenient`` reads the line as Python would (the last one wins),
    only to find what to echo in the refusal (its ``id``, unless that is the key named twice)."""

    def __init__(self, key: str, text: str | bytes) -> None:
        super().__init__(f"the key {key[:_SHOWN]!r} appears twice in one object: refused, not guessed at")
        self.key = key
        self.text = text

    def lenient(self) -> Any:
        """The line read that way, or None when it cannot be read at all (what follows the object named
        twice is not JSON, or nests too deep): then there is nothing to echo, and the line is refused
        all the same, never let out of the reader (one bad line must not end ink)."""
        try:
            return json.loads(self.text, parse_constant=_no_constant, parse_float=_finite)
        except (ValueError, RecursionError):
            return None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            raise DuplicateKey(key, "")
        seen.add(key)
    raise AssertionError("unreachable")  # pragma: no cover


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    mantissa = text.lower().split("e", 1)[0]
    if not math.isfinite(value) or (value == 0.0 and any(d in mantissa for d in "123456789")):
        raise ValueError(f"the number {text[:_SHOWN]} is out of range (use a string or an integer)")
    return value
