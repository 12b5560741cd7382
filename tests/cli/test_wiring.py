"""The shared wiring: settings in, provider + tools + loop set-up + controller out (in-process)."""

from __future__ import annotations

from pathlib import Path

from ink.ai.anthropic import AnthropicProvider
from ink.ai.openai import OpenAIProvider
from ink.ai.redacting import RedactingProvider
from ink.config import Flags, Settings, load_settings
from ink.run.events import RunEnd, RunEvent
from ink.wiring import build_app, request_options
from tests.fakeserver import FakeModelServer, call, say


def settings(tmp_path: Path, **flags: object) -> Settings:
    env = {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path)}
    return load_settings(Flags(**flags), env, tmp_path)  # type: ignore[arg-type]


async def test_build_app_runs_a_turn_with_real_tools(fake_server: FakeModelServer, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    fake_server.script(call("read", {"path": "a.txt"}), say("done"))
    app = build_app(settings(tmp_path, base_url=fake_server.openai_base_url, max_iterations=5))
    events: list[RunEvent] = []
    app.controller.subscribe(events.append)
    try:
        app.controller.submit("read a.txt")
        await app.controller.wait_idle()
    finally:
        await app.aclose()
    ends = [e for e in events if isinstance(e, RunEnd)]
    assert [e.stop_reason for e in ends] == ["completed"]
    assert "alpha" in fake_server.requests[1].tool_results()[0][1]
    assert app.controller.setup.max_iterations == 5
    offered = {t["function"]["name"] for t in fake_server.requests[0].body["tools"]}
    assert {"read", "write", "edit", "bash", "grep", "glob", "ls"} <= offered
    system = fake_server.requests[0].system
    assert str(app.settings.cwd) in system and "read" in system


async def test_the_provider_follows_the_settings(tmp_path: Path) -> None:
    app = build_app(settings(tmp_path, provider="anthropic", base_url="http://127.0.0.1:9"))
    try:
        assert isinstance(app.provider, RedactingProvider)
        assert isinstance(app.provider.inner, AnthropicProvider)
        assert app.controller.setup.model == "claude-sonnet-4-5"
    finally:
        await app.aclose()
    app = build_app(settings(tmp_path, base_url="http://127.0.0.1:9/v1", model="local-model"))
    try:
        assert isinstance(app.provider, RedactingProvider)
        assert isinstance(app.provider.inner, OpenAIProvider) and app.controller.setup.model == "local-model"
    finally:
        await app.aclose()


def test_thinking_becomes_each_protocols_request_field(tmp_path: Path) -> None:
    home = tmp_path / "inkhome"
    home.mkdir()
    (home / "config.toml").write_text('thinking = "medium"\n')
    assert request_options(settings(tmp_path)) == {"reasoning_effort": "medium"}
    anthropic = request_options(settings(tmp_path, provider="anthropic"))
    assert anthropic == {"thinking": {"type": "enabled", "budget_tokens": 8191}}  # below max_tokens 8192
    (home / "config.toml").write_text('thinking = "off"\n')
    assert request_options(settings(tmp_path, provider="anthropic")) == {}
