"""The providers ink knows: their protocol, default model and URL, and the environment variables read.

Besides the two native services there are presets for the services people point agents at: each is an
OpenAI-compatible endpoint (or OpenAI's Responses API) with its own base URL, key variable and known
models. Adding one is one entry here plus, if its protocol is new, a provider class in ``ink.ai``. The
default models are data, overridable per provider in a config file (``[providers.openai] model = "..."``),
never literals scattered through the code.

``key_required=False`` marks servers on this machine (Ollama, LM Studio, vLLM, llama.cpp, ink's own
``local`` runtime): they answer without a key, and ``ink models`` asks them what they serve.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Protocol = Literal["openai", "anthropic", "openai-responses"]


class ProviderInfo(NamedTuple):  # not a dataclass: ~10x cheaper to define on the start-up path
    name: str
    protocol: Protocol
    default_model: str
    default_base_url: str
    key_env: str
    url_env: str
    key_help: str  # where a user gets a key, for the "missing key" message
    key_required: bool = True
    models: tuple[str, ...] = ()  # the models ink knows for it (``ink models``), default first
    summary: str = ""  # one line for ``ink models`` and the README's provider table


# llama-server serves the one model it was started with, whatever name a request gives: the preset's
# model is this placeholder, and ink asks the server which model it serves (``GET /v1/models``).
PLACEHOLDER_MODEL = "default"


def _local(name: str, port: int, env: str, model: str, summary: str) -> ProviderInfo:
    url = f"http://127.0.0.1:{port}/v1"
    needs = "a local server needs none"
    keys = (f"{env}_API_KEY", f"{env}_BASE_URL")
    return ProviderInfo(name, "openai", model, url, *keys, needs, False, (model,), summary)


PROVIDERS: dict[str, ProviderInfo] = {
    "openai": ProviderInfo(
        name="openai",
        protocol="openai",
        default_model="gpt-4.1",
        default_base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        url_env="OPENAI_BASE_URL",
        key_help="create one at platform.openai.com",
        models=("gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini", "o3", "o4-mini", "gpt-5", "gpt-5-mini"),
        summary="OpenAI Chat Completions (and any compatible server via --base-url)",
    ),
    "openai-responses": ProviderInfo(
        name="openai-responses",
        protocol="openai-responses",
        default_model="gpt-5.1",
        default_base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        url_env="OPENAI_BASE_URL",
        key_help="create one at platform.openai.com",
        models=("gpt-5.1", "gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5", "gpt-5-codex", "o3", "o4-mini"),
        summary="OpenAI Responses API: reasoning kept between turns, Responses-only models",
    ),
    "anthropic": ProviderInfo(
        name="anthropic",
        protocol="anthropic",
        default_model="claude-sonnet-4-5",
        default_base_url="https://api.anthropic.com",
        key_env="ANTHROPIC_API_KEY",
        url_env="ANTHROPIC_BASE_URL",
        key_help="create one at console.anthropic.com",
        models=("claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5", "claude-opus-4-1"),
        summary="Anthropic Messages",
    ),
    "openrouter": ProviderInfo(
        name="openrouter",
        protocol="openai",
        default_model="anthropic/claude-sonnet-4.5",
        default_base_url="https://openrouter.ai/api/v1",
        key_env="OPENROUTER_API_KEY",
        url_env="OPENROUTER_BASE_URL",
        key_help="create one at openrouter.ai/keys",
        models=(
            "anthropic/claude-sonnet-4.5",
            "openai/gpt-4.1",
            "google/gemini-2.5-pro",
            "deepseek/deepseek-chat",
        ),
        summary="OpenRouter: many vendors' models behind one key (names are vendor/model)",
    ),
    "gemini": ProviderInfo(
        name="gemini",
        protocol="openai",
        default_model="gemini-2.5-flash",
        default_base_url="https://generativelanguage.googleapis.com/v1beta/openai",
        key_env="GEMINI_API_KEY",
        url_env="GEMINI_BASE_URL",
        key_help="create one at aistudio.google.com/apikey",
        models=("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite"),
        summary="Google Gemini through its OpenAI-compatible endpoint",
    ),
    "deepseek": ProviderInfo(
        name="deepseek",
        protocol="openai",
        default_model="deepseek-chat",
        default_base_url="https://api.deepseek.com/v1",
        key_env="DEEPSEEK_API_KEY",
        url_env="DEEPSEEK_BASE_URL",
        key_help="create one at platform.deepseek.com",
        models=("deepseek-chat", "deepseek-reasoner"),
        summary="DeepSeek (deepseek-reasoner streams its reasoning)",
    ),
    "groq": ProviderInfo(
        name="groq",
        protocol="openai",
        default_model="llama-3.3-70b-versatile",
        default_base_url="https://api.groq.com/openai/v1",
        key_env="GROQ_API_KEY",
        url_env="GROQ_BASE_URL",
        key_help="create one at console.groq.com/keys",
        models=("llama-3.3-70b-versatile", "openai/gpt-oss-120b", "moonshotai/kimi-k2-instruct"),
        summary="Groq: fast open-weight models",
    ),
    "ollama": _local("ollama", 11434, "OLLAMA", "qwen2.5-coder:7b", "Ollama on this machine"),
    "lmstudio": _local("lmstudio", 1234, "LMSTUDIO", "qwen2.5-coder-7b-instruct", "LM Studio's server"),
    "vllm": _local("vllm", 8000, "VLLM", "Qwen/Qwen2.5-Coder-7B-Instruct", "a vLLM server"),
    "llamacpp": _local(
        "llamacpp", 8080, "LLAMACPP", PLACEHOLDER_MODEL, "llama.cpp's llama-server (run with --jinja)"
    ),
    "local": ProviderInfo(
        name="local",
        protocol="openai",
        default_model="smollm2-135m-instruct",
        default_base_url="http://127.0.0.1/v1",  # replaced by the port of the server ink starts
        key_env="INK_LOCAL_API_KEY",
        url_env="INK_LOCAL_BASE_URL",
        key_help="ink's own local server needs none",
        key_required=False,
        models=("smollm2-135m-instruct",),
        summary="a GGUF model run by ink itself (--model-path; needs ink-agent[local])",
    ),
}

DEFAULT_PROVIDER = "openai"
LOCAL_SERVERS = tuple(name for name, info in PROVIDERS.items() if not info.key_required and name != "local")


# OpenAI models served only by the Responses API: ``--provider openai`` speaks it for them by itself.
RESPONSES_ONLY = (
    "gpt-5-codex", "gpt-5.1-codex", "codex-mini", "gpt-5-pro", "o1-pro", "o3-pro", "o3-deep-research",
    "o4-mini-deep-research", "computer-use-preview",
)  # fmt: skip


def protocol_for(info: ProviderInfo, model: str) -> Protocol:
    """The protocol to speak to ``info``'s service about ``model``: the provider's own, except for the
    OpenAI models that exist only in the Responses API (by name or a dated/sized variant of one)."""
    if info.name == "openai" and any(model == m or model.startswith(m + "-") for m in RESPONSES_ONLY):
        return "openai-responses"
    return info.protocol


def provider_names() -> tuple[str, ...]:
    return tuple(PROVIDERS)
