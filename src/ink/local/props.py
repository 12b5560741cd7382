"""What a llama.cpp server says about itself: its chat template and context window (``GET /props``), so a
template that silently drops the tools is reported instead of leaving the model confused about tools it
never saw, and compaction works within the window the server really has (SmolLM2 serves 8k, not the 128k
ink assumes for a model it does not know); and the model it serves (``GET /v1/models``), for the preset
whose model name is only a placeholder."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from ink.ai.model_list import model_ids


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


def context_window(props: dict[str, Any]) -> int | None:
    """The server's context window in tokens (``n_ctx`` of its default generation settings; older servers
    put it at the top level), or None when it does not say."""
    settings = props.get("default_generation_settings")
    for where in (settings if isinstance(settings, dict) else {}, props):
        value = where.get("n_ctx")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def served_model(base_url: str, timeout: float = 2.0) -> str | None:
    """The first model ``{base_url}/models`` reports, or None when there is none or it cannot be asked.
    llama.cpp names a model by its file path: the file's stem is kept (what ``--model-path`` names too)."""
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=timeout) as answer:
            value = json.loads(answer.read())
    except (OSError, ValueError, urllib.error.URLError):
        return None
    try:
        names = model_ids(value)
    except ValueError:
        return None
    return names[0] if names else None


def tools_warning(base_url: str, props: dict[str, Any] | None = None) -> str | None:
    """A warning when the server at ``base_url`` would drop the tools ink sends, else None."""
    props = props if props is not None else read_props(base_url)
    if props is None or supports_tools(props) is not False:
        return None
    return (
        "the model server's chat template does not support tools: the model will not see ink's tools "
        "(for llama-server, start it with --jinja, or give a template with tool calls: --chat-template-file)"
    )
