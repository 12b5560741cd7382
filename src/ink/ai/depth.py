"""How deep a JSON value may nest: one bound for tool-call arguments, session entries and protocol lines.

Python's JSON parser and every recursive walk over a value (validation, copies, the session writer) fail
with ``RecursionError`` somewhere near a thousand levels, far from where the value came in. Values are
measured where they enter instead (``too_deep``) and refused there with a clear error. No tool takes
arguments anywhere near this deep.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_JSON_DEPTH = 100


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` (objects and lists) nests more than ``limit`` levels. Iterative: never recurses."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
