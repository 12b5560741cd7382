"""The JSON form of ink's typed data: dataclasses become objects with camelCase keys.

One converter serves messages, events and results, so a field is spelled the same in stream-json, RPC and
session files. Fields whose value is ``None`` are left out: an optional field is either present or absent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import cache
from typing import Any


@cache
def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_PLAIN = frozenset({str, int, float, bool, type(None)})  # exact types that are their own JSON form


def to_json(value: Any) -> Any:
    cls = type(value)
    if cls in _PLAIN:
        return value
    names = _field_names(cls)
    if names is not None:
        out: dict[str, Any] = {}
        for name, key in names:
            item = getattr(value, name)
            if item is not None:
                out[key] = item if type(item) in _PLAIN else to_json(item)
        return out
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


_NAMES: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _field_names(cls: type) -> tuple[tuple[str, str], ...] | None:
    """(attribute, JSON key) of each field of a dataclass, worked out once per class (events are
    converted on the hot path, one per streamed chunk). None for anything that is not a dataclass."""
    try:
        return _NAMES[cls]
    except KeyError:
        names = None
        if dataclasses.is_dataclass(cls):
            names = tuple((f.name, camel(f.name)) for f in dataclasses.fields(cls))
        _NAMES[cls] = names
        return names
