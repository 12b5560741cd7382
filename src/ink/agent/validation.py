"""Tool-argument validation against the tool's JSON schema, before the tool runs.

fastjsonschema compiles each schema once into a Python function; a failure becomes a message the model
can act on (which argument, what was wrong), never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

_compiled: dict[int, tuple[Mapping[str, Any], Callable[[Any], Any]]] = {}


def validate_arguments(schema: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    """Return None when ``args`` fit ``schema``, else a one-line description of the first problem.
    Each schema object is compiled once (tools keep theirs for their lifetime)."""
    import fastjsonschema

    cached = _compiled.get(id(schema))
    if cached is None or cached[0] is not schema:  # the identity check guards against a reused id
        cached = (schema, fastjsonschema.compile(dict(schema)))
        _compiled[id(schema)] = cached
    try:
        cached[1](dict(args))
    except fastjsonschema.JsonSchemaValueException as exc:
        where = exc.name.replace("data.", "", 1) if exc.name and exc.name != "data" else "arguments"
        return f"{where}: {exc.message.replace(exc.name or 'data', where, 1)}"
    return None
