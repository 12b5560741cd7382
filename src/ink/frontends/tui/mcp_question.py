"""An MCP server's question (``elicitation_request``) in the terminal UI: a form in the scrollback,
answered with a command.

    MCP server github asks: Which repository should I use?
      repo   text, required      the owner/name of the repository
      draft  true/false          (default false)
    answer: /mcp answer repo=acme/app draft=true  ·  /mcp decline  ·  /mcp cancel

The answer is a command the user types and sends on purpose (R38: no key typed for the editor, nor an
Enter that sends a queued message, can answer it). Values are read by the schema: numbers, true/false,
a choice, several choices separated by commas; a field left out takes its default. An answer that does
not fit says why and the question stays open.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from ink.frontends.tui.blocks import sanitize
from ink.mcp.elicitation import BadAnswer, Field, fields
from ink.run.events import ElicitationRequest

KINDS = {"string": "text", "number": "number", "integer": "whole number", "boolean": "true/false"}


def question_text(event: ElicitationRequest) -> str:
    lines = [f"MCP server {sanitize(event.server)} asks: {sanitize(event.message)}"]
    try:
        form = fields(event.schema)
    except BadAnswer:
        form = []
    width = max((len(f.name) for f in form), default=0)
    example = []
    for field in form:
        what = _what(field) + (", required" if field.required else "")
        notes = [sanitize(field.description)] if field.description else []
        notes += [f"(default {field.default})"] if field.default is not None else []
        lines.append(f"  {sanitize(field.name):<{width}}  {what}  {' '.join(notes)}".rstrip())
        example.append(f"{field.name}=…")
    lines.append(f"answer: /mcp answer {' '.join(example)}  ·  /mcp decline  ·  /mcp cancel")
    return "\n".join(lines)


def _what(field: Field) -> str:
    if field.kind == "choice":
        return "one of " + ", ".join(field.choices)
    if field.kind == "choices":
        return "any of " + ", ".join(field.choices) + " (comma-separated)"
    return KINDS.get(field.kind, field.kind)


def parse_answer(schema: Mapping[str, Any], text: str) -> dict[str, Any]:
    """``name=value`` words as the schema's content (defaults filled in). Raises ``BadAnswer``."""
    form = {field.name: field for field in fields(schema)}
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise BadAnswer(f"cannot read the answer: {exc}") from None
    content: dict[str, Any] = {f.name: f.default for f in form.values() if f.default is not None}
    for word in words:
        name, equals, value = word.partition("=")
        if not equals:
            raise BadAnswer(f"write each answer as name=value (got {word!r})")
        field = form.get(name)
        if field is None:
            raise BadAnswer(f"{name!r} is not asked for (asked: {', '.join(form)})")
        content[name] = _value(field, value)
    return content


def _value(field: Field, text: str) -> Any:
    if field.kind == "boolean":
        if text.lower() in ("true", "yes", "y", "1"):
            return True
        if text.lower() in ("false", "no", "n", "0"):
            return False
        raise BadAnswer(f"{field.name!r} must be true or false")
    if field.kind in ("number", "integer"):
        try:
            return int(text) if field.kind == "integer" else float(text)
        except ValueError:
            raise BadAnswer(f"{field.name!r} must be a {KINDS[field.kind]}") from None
    if field.kind == "choices":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text
