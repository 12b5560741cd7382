"""The JSON form of ink's typed data: records (``msgspec.Struct``) become objects with camelCase keys.

One converter serves messages, events and results, so a field is spelled the same in stream-json, RPC and
session files. Fields whose value is ``None`` are left out: an optional field is either present or absent,
except the fields a record names in its ``json_always`` class variable, which the contract requires and
which may be ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import msgspec


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
        for name, key, keep_none in names:
            item = getattr(value, name)
            if item is not None or keep_none:
                out[key] = item if type(item) in _PLAIN else to_json(item)
        return out
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


_NAMES: dict[type, tuple[tuple[str, str, bool], ...] | None] = {}


def _field_names(cls: type) -> tuple[tuple[str, str, bool], ...] | None:
    """(attribute, JSON key, keep when None) of each field of a record, worked out once per class
    (events are converted on the hot path, one per streamed chunk). None for anything else."""
    try:
        return _NAMES[cls]
    except KeyError:
        names = None
        if issubclass(cls, msgspec.Struct):
            always: tuple[str, ...] = getattr(cls, "json_always", ())
            names = tuple((name, camel(name), name in always) for name in cls.__struct_fields__)
        _NAMES[cls] = names
        return names
