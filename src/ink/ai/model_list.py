"""What a model server serves, as it says itself: ``GET {base}/models`` of an OpenAI-compatible server
(Ollama, LM Studio, vLLM, llama.cpp, LiteLLM, OpenRouter) or ``GET {base}/v1/models`` of an Anthropic
one, asked through the providers' HTTP client (its proxies, TLS and connect timeout) with the provider's
key, bounded in time (``ASK_SECONDS``) and size, for ``/model``'s list. Every failure is one line
(``ModelListError``) naming the server without its credentials; the key never appears.

llama.cpp names its model by the file it loaded: a ``.gguf`` path is shown as the file's stem, the
name ``--model-path`` gives it too.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ink.ai.http1 import HttpClient, HttpError

ASK_SECONDS = 3.0
MAX_BYTES = 8 << 20  # OpenRouter's list, the longest known, is ~1 MB


class ModelListError(Exception):
    """The server could not be asked, or did not answer with a list: one line saying why."""


def models_url(protocol: str, base_url: str) -> str:
    """``protocol``: the provider's (``ink.config.catalogue.Protocol``): only Anthropic's differs."""
    base = base_url.rstrip("/")
    if protocol == "anthropic":
        return f"{base.removesuffix('/v1')}/v1/models?limit=1000"
    return f"{base}/models"


def models_headers(protocol: str, api_key: str | None) -> dict[str, str]:
    headers = {"accept": "application/json"}
    if protocol == "anthropic":
        from ink.ai.anthropic import ANTHROPIC_VERSION  # the provider's module only when it is the one

        headers["anthropic-version"] = ANTHROPIC_VERSION
        if api_key:
            headers["x-api-key"] = api_key
    elif api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


async def served_models(
    client: HttpClient, protocol: str, base_url: str, api_key: str | None, timeout: float = ASK_SECONDS
) -> list[str]:
    """The model names the server at ``base_url`` lists, in its order. Raises ``ModelListError``."""
    url = models_url(protocol, base_url)
    where = shown_url(url)
    try:
        async with asyncio.timeout(timeout):
            response = await client.send("GET", url, headers=models_headers(protocol, api_key))
            try:
                body = await response.read(MAX_BYTES + 1)
            finally:
                response.close()
    except TimeoutError:
        raise ModelListError(f"{where} did not answer within {timeout:g} s") from None
    except HttpError as exc:
        raise ModelListError(f"{where}: {exc}") from None
    if response.status != 200:
        raise ModelListError(f"{where} answered HTTP {response.status}{_said(body)}")
    if len(body) > MAX_BYTES:
        raise ModelListError(f"{where} answered more than {MAX_BYTES >> 20} MB: not a model list")
    try:
        return model_ids(json.loads(body))
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting too deep to parse
        why = "nested too deeply to parse" if isinstance(exc, RecursionError) else str(exc)
        raise ModelListError(f"{where} did not answer with a model list ({why})") from None


def model_ids(value: Any) -> list[str]:
    """The names in an OpenAI- or Anthropic-shaped list (``{"data": [{"id": ...}, ...]}``), once each.
    Raises ``ValueError`` for any other shape."""
    data = value.get("data") if isinstance(value, dict) else None
    if not isinstance(data, list):
        raise ValueError('no "data" list in it')
    names: dict[str, None] = {}
    for item in data:
        name = item.get("id") if isinstance(item, dict) else None
        if isinstance(name, str) and name.strip() and name.isprintable():
            names[PurePath(name).stem if name.endswith(".gguf") else name] = None
    return list(names)


def shown_url(url: str) -> str:
    """``url`` without its query and without a user or password in it."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _said(body: bytes) -> str:
    """The error message of an error body (OpenAI's and Anthropic's shape), short, or nothing."""
    try:
        value = json.loads(body[:65536])
    except (ValueError, RecursionError):
        return ""
    error = value.get("error") if isinstance(value, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) or not message.strip():
        return ""
    line = " ".join(message.split())
    return f": {line[:157]}…" if len(line) > 160 else f": {line}"
