"""The providers ink knows: their protocol, default model and URL, and the environment variables read.

Adding a provider (an OpenAI-compatible service, say) is one entry here plus, if its protocol is new, a
provider class in ``ink.ai``. The default models are data, overridable per provider in a config file
(``[providers.openai] model = "..."``), never literals scattered through the code.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Protocol = Literal["openai", "anthropic"]


class ProviderInfo(NamedTuple):  # not a dataclass: ~10x cheaper to define on the start-up path
    name: str
    protocol: Protocol
    default_model: str
    default_base_url: str
    key_env: str
    url_env: str
    key_help: str  # where a user gets a key, for the "missing key" message


PROVIDERS: dict[str, ProviderInfo] = {
    "openai": ProviderInfo(
        name="openai",
        protocol="openai",
        default_model="gpt-4.1",
        default_base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        url_env="OPENAI_BASE_URL",
        key_help="create one at platform.openai.com",
    ),
    "anthropic": ProviderInfo(
        name="anthropic",
        protocol="anthropic",
        default_model="claude-sonnet-4-5",
        default_base_url="https://api.anthropic.com",
        key_env="ANTHROPIC_API_KEY",
        url_env="ANTHROPIC_BASE_URL",
        key_help="create one at console.anthropic.com",
    ),
}

DEFAULT_PROVIDER = "openai"


def provider_names() -> tuple[str, ...]:
    return tuple(PROVIDERS)
