"""What a local server says about itself reaches the settings: its context window (``/props`` n_ctx) is
the one compaction works within, and the llama.cpp preset's placeholder model becomes the model the
server reports at ``/v1/models``. A server that says nothing changes nothing."""

from __future__ import annotations

from pathlib import Path

from ink.ai.models import lookup
from ink.cli import _ask_local_server
from ink.config import Flags, Settings, load_settings
from ink.wiring import build_app
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, say

LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 8192}, "chat_template_caps": {"supports_tools": True}}


def settings(tmp_path: Path, **flags: object) -> Settings:
    env = {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path)}
    return load_settings(Flags(**flags), env, tmp_path)  # type: ignore[arg-type]


async def test_compaction_works_within_the_window_the_server_reports(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.props = LLAMA_PROPS
    chosen = settings(tmp_path, provider="llamacpp", base_url=fake_server.openai_base_url, model="smol")
    assert lookup("smol").context_window == 128_000  # what ink would assume for a model it does not know
    asked = _ask_local_server(chosen)
    assert asked.context_window == 8192 and asked.model == "smol"  # a chosen model is kept
    app = build_app(asked)
    try:
        assert app.compactor.window == 8192
    finally:
        await app.aclose()


async def test_a_server_without_props_changes_nothing(fake_server: FakeModelServer, tmp_path: Path) -> None:
    fake_server.props = None  # not llama.cpp: /props is a 404
    chosen = settings(tmp_path, provider="ollama", base_url=fake_server.openai_base_url)
    assert _ask_local_server(chosen) == chosen
    older = {"n_ctx": 4096}  # older llama.cpp servers put it at the top level
    fake_server.props = older
    assert _ask_local_server(chosen).context_window == 4096


def test_the_llamacpp_preset_uses_the_model_the_server_serves(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.props = LLAMA_PROPS
    fake_server.models = ["/models/Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf"]
    fake_server.script(say("hello"))
    args = ["--provider", "llamacpp", "--base-url", fake_server.openai_base_url, "-p", "hi"]
    done = run_ink(args, ink_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    assert fake_server.requests[0].body["model"] == "Qwen2.5-Coder-7B-Instruct-Q4_K_M"
    fake_server.models = []  # a server that reports no model: the placeholder is sent (llama.cpp ignores it)
    fake_server.script(say("hello"))
    done = run_ink(args, ink_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    assert fake_server.requests[1].body["model"] == "default"
