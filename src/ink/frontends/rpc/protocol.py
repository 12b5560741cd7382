"""The RPC wire format: one JSON object per line; parsing and checking a command line.

``parse_line(raw)`` turns one input line (bytes, without its newline) into a ``Command`` whose fields were
checked against the command's ``FieldSpec`` table, or a ``Rejection`` carrying the reason and, when the
line was JSON with an ``id``, that id (so the client can match the error to its request). Nothing here
raises for bad input: every problem becomes a ``Rejection``.

Responses are built with ``response(...)``: ``{"type":"response","id"?,"command"?,"ok",...}``. ``id`` is
present exactly when the command carried one; ``command`` is present when the line named a ``type``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeAlias

import msgspec

from ink.ai.unicode import sendable_json
from ink.frontends.stdio import DuplicateKey, load_json
from ink.vocabulary import ANSWERS, INPUT_MODES, TAKE_MODES

JsonId: TypeAlias = str | int | float


class FieldSpec(msgspec.Struct, frozen=True):
    """One field of a command: a string, optionally one of ``choices``; ``text`` fields must not be
    blank (a blank user message is refused by the model services). ``flag``: a boolean instead."""

    name: str
    choices: tuple[str, ...] = ()
    required: bool = True
    text: bool = False
    flag: bool = False
    json_object: bool = False  # any JSON object (an elicitation's answer)


def _text(name: str = "text") -> FieldSpec:
    return FieldSpec(name, text=True)


INPUT_ID = FieldSpec("inputId")
COMMANDS: dict[str, tuple[FieldSpec, ...]] = {
    "prompt": (_text(),),
    "steer": (_text(), FieldSpec("source", required=False)),  # source: one running sub-agent's id
    "follow_up": (_text(),),
    "interrupt_with": (_text(),),
    "abort": (FieldSpec("source", required=False),),
    "pause": (FieldSpec("source", required=False),),  # R44: the run, or one running sub-agent
    "resume": (FieldSpec("source", required=False),),
    "get_state": (),
    "get_messages": (),
    "get_queue": (),
    "get_mcp": (),
    "set_modes": (
        FieldSpec("steering", TAKE_MODES, required=False),
        FieldSpec("followUp", TAKE_MODES, required=False),
    ),
    "permission": (FieldSpec("requestId"), FieldSpec("decision", ANSWERS)),
    "new_session": (),
    "set_model": (_text("model"), FieldSpec("provider", required=False)),
    "edit_queued": (INPUT_ID, _text()),
    "cancel_queued": (INPUT_ID,),
    "set_queued_mode": (INPUT_ID, FieldSpec("mode", INPUT_MODES)),
    "list_checkpoints": (),
    "elicitation_response": (  # its "id" is the elicitation_request's: the response echoes it
        FieldSpec("action", ("accept", "decline", "cancel")),
        FieldSpec("content", required=False, json_object=True),
    ),
    "list_jobs": (),
    "kill_job": (FieldSpec("jobId"),),
    "rewind": (
        INPUT_ID,
        FieldSpec("files", flag=True),
        FieldSpec("conversation", flag=True),
        FieldSpec("force", required=False, flag=True),
    ),
}
ENVELOPE = ("type", "id")


class Command(msgspec.Struct, frozen=True):
    type: str
    fields: Mapping[str, Any]  # strings, and booleans for ``flag`` fields
    id: JsonId | None = None
    has_id: bool = False


class Rejection(msgspec.Struct, frozen=True):
    """A line that is not a valid command. ``id``/``has_id`` and ``command`` echo what could be read."""

    reason: str
    id: Any = None
    has_id: bool = False
    command: str | None = None


def parse_line(raw: bytes) -> Command | Rejection:
    text, utf8_problem = _decode(raw)
    try:
        data = load_json(text)
    except DuplicateKey as exc:  # refused; its id and type still echoed when they are not the key
        return _ambiguous(exc)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting too deep to parse
        return Rejection(utf8_problem or f"the line is not valid JSON: {exc}")
    if not isinstance(data, dict):
        return Rejection(f"a command must be a JSON object, got {_json_kind(data)}")
    data = sendable_json(data, text)  # a "\\ud800" escape: the text is taken, with U+FFFD for it
    has_id = "id" in data
    command_id = data.get("id")
    kind = data.get("type")
    name = kind if isinstance(kind, str) else None
    if utf8_problem is not None:
        return Rejection(utf8_problem, command_id, has_id, name)
    problem = _check_envelope(data, has_id)
    if problem is None:
        assert name is not None
        problem = _check_fields(name, data)
    if problem is not None:
        return Rejection(problem, command_id, has_id, name)
    assert name is not None
    fields = {k: v for k, v in data.items() if k not in ENVELOPE}
    return Command(name, fields, command_id, has_id)


def _ambiguous(exc: DuplicateKey) -> Rejection:
    """A command naming a key twice (R39: read two ways, it is no command): what can be echoed of it."""
    data = exc.lenient()
    if not isinstance(data, dict) or exc.key in ENVELOPE:
        return Rejection(str(exc))
    kind = data.get("type")
    command_id = data.get("id")
    has_id = "id" in data and isinstance(command_id, str | int | float) and not isinstance(command_id, bool)
    name = kind if isinstance(kind, str) else None
    return Rejection(str(exc), command_id if has_id else None, has_id, name)


def response(
    command: str | None,
    command_id: Any,
    has_id: bool,
    *,
    ok: bool,
    data: Mapping[str, Any] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "response"}
    if has_id:
        out["id"] = command_id
    if command is not None:
        out["command"] = command
    out["ok"] = ok
    if error is not None:
        out["error"] = error
    if data is not None:
        out["data"] = data
    return out


def rejection_response(rejection: Rejection) -> dict[str, Any]:
    return response(rejection.command, rejection.id, rejection.has_id, ok=False, error=rejection.reason)


def overlong_rejection(head: bytes, limit: int) -> Rejection:
    """A line longer than ``limit`` bytes was discarded. Its id is read from the start of the line when it
    is a JSON object that begins with ``type`` and/or ``id`` (the usual key order of clients)."""
    reason = f"the line is longer than the limit of {limit} bytes and was discarded"
    match = _HEAD.match(head.decode("utf-8", "replace"))
    if match is None:
        return Rejection(reason)
    kind = match.group("type") or match.group("type2")
    raw_id = match.group("id")
    if raw_id is None:
        return Rejection(reason, command=kind)
    try:
        command_id = load_json(raw_id)
    except (ValueError, RecursionError):
        return Rejection(reason, command=kind)
    return Rejection(reason, command_id, True, kind)


_STRING = r'"(?:[^"\\]|\\.)*"'
_HEAD = re.compile(
    r'\s*\{\s*(?:"type"\s*:\s*"(?P<type>[a-z_]{1,40})"\s*,\s*)?'
    rf'(?:"id"\s*:\s*(?P<id>{_STRING}|-?\d{{1,30}})\s*,\s*)?'
    r'(?:"type"\s*:\s*"(?P<type2>[a-z_]{1,40})")?'
)


def _decode(raw: bytes) -> tuple[str, str | None]:
    """The line as text, and the UTF-8 problem if there was one (the text then carries the bad bytes as
    lone surrogates, so the line can still be read for its id)."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1].hex()
        problem = f"the line is not valid UTF-8 (byte 0x{bad} at offset {exc.start})"
        return raw.decode("utf-8", "surrogateescape"), problem


def _check_envelope(data: Mapping[str, Any], has_id: bool) -> str | None:
    kind = data.get("type")
    if kind is None:
        return 'the command has no "type" field'
    if not isinstance(kind, str):
        return f'"type" must be a string, got {_json_kind(kind)}'
    if kind not in COMMANDS:
        return f"unknown command {kind!r}; known commands: {', '.join(COMMANDS)}"
    command_id = data.get("id")
    if has_id and (isinstance(command_id, bool) or not isinstance(command_id, str | int | float)):
        return f'"id" must be a string or a number, got {_json_kind(command_id)}'
    return None


def _check_fields(name: str, data: Mapping[str, Any]) -> str | None:
    specs = COMMANDS[name]
    known = {spec.name for spec in specs}
    unknown = [key for key in data if key not in known and key not in ENVELOPE]
    if unknown:
        allowed = ", ".join(sorted(known)) or "none besides type and id"
        return f"unknown field {unknown[0]!r} for {name} (fields: {allowed})"
    for spec in specs:
        problem = _check_field(name, spec, data)
        if problem is not None:
            return problem
    if name == "set_modes" and not known & data.keys():
        return 'set_modes needs "steering", "followUp" or both'
    return None


def _check_field(name: str, spec: FieldSpec, data: Mapping[str, Any]) -> str | None:
    if spec.name not in data:
        return f'{name} needs the field "{spec.name}"' if spec.required else None
    value = data[spec.name]
    if spec.json_object:
        return (
            None if isinstance(value, dict) else f'"{spec.name}" must be an object, got {_json_kind(value)}'
        )
    if spec.flag:
        return (
            None
            if isinstance(value, bool)
            else f'"{spec.name}" must be true or false, got {_json_kind(value)}'
        )
    if not isinstance(value, str):
        return f'"{spec.name}" must be a string, got {_json_kind(value)}'
    if spec.choices and value not in spec.choices:
        return f'"{spec.name}" must be one of {", ".join(spec.choices)} (got {value!r})'
    if spec.text and not value.strip():
        return f'"{spec.name}" must not be empty'
    return None


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
