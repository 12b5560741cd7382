"""An MCP tool result in ink's terms: text for the model, every content block accounted for.

Text blocks are kept as they are; an embedded text resource is kept with its URI; images, audio and
binary resources are kept as data (``McpResult.images``) and named in the text, so the model knows they
exist even when it cannot see them; structured content is shown as JSON when no text came with it. The
text is capped like every tool's output, with an honest notice of what was cut.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import msgspec

from ink.tools.limits import MAX_OUTPUT_BYTES, cap_head, plural


class Image(msgspec.Struct, frozen=True):
    mime_type: str
    data: str  # base64, as the server sent it


class McpResult(msgspec.Struct, frozen=True):
    text: str
    is_error: bool
    images: tuple[Image, ...] = ()


def convert(result: Any) -> McpResult:
    """``result`` is the SDK's ``CallToolResult``."""
    parts: list[str] = []
    images: list[Image] = []
    for block in result.content:
        parts.append(_block_text(block, images))
    if not any(parts) and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    text = "\n".join(part for part in parts if part)
    return McpResult(cap(text) if text else "(no output)", bool(result.is_error), tuple(images))


def _block_text(block: Any, images: list[Image]) -> str:
    match block.type:
        case "text":
            return str(block.text)
        case "image":
            images.append(Image(block.mime_type, block.data))
            return f"[image: {block.mime_type}, {_size(block.data)}]"
        case "audio":
            return f"[audio: {block.mime_type}, {_size(block.data)} (not shown to the model)]"
        case "resource_link":
            return f"[resource: {block.uri}{_named(block.name)}]"
        case "resource":
            return _resource_text(block.resource, images)
        case other:
            return f"[{other} content]"


def _resource_text(resource: Any, images: list[Image]) -> str:
    mime = resource.mime_type or "unknown type"
    text = getattr(resource, "text", None)
    if text is not None:
        return f"[resource {resource.uri} ({mime})]\n{text}"
    if mime.startswith("image/"):
        images.append(Image(mime, resource.blob))
    return f"[resource {resource.uri}: {mime}, {_size(resource.blob)}]"


def _named(name: str | None) -> str:
    return f" ({name})" if name else ""


def _size(data: str) -> str:
    try:
        count = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return "undecodable data"
    return plural(count, "byte")


def cap(text: str) -> str:
    kept, cut = cap_head(text)
    if not cut:
        return kept
    return f"{kept}\n[{plural(cut, 'more line')} cut: the output was longer than {MAX_OUTPUT_BYTES} bytes]"
