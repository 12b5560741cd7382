"""``ink models``: the providers ink knows, what each needs, and their models.

    ink models                    every provider; local servers are asked what they serve
    ink --provider ollama models  one provider

For a server on this machine (Ollama, LM Studio, vLLM, llama.cpp, or any ``--base-url``) the models it
reports at ``GET {base_url}/models`` are listed; one that does not answer is said to be not running.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from typing import TextIO

from ink.ai.model_list import model_ids
from ink.config import PROVIDERS, Invocation, ProviderInfo, Settings

ASK_TIMEOUT = 2.0


def main(settings: Settings, invocation: Invocation, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    chosen = settings.origins.get("provider", "default") != "default"
    names = [settings.provider] if chosen else list(PROVIDERS)
    for name in names:
        info = PROVIDERS[name]
        base_url = settings.base_url if name == settings.provider else info.default_base_url
        own_url = base_url != info.default_base_url.rstrip("/")
        print(describe(info, base_url), file=out)
        served = ask_server(base_url) if (not info.key_required or own_url) and name != "local" else None
        for line in model_lines(info, served, base_url):
            print(f"    {line}", file=out)
    print("\nchoose with: ink --provider NAME --model MODEL", file=out)
    return 0


def describe(info: ProviderInfo, base_url: str) -> str:
    needs = f"key: {info.key_env}" if info.key_required else "no key"
    if info.name == "local":
        return f"{info.name:<17} {info.summary} ({needs})"
    return f"{info.name:<17} {info.summary} ({needs}; {base_url})"


def model_lines(info: ProviderInfo, served: list[str] | str | None, base_url: str) -> list[str]:
    """The known models, default marked; then what the server reports, or why it could not say."""
    lines = [f"{model}{'  (default)' if model == info.default_model else ''}" for model in info.models]
    if isinstance(served, str):
        lines.append(f"(server not running at {base_url}: {served})")
    elif served is not None:
        lines += [f"{model}  (served now)" for model in served if model not in info.models]
        if not served:
            lines.append(f"(the server at {base_url} reports no models)")
    return lines


def ask_server(base_url: str) -> list[str] | str:
    """The model ids ``{base_url}/models`` reports, or the reason it could not be asked."""
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=ASK_TIMEOUT) as answer:
            body = json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except urllib.error.URLError as exc:
        return str(exc.reason)
    except (OSError, ValueError) as exc:
        return str(exc) or type(exc).__name__
    try:
        return model_ids(body)
    except ValueError:
        return "its answer has no model list"
