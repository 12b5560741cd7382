"""Tool arguments that plainly fit are passed without fastjsonschema (``validation.plainly_valid``), and
that shortcut never passes what fastjsonschema refuses: for generated schemas and JSON values, it agrees
with fastjsonschema exactly on schemas of the plain keywords, and on any other schema it defers."""

from __future__ import annotations

import math
from typing import Any

import fastjsonschema
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ink.agent.validation import PLAIN_KEYWORDS, plainly_valid, validate_arguments
from ink.tools.bash import BashTool
from ink.tools.edit import EditTool
from ink.tools.read import ReadTool

NAMES = st.sampled_from(["a", "b", "c"])
NUMBERS = st.one_of(st.integers(-3, 3), st.floats(-3, 3), st.sampled_from([0.5, 1.0, -0.0]))
BOUNDS = st.dictionaries(st.sampled_from(["minimum", "maximum", "exclusiveMinimum"]), NUMBERS, max_size=2)
# Keywords or shapes the shortcut does not read: the schema must go to fastjsonschema.
OTHER = st.sampled_from(
    [{"enum": [1, "a"]}, {"default": 1}, {"pattern": "^a"}, {"type": ["string", "null"]}, {"minimum": True},
     {"additionalProperties": {"type": "string"}}, {"items": [{"type": "string"}]}, {"maxItems": 1}]
)  # fmt: skip


def with_bounds(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, **draw(BOUNDS)} if draw(st.booleans()) else schema


@st.composite
def leaf(draw: st.DrawFn) -> dict[str, Any]:
    schema = {"type": draw(st.sampled_from(["string", "boolean", "number", "integer"]))}
    if draw(st.booleans()):
        schema["description"] = "d"
    return with_bounds(draw, schema)


def compound(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    array = st.fixed_dictionaries(
        {"type": st.just("array")}, optional={"items": inner, "minItems": st.integers(0, 2)}
    )
    obj = st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(NAMES, inner, max_size=3),
            "required": st.lists(NAMES, max_size=2, unique=True),
            "additionalProperties": st.booleans(),
        },
    )
    return st.one_of(array, obj)


PLAIN_SCHEMAS = st.recursive(leaf(), compound, max_leaves=6)
SCHEMAS = st.one_of(PLAIN_SCHEMAS, st.tuples(PLAIN_SCHEMAS, OTHER).map(lambda pair: {**pair[0], **pair[1]}))
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-4, 4), st.floats(), st.text(max_size=3)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
    max_leaves=8,
)


def fastjsonschema_accepts(schema: dict[str, Any], value: Any) -> bool | None:
    """Its verdict; None for a schema it refuses to compile (a required name that no property allows) or
    fails on (``additionalProperties: 1``)."""
    try:
        validate = fastjsonschema.compile(schema)
    except (fastjsonschema.JsonSchemaDefinitionException, TypeError):
        return None
    try:
        validate(value)
    except fastjsonschema.JsonSchemaValueException:
        return False
    return True


def only_plain(schema: Any) -> bool:
    if not isinstance(schema, dict) or not schema.keys() <= PLAIN_KEYWORDS:
        return False
    if any(isinstance(schema.get(b), bool) for b in ("minimum", "maximum", "exclusiveMinimum")):
        return False
    if not isinstance(schema.get("additionalProperties", True), bool):
        return False
    if len(set(schema.get("required", []))) != len(schema.get("required", [])):
        return False
    inner = [*schema.get("properties", {}).values(), *([schema["items"]] if "items" in schema else [])]
    return isinstance(schema.get("type"), str) and all(map(only_plain, inner))


@settings(max_examples=400, deadline=None)
@given(schema=SCHEMAS, value=VALUES)
@example(schema={"type": "number", "minimum": 1}, value=math.nan)  # NaN passes every bound in both
@example(schema={"type": "integer"}, value=2.0)
@example(schema={"type": "integer"}, value=True)
@example(schema={"type": "object", "required": ["a"], "additionalProperties": False}, value={"a": 1})
@example(schema={"type": "object", "additionalProperties": 0}, value={"x": 1})  # 0 is false there
@example(schema={"type": "object", "additionalProperties": 1}, value={"x": 1})  # it cannot compile 1
@example(schema={"type": "object", "required": ["a", "a"]}, value={"a": 1})  # nor a name required twice
@example(  # a schema fastjsonschema refuses to compile, never reached by the value: still refused
    schema={"type": "array", "items": {"type": "object", "required": ["a"], "additionalProperties": False}},
    value=[],
)
def test_the_shortcut_agrees_with_fastjsonschema(schema: dict[str, Any], value: Any) -> None:
    shortcut = plainly_valid(schema, value)
    verdict = fastjsonschema_accepts(schema, value)
    if only_plain(schema) and verdict is not None:
        assert shortcut == verdict
    else:
        assert not shortcut


def test_the_tools_usual_arguments_take_the_shortcut_and_problems_keep_their_message() -> None:
    assert plainly_valid(BashTool.parameters, {"command": "echo hi", "timeout": 5})
    assert plainly_valid(ReadTool.parameters, {"path": "a.py", "offset": 3, "limit": 10})
    assert plainly_valid(EditTool.parameters, {"path": "a.py", "old_text": "a", "new_text": "b"})
    assert validate_arguments(BashTool.parameters, {"command": "x", "timeout": 0}) == (
        "timeout: timeout must be bigger than 0"
    )
    assert validate_arguments(ReadTool.parameters, {"path": "a", "extra": 1}) == (
        "arguments: arguments must not contain {'extra'} properties"
    )
