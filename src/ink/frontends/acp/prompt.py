"""An ACP prompt (a list of content blocks) as the one text ink queues and sends to the model.

Text blocks and resource links are joined in place (a link reads ``[name](path)``; ``file://`` URIs
become plain paths the tools can open). An embedded resource (``embeddedContext``) is referenced in place
the same way and its text is appended after the prompt inside a ``<context>`` element. An image goes as
image content of the user message (named in place, ``[image 1: image/png]``) when the session's model
takes images (the capabilities say so at ``initialize``); otherwise, and for audio, the prompt is invalid,
as is an empty one.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import msgspec

from ink.ai.messages import ToolImage

MAX_IMAGE_CHARS = 7 * 1024 * 1024  # base64 of the 5 MB a model accepts in one image


class InvalidPrompt(ValueError):
    """The prompt cannot be used; the message says why (it becomes the -32602 error's message)."""


class Prompt(msgspec.Struct, frozen=True):
    text: str
    images: tuple[ToolImage, ...] = ()


def prompt_text(blocks: object) -> str:
    """The text for ``blocks`` (no images allowed). Raises ``InvalidPrompt``."""
    return read_prompt(blocks, None).text


def read_prompt(blocks: object, model: str | None) -> Prompt:
    """The text and images of ``blocks``. ``model``: the session's model when it takes images, else None
    (an image then makes the prompt invalid). Raises ``InvalidPrompt``."""
    if not isinstance(blocks, list):
        raise InvalidPrompt("prompt must be a list of content blocks")
    inline: list[str] = []
    attached: list[str] = []
    images: list[ToolImage] = []
    for index, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            raise InvalidPrompt(f"prompt[{index}] is not a content block (an object with a type)")
        if block.get("type") == "image":
            inline.append(_image(block, index, images, model))
            continue
        inline.append(_inline(block, index, attached))
    text = "".join(inline)
    if attached:
        text = "\n\n".join([text, *attached]) if text.strip() else "\n\n".join(attached)
    if not text.strip():
        raise InvalidPrompt("the prompt is empty")
    return Prompt(text, tuple(images))


def _image(block: Mapping[str, Any], index: int, images: list[ToolImage], model: str | None) -> str:
    if model is None:
        raise InvalidPrompt(f"prompt[{index}] is an image: the session's model does not take images")
    data, mime = _field(block, "data", index), _field(block, "mimeType", index)
    if not mime.startswith("image/"):
        raise InvalidPrompt(f"prompt[{index}].mimeType {mime!r} is not an image type")
    if len(data) > MAX_IMAGE_CHARS:
        raise InvalidPrompt(f"prompt[{index}] is over the 5 MB an image may have")
    try:
        if not data or not base64.b64decode(data, validate=True):
            raise InvalidPrompt(f"prompt[{index}].data is empty")
    except binascii.Error:
        raise InvalidPrompt(f"prompt[{index}].data is not base64") from None
    images.append(ToolImage(mime, data))
    return f"[image {len(images)}: {mime}]"


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
    if kind == "audio":
        raise InvalidPrompt(
            f"prompt[{index}] is audio: ink takes text, images, links and embedded text resources"
        )
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
