"""What a llama.cpp server says about its chat template (``GET /props``), so a template that silently
drops the tools is reported instead of leaving the model confused about tools it never saw."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port``: llama.cpp serves ``/props`` beside ``/v1``."""
    root = base_url.rstrip("/")
    return root.removesuffix("/v1")


def read_props(base_url: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """The server's ``/props``, or None when it has none (not llama.cpp) or cannot be asked."""
    try:
        with urllib.request.urlopen(f"{server_root(base_url)}/props", timeout=timeout) as answer:
            value = json.loads(answer.read())
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return value if isinstance(value, dict) else None


def supports_tools(props: dict[str, Any]) -> bool | None:
    """Whether the chat template renders tool definitions; None when the server does not say."""
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict) and "supports_tools" in caps:
        return bool(caps["supports_tools"])
    return None


def tools_warning(base_url: str, props: dict[str, Any] | None = None) -> str | None:
    """A warning when the server at ``base_url`` would drop the tools ink sends, else None."""
    props = props if props is not None else read_props(base_url)
    if props is None or supports_tools(props) is not False:
        return None
    return (
        "the model server's chat template does not support tools: the model will not see ink's tools "
        "(for llama-server, start it with --jinja, or give a template with tool calls: --chat-template-file)"
    )
