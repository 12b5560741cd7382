"""Provider presets: ``--provider NAME`` gives the base URL, the key's environment variable and the known
models; servers on this machine need no key; ``--model-path`` belongs to ``--provider local`` only."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink.config import ConfigError, Flags, load_settings, missing_key_problem
from ink.config.catalogue import PROVIDERS


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "inkhome").mkdir()
    return {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path / "home")}


@pytest.mark.parametrize(
    ("name", "url", "key_env"),
    [
        ("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        ("gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
        ("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        ("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    ],
)
def test_a_hosted_preset_brings_its_url_and_wants_its_own_key(
    name: str, url: str, key_env: str, env: dict[str, str], tmp_path: Path
) -> None:
    bare = load_settings(Flags(provider=name), env | {"OPENAI_API_KEY": "not-this-one"}, tmp_path)
    assert (bare.base_url, bare.model, bare.api_key) == (url, PROVIDERS[name].default_model, None)
    problem = missing_key_problem(bare)
    assert problem is not None and key_env in problem and name in problem
    keyed = load_settings(Flags(provider=name), env | {key_env: "k-123"}, tmp_path)
    assert keyed.api_key == "k-123" and missing_key_problem(keyed) is None
    assert "k-123" in keyed.secrets  # redacted wherever ink writes


@pytest.mark.parametrize(
    ("name", "port"), [("ollama", 11434), ("lmstudio", 1234), ("vllm", 8000), ("llamacpp", 8080)]
)
def test_a_local_server_preset_needs_no_key(
    name: str, port: int, env: dict[str, str], tmp_path: Path
) -> None:
    settings = load_settings(Flags(provider=name), env, tmp_path)
    assert settings.base_url == f"http://127.0.0.1:{port}/v1"
    assert settings.api_key is None and missing_key_problem(settings) is None


def test_a_preset_url_can_be_moved_by_its_own_variable(env: dict[str, str], tmp_path: Path) -> None:
    settings = load_settings(
        Flags(provider="ollama"), env | {"OLLAMA_BASE_URL": "http://box:11434/v1"}, tmp_path
    )
    assert (settings.base_url, settings.origins["base_url"]) == ("http://box:11434/v1", "OLLAMA_BASE_URL")


def test_every_preset_knows_its_default_model() -> None:
    for info in PROVIDERS.values():
        assert info.models and info.models[0] == info.default_model, info.name
        assert info.summary, info.name


def test_model_path_is_for_the_local_provider_only(env: dict[str, str], tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    settings = load_settings(Flags(provider="local", model_path="m.gguf"), env, tmp_path)
    assert settings.model_path == model and missing_key_problem(settings) is None
    with pytest.raises(ConfigError, match="--model-path is for --provider local"):
        load_settings(Flags(provider="ollama", model_path="m.gguf"), env, tmp_path)
    with pytest.raises(ConfigError, match="no such file"):
        load_settings(Flags(provider="local", model_path="missing.gguf"), env, tmp_path)


def test_a_bad_provider_in_a_file_lists_the_choices(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "inkhome" / "config.toml").write_text('provider = "olama"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(Flags(), env, tmp_path)
    assert "olama" in str(caught.value) and "ollama" in str(caught.value) and "groq" in str(caught.value)
