"""A server's prompts as commands and its resources as mentions, expanded when an input enters the history.

    /mcp__github__review 42 "be strict"     the prompt ``review`` of the server ``github``, its arguments
                                            given in the order the prompt declares them (quotes group
                                            words; the last argument takes the rest of the line)
    summarise @docs:file:///notes/plan.md   the resource's text goes with the prompt, as an @path does

Both need the server, so both are expanded by the loop's prompt seam, when the input is taken into the
history (``expand_inputs``), the same in every frontend: the user's line is queued as typed, and what the
model gets is the prompt's messages, or the text with an ``<attached resource=...>`` section per mention.
A prompt that cannot be had (unknown, a required argument missing, the server failing) is handed back to
the user with the reason; a mention that cannot be read stays as typed, with a notice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ink.ai.messages import ToolImage
from ink.ai.printable import printable
from ink.mcp.model import RemotePrompt
from ink.mcp.names import tool_name
from ink.mcp.results import MAX_RESULT_IMAGES, cap, resource_text

if TYPE_CHECKING:
    from ink.agent.loop import PendingInput
    from ink.mcp.manager import McpManager

PROMPT_LINE = re.compile(r"/(mcp__\S+)(?:\s+(.*))?", re.DOTALL)
MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_-]{1,64}):(\S+)")
GET_TIMEOUT = 60.0  # seconds for prompts/get and resources/read
MAX_MENTIONS = 10


class PromptFailed(Exception):
    """The input cannot become its prompt: ``str`` says why, for the user."""


class Expanded(msgspec.Struct, frozen=True):
    text: str
    images: tuple[ToolImage, ...] = ()


def find_prompt(manager: McpManager, line: str) -> tuple[RemotePrompt, str] | None:
    """The prompt ``/mcp__SERVER__PROMPT args`` names, and the arguments' text; None for other text."""
    found = PROMPT_LINE.fullmatch(line.strip())
    if found is None:
        return None
    commands = {tool_name(p.server, p.name): p for p in manager.prompts()}
    prompt = commands.get(found.group(1))
    return (prompt, found.group(2) or "") if prompt is not None else None


def usage(prompt: RemotePrompt) -> str:
    words = [a.name.upper() if a.required else f"[{a.name.upper()}]" for a in prompt.arguments]
    return " ".join([f"/{tool_name(prompt.server, prompt.name)}", *words])


def prompt_arguments(prompt: RemotePrompt, text: str) -> dict[str, str]:
    """The words of ``text`` given to the prompt's arguments in order. Raises ``PromptFailed``."""
    import shlex

    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    declared = prompt.arguments
    if len(words) > len(declared) and declared:
        words = [*words[: len(declared) - 1], " ".join(words[len(declared) - 1 :])]
    elif words and not declared:
        raise PromptFailed(f"/{tool_name(prompt.server, prompt.name)} takes no arguments")
    given = {argument.name: word for argument, word in zip(declared, words, strict=False)}
    missing = [a.name for a in declared if a.required and a.name not in given]
    if missing:
        raise PromptFailed(f"missing {', '.join(missing)}: {usage(prompt)}")
    return given


async def get_prompt(manager: McpManager, prompt: RemotePrompt, arguments: Mapping[str, str]) -> Expanded:
    """``prompts/get``: the prompt's messages as one user prompt. Raises ``PromptFailed``."""
    from ink.mcp.connection import CallFailed, ServerUnavailable

    conn = manager.connection(prompt.server)
    if conn is None:
        raise PromptFailed(f"the MCP server {prompt.server} is not running")
    try:
        result = await conn.request(
            "prompts/get", {"name": prompt.name, "arguments": dict(arguments)}, GET_TIMEOUT
        )
    except (CallFailed, ServerUnavailable) as exc:
        raise PromptFailed(str(exc)) from None
    messages = result.get("messages") if isinstance(result, Mapping) else None
    if not isinstance(messages, list) or not messages:
        raise PromptFailed(f"the MCP server {prompt.server} gave no messages for {prompt.name}")
    return _as_prompt(messages)


def _as_prompt(messages: Sequence[Any]) -> Expanded:
    parts: list[str] = []
    images: list[ToolImage] = []
    roles = {m.get("role") for m in messages if isinstance(m, Mapping)}
    for message in messages:
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), Mapping):
            continue
        content = message["content"]
        kind = content.get("type")
        if kind == "text" and isinstance(content.get("text"), str):
            text = content["text"]
        elif kind == "image" and isinstance(content.get("data"), str) and len(images) < MAX_RESULT_IMAGES:
            images.append(ToolImage(str(content.get("mimeType") or "image/png"), content["data"]))
            text = f"[image: {content.get('mimeType')}]"
        elif kind == "resource" and isinstance(content.get("resource"), Mapping):
            text = resource_text(content["resource"])
        else:
            text = f"[{printable(str(kind))} content]"
        label = "Assistant: " if message.get("role") == "assistant" and len(roles) > 1 else ""
        parts.append(label + text)
    return Expanded(cap("\n\n".join(parts)), tuple(images))


async def attach_resources(manager: McpManager, text: str, notify: Callable[[str], None]) -> str:
    """``text`` with an ``<attached resource="SERVER:URI">`` section for each readable mention."""
    from ink.mcp.connection import CallFailed, ServerUnavailable

    servers = {spec.name for spec in manager.specs}
    sections = []
    for server, uri in MENTION.findall(text)[:MAX_MENTIONS]:
        conn = manager.connection(server) if server in servers else None
        if conn is None:
            continue  # not a server: an e-mail address, a path with a colon
        try:
            result = await conn.request("resources/read", {"uri": uri}, GET_TIMEOUT)
        except (CallFailed, ServerUnavailable) as exc:
            notify(f"@{server}:{printable(uri)} was not attached: {exc}")
            continue
        contents = result.get("contents") if isinstance(result, Mapping) else None
        texts = (
            [resource_text(c) for c in contents if isinstance(c, Mapping)]
            if isinstance(contents, list)
            else []
        )
        body = cap("\n".join(texts) or "(empty)")
        sections.append(f'\n\n<attached resource="{server}:{uri}">\n{body}\n</attached>')
    return text + "".join(sections)


async def expand_inputs(
    manager: McpManager,
    inputs: Sequence[PendingInput],
    refuse: Callable[[str, str], None],
    notify: Callable[[str], None],
) -> list[PendingInput]:
    """The inputs with MCP prompts and resource mentions expanded; one whose prompt cannot be had is
    refused (``refuse(input_id, reason)``) and left out."""
    kept = []
    for item in inputs:
        found = find_prompt(manager, item.text)
        try:
            if found is not None:
                prompt, arguments = found
                expanded = await get_prompt(manager, prompt, prompt_arguments(prompt, arguments))
                item = msgspec.structs.replace(item, text=expanded.text, images=item.images + expanded.images)
            elif MENTION.search(item.text):
                item = msgspec.structs.replace(item, text=await attach_resources(manager, item.text, notify))
        except PromptFailed as exc:
            refuse(item.input_id, str(exc))
            continue
        kept.append(item)
    return kept
