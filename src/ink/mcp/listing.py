"""A server's lists (``tools/list``, ``prompts/list``, ``resources/list``) read into ink's records.

Whatever the server sends, what reaches the model and the user is checked here: an entry without a
usable name (empty, over ``MAX_NAME_CHARS``, or holding a control or invisible formatting character such
as a bidi override, which could make one name look like another) is refused, as is a name the server
lists twice (which of the two is meant cannot be known) and a tool that can only run as an MCP task
(``execution.taskSupport: "required"``; ink does not speak tasks yet, and every call would fail). Each
refusal is a note in ``/mcp`` and ``ink mcp list``, never silent.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ink.mcp.model import PromptArgument, RemotePrompt, RemoteResource, RemoteTool

MAX_NAME_CHARS = 256
MAX_TEXT_CHARS = 8192  # a description the model reads: longer is cut


def name_problem(name: Any) -> str | None:
    """Why ``name`` cannot be used, or None."""
    if not isinstance(name, str) or not name:
        return "it has no name"
    if len(name) > MAX_NAME_CHARS:
        return f"its name is over {MAX_NAME_CHARS} characters"
    bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")), None)
    if bad is not None:
        return f"its name holds the invisible or control character U+{ord(bad):04X}"
    return None


def _shown(name: Any) -> str:
    return ascii(name)[:80] if isinstance(name, str) else repr(name)[:80]


def _text(value: Any) -> str:
    return value[:MAX_TEXT_CHARS] if isinstance(value, str) else ""


def _usable(
    entries: Sequence[Any], what: str, notes: list[str], key: str = "name"
) -> list[Mapping[str, Any]]:
    """The entries that are objects with a usable, unique ``key``; a note for each other one."""
    objects = [entry for entry in entries if isinstance(entry, Mapping)]
    if len(objects) < len(entries):
        notes.append(f"{len(entries) - len(objects)} {what} entries that are not objects were left out")
    counts = Counter(entry.get(key) for entry in objects if isinstance(entry.get(key), str))
    usable = []
    noted = set()
    for entry in objects:
        name = entry.get(key)
        problem = (
            name_problem(name) if key == "name" else (None if isinstance(name, str) and name else "no uri")
        )
        if problem is None and counts[name] > 1:
            problem = f"the server lists it {counts[name]} times"
        if problem is not None:
            note = f"{what} {_shown(name)} left out: {problem}"
            if note not in noted:
                noted.add(note)
                notes.append(note)
        else:
            usable.append(entry)
    return usable


def read_tools(server: str, entries: Sequence[Any], notes: list[str]) -> tuple[RemoteTool, ...]:
    tools = []
    for entry in _usable(entries, "tool", notes):
        name = entry["name"]
        schema = entry.get("inputSchema")
        execution = entry.get("execution")
        if isinstance(execution, Mapping) and execution.get("taskSupport") == "required":
            notes.append(
                f"tool {_shown(name)} left out: it runs only as an MCP task, which ink does not support yet"
            )
            continue
        if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
            notes.append(f"tool {_shown(name)} left out: its inputSchema is not a JSON schema of an object")
            continue
        hints = entry.get("annotations")
        hints = hints if isinstance(hints, Mapping) else {}
        title = entry.get("title") or hints.get("title")
        tools.append(
            RemoteTool(
                server=server,
                name=name,
                description=_text(entry.get("description")) or _text(title),
                schema={"type": "object", **schema},
                read_only=hints.get("readOnlyHint") is True,
                destructive=_flag(hints.get("destructiveHint")),
                title=title if isinstance(title, str) and name_problem(title) is None else None,
                open_world=_flag(hints.get("openWorldHint")),
            )
        )
    return tuple(tools)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def read_prompts(server: str, entries: Sequence[Any], notes: list[str]) -> tuple[RemotePrompt, ...]:
    prompts = []
    for entry in _usable(entries, "prompt", notes):
        arguments = []
        raw = entry.get("arguments")
        for argument in raw if isinstance(raw, list) else []:
            if isinstance(argument, Mapping) and name_problem(argument.get("name")) is None:
                arguments.append(
                    PromptArgument(
                        argument["name"], _text(argument.get("description")), argument.get("required") is True
                    )
                )
        description = _text(entry.get("description")) or _text(entry.get("title"))
        prompts.append(RemotePrompt(server, entry["name"], description, tuple(arguments)))
    return tuple(prompts)


def read_resources(server: str, entries: Sequence[Any], notes: list[str]) -> tuple[RemoteResource, ...]:
    resources = []
    for entry in _usable(entries, "resource", notes, key="uri"):
        uri = entry["uri"]
        if name_problem(uri) is not None or any(c.isspace() for c in uri):
            notes.append(f"resource {_shown(uri)} left out: its URI holds spaces or control characters")
            continue
        mime = entry.get("mimeType")
        resources.append(
            RemoteResource(
                server,
                uri,
                _text(entry.get("name")),
                _text(entry.get("description")),
                mime if isinstance(mime, str) else None,
            )
        )
    return tuple(resources)
