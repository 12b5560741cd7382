"""An ACP prompt (a list of content blocks) as the one text ink queues and sends to the model.

Text blocks and resource links are joined in place (a link reads ``[name](path)``; ``file://`` URIs
become plain paths the tools can open). An embedded resource (``embeddedContext``) is referenced in place
the same way and its text is appended after the prompt inside a ``<context>`` element. Images and audio
are not supported (the capabilities say so); a prompt with them is invalid, as is an empty one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit


class InvalidPrompt(ValueError):
    """The prompt cannot be used; the message says why (it becomes the -32602 error's message)."""


def prompt_text(blocks: object) -> str:
    """The text for ``blocks``. Raises ``InvalidPrompt``."""
    if not isinstance(blocks, list):
        raise InvalidPrompt("prompt must be a list of content blocks")
    inline: list[str] = []
    attached: list[str] = []
    for index, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            raise InvalidPrompt(f"prompt[{index}] is not a content block (an object with a type)")
        inline.append(_inline(block, index, attached))
    text = "".join(inline)
    if attached:
        text = "\n\n".join([text, *attached]) if text.strip() else "\n\n".join(attached)
    if not text.strip():
        raise InvalidPrompt("the prompt is empty")
    return text


def _inline(block: Mapping[str, Any], index: int, attached: list[str]) -> str:
    kind = block.get("type")
    if kind == "text":
        return _field(block, "text", index)
    if kind == "resource_link":
        uri = _field(block, "uri", index)
        return _link(block.get("name") or uri, uri)
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, Mapping):
            raise InvalidPrompt(f"prompt[{index}].resource must be an object")
        uri = _field(resource, "uri", index)
        text = resource.get("text")
        if isinstance(text, str):
            attached.append(f'<context ref="{uri}">\n{text}\n</context>')
        return _link(_name(uri), uri)
    if kind in ("image", "audio"):
        raise InvalidPrompt(f"prompt[{index}] is {kind}: ink takes text, links and embedded text resources")
    raise InvalidPrompt(f"prompt[{index}] has an unknown content type {kind!r}")


def _field(block: Mapping[str, Any], name: str, index: int) -> str:
    value = block.get(name)
    if not isinstance(value, str):
        raise InvalidPrompt(f"prompt[{index}].{name} must be a string")
    return value


def _link(name: str, uri: str) -> str:
    return f"[{name}]({_path_or_uri(uri)})"


def _path_or_uri(uri: str) -> str:
    parts = urlsplit(uri)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return unquote(parts.path)
    return uri


def _name(uri: str) -> str:
    path = _path_or_uri(uri).rstrip("/")
    return path.rsplit("/", 1)[-1] or uri
