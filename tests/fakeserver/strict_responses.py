"""Strict mode for the OpenAI Responses API: the input rules the real service enforces, in its words.

``check_responses_history(body, issued)`` returns None for a request the API would accept, else the 400
message. ``issued`` maps reasoning item ids to the encrypted content the server handed out: with
``store: false`` a reasoning item can only come back with exactly that content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NO_CALL = "No tool call found for function call output with call_id {id}."
NO_OUTPUT = "No tool output found for function call {id}."
NO_FOLLOWER = "Item '{id}' of type 'reasoning' was provided without its required following item."
NOT_STORED = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with "
    "`store` set to true, or remove this item from your input."
)
NOT_VERIFIED = "The encrypted content for item {id} could not be verified."
INPUT_TYPES = ("message", "reasoning", "function_call", "function_call_output")


def check_responses_history(body: Any, issued: Mapping[str, str] | None = None) -> str | None:
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "Missing required parameter: 'model'."
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return "Missing required parameter: 'input'."
    return _items(items, issued or {}) or _tools(body.get("tools"))


def _items(items: list[Any], issued: Mapping[str, str]) -> str | None:
    calls: list[str] = []
    answered: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            return f"Invalid type for 'input[{i}]': expected an object."
        kind = item.get("type", "message")
        if kind not in INPUT_TYPES:
            return (
                f"Invalid value: '{kind}'. Supported values are: {', '.join(repr(t) for t in INPUT_TYPES)}."
            )
        problem = _item(i, item, kind, items, calls, answered, issued)
        if problem is not None:
            return problem
    missing = [c for c in calls if c not in answered]
    return NO_OUTPUT.format(id=missing[0]) if missing else None


def _item(
    i: int, item: dict[str, Any], kind: str, items: list[Any], calls: list[str], answered: set[str],
    issued: Mapping[str, str],
) -> str | None:  # fmt: skip
    if kind == "message":
        if item.get("role") not in ("user", "assistant", "system", "developer"):
            return f"Invalid value: '{item.get('role')}' for 'input[{i}].role'."
        if not isinstance(item.get("content"), str | list):
            return f"Missing required parameter: 'input[{i}].content'."
    elif kind == "function_call":
        if not isinstance(item.get("call_id"), str) or not isinstance(item.get("arguments"), str):
            return f"Missing required parameter: 'input[{i}].call_id' or 'input[{i}].arguments' (a string)."
        calls.append(item["call_id"])
    elif kind == "function_call_output":
        if item.get("call_id") not in calls:
            return NO_CALL.format(id=item.get("call_id"))
        if not isinstance(item.get("output"), str):
            return f"Invalid type for 'input[{i}].output': expected a string."
        answered.add(item["call_id"])
    else:
        return _reasoning(i, item, items, issued)
    return None


def _reasoning(i: int, item: dict[str, Any], items: list[Any], issued: Mapping[str, str]) -> str | None:
    item_id = str(item.get("id"))
    content = item.get("encrypted_content")
    if not content:
        return NOT_STORED.format(id=item_id)
    if issued.get(item_id) != content:
        return NOT_VERIFIED.format(id=item_id)
    follower = items[i + 1] if i + 1 < len(items) else None
    follows = isinstance(follower, dict) and (
        follower.get("type") in ("function_call", "reasoning")
        or (follower.get("type") == "message" and follower.get("role") == "assistant")
    )
    return None if follows else NO_FOLLOWER.format(id=item_id)


def _tools(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "Invalid type for 'tools': expected an array."
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function" or not tool.get("name"):
            return f"Missing required parameter: 'tools[{i}].name'."
    return None
