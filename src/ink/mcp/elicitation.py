"""A server's question to the user (MCP ``elicitation/create``, form mode), the same in every frontend.

The broker emits ``elicitation_request {id, server, message, schema}`` and waits for ``answer``: the
user accepts (with ``content`` that fits the schema), declines, or cancels. A question nobody answers
within ``timeout_seconds`` is cancelled; so is one whose server withdraws it (its call was interrupted).
Where nobody can answer (print mode, batch, ACP), the manager declines without asking.

The schema MCP allows is a flat object whose properties are strings (``minLength``, ``maxLength``,
``format``), numbers or integers (``minimum``, ``maximum``), booleans, single choices (``enum``, or
``oneOf`` of ``const``) and multiple choices (an array of such): ``fields`` reads it, ``check`` holds an
answer to it.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ink.run.events import ElicitationRequest, ElicitationResolved, RunEvent

ACTIONS = ("accept", "decline", "cancel")
MAX_OPEN = 5  # questions open at once; a server that asks more is declined (nobody answers a flood)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class BadAnswer(ValueError):
    """An answer that does not fit (unknown question, bad action, content against the schema)."""


class Field(msgspec.Struct, frozen=True):
    """One property of the requested schema, as a form shows it."""

    name: str
    kind: str  # string, number, integer, boolean, choice, choices
    title: str
    description: str = ""
    required: bool = False
    choices: tuple[str, ...] = ()
    default: Any = None


def fields(schema: Mapping[str, Any]) -> list[Field]:
    """The form's fields, in the schema's order. Raises ``BadAnswer`` for a schema MCP does not allow."""
    properties = schema.get("properties")
    if schema.get("type", "object") != "object" or not isinstance(properties, Mapping):
        raise BadAnswer("the requested schema is not a flat object")
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    found = []
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            raise BadAnswer(f"property {name!r} is not a schema")
        kind, choices = _kind(prop)
        title, description = prop.get("title"), prop.get("description")
        title = title if isinstance(title, str) else str(name)
        description = description if isinstance(description, str) else ""
        found.append(Field(name, kind, title, description, name in required, choices, prop.get("default")))
    return found


def _kind(prop: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        return "choices", _choices(items) if isinstance(items, Mapping) else ()
    choices = _choices(prop)
    if choices:
        return "choice", choices
    if kind in ("string", "number", "integer", "boolean"):
        return str(kind), ()
    raise BadAnswer(f"a property of type {kind!r} cannot be asked")


def _choices(prop: Mapping[str, Any]) -> tuple[str, ...]:
    listed = prop.get("enum")
    if isinstance(listed, list):
        return tuple(str(v) for v in listed)
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list):
        return tuple(str(o.get("const")) for o in options if isinstance(o, Mapping) and "const" in o)
    return ()


def check(schema: Mapping[str, Any], content: Any) -> dict[str, Any]:
    """``content`` if it answers ``schema``. Raises ``BadAnswer`` saying what does not fit."""
    if not isinstance(content, Mapping):
        raise BadAnswer("content must be an object of the schema's properties")
    known = {field.name: field for field in fields(schema)}
    unknown = [key for key in content if key not in known]
    if unknown:
        raise BadAnswer(f"{unknown[0]!r} is not asked for (asked: {', '.join(known) or 'nothing'})")
    for field in known.values():
        if field.name in content:
            _check_value(field, schema["properties"][field.name], content[field.name])
        elif field.required:
            raise BadAnswer(f"{field.name!r} is required")
    return dict(content)


def _check_value(field: Field, prop: Mapping[str, Any], value: Any) -> None:
    name = field.name
    if field.kind == "boolean" and not isinstance(value, bool):
        raise BadAnswer(f"{name!r} must be true or false")
    if field.kind in ("number", "integer"):
        number_kind = int if field.kind == "integer" else (int, float)
        if isinstance(value, bool) or not isinstance(value, number_kind):
            raise BadAnswer(f"{name!r} must be {'an integer' if field.kind == 'integer' else 'a number'}")
        low, high = prop.get("minimum"), prop.get("maximum")
        if (isinstance(low, int | float) and value < low) or (isinstance(high, int | float) and value > high):
            raise BadAnswer(f"{name!r} must be between {low} and {high}")
    if field.kind == "string":
        _check_text(name, prop, value)
    if field.kind == "choice" and value not in field.choices:
        raise BadAnswer(f"{name!r} must be one of {', '.join(field.choices)}")
    if field.kind == "choices" and (
        not isinstance(value, list) or any(item not in field.choices for item in value)
    ):
        raise BadAnswer(f"{name!r} must be a list of {', '.join(field.choices)}")


def _check_text(name: str, prop: Mapping[str, Any], value: Any) -> None:
    if not isinstance(value, str):
        raise BadAnswer(f"{name!r} must be a string")
    low, high = prop.get("minLength"), prop.get("maxLength")
    if (isinstance(low, int) and len(value) < low) or (isinstance(high, int) and len(value) > high):
        raise BadAnswer(f"{name!r} must be {low or 0} to {high or 'any number of'} characters")
    if prop.get("format") == "email" and not _EMAIL.match(value):
        raise BadAnswer(f"{name!r} must be an e-mail address")


class ElicitationBroker:
    def __init__(self, emit: Callable[[RunEvent], None], timeout_seconds: float = 600.0) -> None:
        self._emit = emit
        self.timeout_seconds = timeout_seconds
        self._open: dict[str, tuple[ElicitationRequest, asyncio.Future[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)

    def open_questions(self) -> list[ElicitationRequest]:
        return [request for request, _ in self._open.values()]

    async def ask(self, server: str, message: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The user's answer, ``{action, content?}``; never raises for a missing answer (cancel)."""
        try:
            fields(schema)
        except BadAnswer:
            return {"action": "decline"}  # a form nobody could fill in
        if len(self._open) >= MAX_OPEN:
            return {"action": "decline"}
        question = ElicitationRequest(f"elicit-{next(self._ids)}", server, message, dict(schema))
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._open[question.id] = (question, future)
        self._emit(question)
        answer = {"action": "cancel"}
        try:
            answer = await asyncio.wait_for(asyncio.shield(future), self.timeout_seconds)
        except TimeoutError:
            pass
        finally:
            self._open.pop(question.id, None)
            self._emit(ElicitationResolved(question.id, answer["action"]))
        return answer

    def cancel_all(self) -> None:
        """Cancel every open question (the run whose tool call asked it has ended)."""
        for _question, future in list(self._open.values()):
            if not future.done():
                future.set_result({"action": "cancel"})

    def answer(self, question_id: str, action: str, content: Any = None) -> None:
        """Raises ``BadAnswer`` (the question stays open when only the content did not fit)."""
        entry = self._open.get(question_id)
        if entry is None or entry[1].done():
            raise BadAnswer(f"no open question {question_id!r} (never asked, answered, or withdrawn)")
        if action not in ACTIONS:
            raise BadAnswer(f"action must be one of {', '.join(ACTIONS)}")
        reply: dict[str, Any] = {"action": action}
        if action == "accept":
            reply["content"] = check(entry[0].schema, content if content is not None else {})
        entry[1].set_result(reply)
