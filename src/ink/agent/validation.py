"""Tool-argument validation against the tool's JSON schema, before the tool runs.

fastjsonschema compiles each schema once into a Python function; a failure becomes a message the model
can act on (which argument, what was wrong), never an exception.

Arguments that plainly fit a schema made only of the keywords ink's own tools use (``PLAIN_KEYWORDS``)
are passed without fastjsonschema: importing it and compiling a schema (it generates Python and execs it)
cost ~5 ms of a one-call ``ink -p`` run. ``plainly_valid`` reads each keyword as fastjsonschema does and
says only "certainly valid" or "not proven"; everything not proven (a problem, another keyword, an MCP
tool's schema) is judged by fastjsonschema, so the verdicts and messages are its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

_compiled: dict[int, tuple[Mapping[str, Any], Callable[[Any], Any]]] = {}
_plain: dict[int, tuple[Mapping[str, Any], bool]] = {}  # schema id -> (schema, is_plain(schema))
PLAIN_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "minItems", "minimum", "maximum",
     "exclusiveMinimum", "description", "title"}
)  # fmt: skip
_TYPES = frozenset({"object", "array", "string", "boolean", "number", "integer"})
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum")


def validate_arguments(schema: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    """Return None when ``args`` fit ``schema``, else a one-line description of the first problem.
    Each schema object is compiled once (tools keep theirs for their lifetime)."""
    if plainly_valid(schema, dict(args)):
        return None
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


def plainly_valid(schema: Mapping[str, Any], value: Any) -> bool:
    """True only when ``value`` fits ``schema`` for certain: ``schema`` is plain (``is_plain``) and each
    keyword is read the way fastjsonschema (draft 7) reads it. False means "not proven", not "invalid"."""
    cached = _plain.get(id(schema))
    if cached is None or cached[0] is not schema:  # the identity check guards against a reused id
        cached = (schema, is_plain(schema))
        _plain[id(schema)] = cached
    return cached[1] and _fits(schema, value)


def is_plain(schema: Any) -> bool:
    """Whether ``schema`` uses only ``PLAIN_KEYWORDS``, each with a value of the expected kind, and is one
    fastjsonschema compiles (it refuses a required name that no property allows, or named twice).
    ``additionalProperties`` must be a real bool: fastjsonschema reads 0 as false and fails on 1."""
    if not isinstance(schema, Mapping) or not schema.keys() <= PLAIN_KEYWORDS:
        return False
    if not isinstance(schema.get("type"), str) or schema["type"] not in _TYPES:
        return False
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    least = schema.get("minItems", 0)
    return (
        all(_is_number(schema[b]) for b in _BOUNDS if b in schema)
        and isinstance(properties, Mapping)
        and all(map(is_plain, properties.values()))
        and isinstance(required, list)
        and all(isinstance(name, str) for name in required)
        and len(set(required)) == len(required)
        and isinstance(extra, bool)
        and (extra is True or set(required) <= properties.keys())
        and isinstance(least, int)
        and not isinstance(least, bool)
        and least >= 0
        and ("items" not in schema or is_plain(schema["items"]))
    )


def _fits(schema: Mapping[str, Any], value: Any) -> bool:
    """``value`` against a plain schema: every keyword applies only to values of its kind."""
    match schema["type"]:
        case "object":
            return isinstance(value, dict) and _object_fits(schema, value)
        case "array":
            return isinstance(value, list | tuple) and _array_fits(schema, value)
        case "string":
            return isinstance(value, str)
        case "boolean":
            return isinstance(value, bool)
        case "number":
            return _is_number(value) and _within(schema, value)
        case _:  # integer
            whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
            return whole and not isinstance(value, bool) and _within(schema, value)


def _object_fits(schema: Mapping[str, Any], value: dict[Any, Any]) -> bool:
    properties = schema.get("properties", {})
    if any(name not in value for name in schema.get("required", ())):
        return False
    if schema.get("additionalProperties", True) is False and not value.keys() <= properties.keys():
        return False
    return all(_fits(properties[name], item) for name, item in value.items() if name in properties)


def _array_fits(schema: Mapping[str, Any], value: list[Any] | tuple[Any, ...]) -> bool:
    if len(value) < schema.get("minItems", 0):
        return False
    return "items" not in schema or all(_fits(schema["items"], item) for item in value)


def _within(schema: Mapping[str, Any], value: int | float) -> bool:
    """The bounds as fastjsonschema compares them (a NaN passes every one, as it does there)."""
    return not (
        ("minimum" in schema and value < schema["minimum"])
        or ("maximum" in schema and value > schema["maximum"])
        or ("exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"])
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
