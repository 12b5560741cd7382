"""An MCP tool result in ink's terms: text for the model, every content block accounted for.

Text blocks are kept as they are; an embedded text resource is kept with its URI; images (within a
budget per result: ``MAX_RESULT_IMAGES``, ``MAX_RESULT_IMAGE_BYTES``) are kept as data
(``McpResult.images``) and named in the text, so the model knows they exist even when it cannot see them
(one over the budget is named and not kept: it would be sent again with every later request and stored
in the session); audio and binary resources are named; structured content is shown as JSON when no text
came with it. The text is capped like every tool's output, with an honest notice of what was cut.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

import msgspec

from ink.tools.limits import MAX_OUTPUT_BYTES, cap_head, plural

MAX_RESULT_IMAGES = 5  # images of one result sent to the model; the rest are named in the text
MAX_RESULT_IMAGE_BYTES = 5 * 1024 * 1024  # and their decoded size together


class Image(msgspec.Struct, frozen=True):
    mime_type: str
    data: str  # base64, as the server sent it


class McpResult(msgspec.Struct, frozen=True):
    text: str
    is_error: bool
    images: tuple[Image, ...] = ()


class _Images:
    """The images of one result, within the result's budget: one past it is named, not kept."""

    def __init__(self) -> None:
        self.kept: list[Image] = []
        self.size = 0

    def add(self, mime: str, data: Any) -> str:
        if not isinstance(data, str):
            return f"[image: {mime}, no data]"
        size = _decoded_size(data)
        if size is None:
            return f"[image: {mime}, undecodable data]"
        if len(self.kept) >= MAX_RESULT_IMAGES or self.size + size > MAX_RESULT_IMAGE_BYTES:
            budget = f"{MAX_RESULT_IMAGES} images, {MAX_RESULT_IMAGE_BYTES // (1024 * 1024)} MiB"
            over = f"not shown, over the result's image budget ({budget})"
            return f"[image: {mime}, {plural(size, 'byte')}: {over}]"
        self.kept.append(Image(mime, data))
        self.size += size
        return f"[image: {mime}, {plural(size, 'byte')}]"


def convert(result: Mapping[str, Any]) -> McpResult:
    """``result`` is the server's ``CallToolResult`` object."""
    parts: list[str] = []
    images = _Images()
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        parts.append(_block_text(block, images) if isinstance(block, Mapping) else "[unreadable content]")
    structured = result.get("structuredContent")
    if not any(parts) and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1))
    text = "\n".join(part for part in parts if part)
    return McpResult(cap(text) if text else "(no output)", result.get("isError") is True, tuple(images.kept))


def _block_text(block: Mapping[str, Any], images: _Images) -> str:
    mime = _mime(block.get("mimeType"))
    match block.get("type"):
        case "text":
            text = block.get("text")
            return text if isinstance(text, str) else ""
        case "image":
            return images.add(mime, block.get("data"))
        case "audio":
            return f"[audio: {mime}, {_size(block.get('data'))} (not shown to the model)]"
        case "resource_link":
            return f"[resource: {_plain(block.get('uri'))}{_named(block.get('name'))}]"
        case "resource":
            resource = block.get("resource")
            return _resource_text(resource, images) if isinstance(resource, Mapping) else "[resource]"
        case other:
            return f"[{_plain(other)} content]"


def resource_text(resource: Mapping[str, Any], images: _Images | None = None) -> str:
    """One of ``resources/read``'s contents, or an embedded resource, as text (images within budget)."""
    return _resource_text(resource, images or _Images())


def _resource_text(resource: Mapping[str, Any], images: _Images) -> str:
    mime = _mime(resource.get("mimeType"), "unknown type")
    uri = _plain(resource.get("uri"))
    text = resource.get("text")
    if isinstance(text, str):
        return f"[resource {uri} ({mime})]\n{text}"
    blob = resource.get("blob")
    if mime.startswith("image/"):
        return f"[resource {uri}] " + images.add(mime, blob)
    return f"[resource {uri}: {mime}, {_size(blob)}]"


def _mime(value: Any, default: str = "unknown type") -> str:
    return value[:100] if isinstance(value, str) and value else default


def _plain(value: Any) -> str:
    return value[:2000] if isinstance(value, str) else "?"


def _named(name: Any) -> str:
    return f" ({name[:200]})" if isinstance(name, str) and name else ""


def _decoded_size(data: str) -> int | None:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return None


def _size(data: Any) -> str:
    size = _decoded_size(data) if isinstance(data, str) else None
    return "undecodable data" if size is None else plural(size, "byte")


def cap(text: str) -> str:
    kept, cut = cap_head(text)
    if not cut:
        return kept
    return f"{kept}\n[{plural(cut, 'more line')} cut: the output was longer than {MAX_OUTPUT_BYTES} bytes]"
