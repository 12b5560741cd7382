"""Typed views of a recorded event list: tests pick events by class, so the type checker knows which
fields an event has (no ``type: ignore`` for the event union)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

E = TypeVar("E")


def events_of(events: Iterable[object], kind: type[E], **fields: Any) -> list[E]:
    """The events of class ``kind``, in order, whose named fields equal the given values."""
    return [e for e in events if isinstance(e, kind) and matches(e, fields)]


def matches(event: object, fields: dict[str, Any]) -> bool:
    return all(getattr(event, name) == value for name, value in fields.items())
