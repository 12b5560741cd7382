"""Resume restores the conversation exactly: the next request equals the one without the restart."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.history import History
from ink.agent.loop import LoopSetup, PendingInput, run_loop
from ink.ai.anthropic import AnthropicProvider
from ink.ai.openai import OpenAIProvider
from ink.store import SessionStore
from tests.ai.helpers import PROTOCOLS, provider_for
from tests.fakeserver import FakeModelServer, Reply, say, text, thinking, tool_call
from tests.scripted_tools import ScriptedTool


@pytest.fixture(params=PROTOCOLS)
async def provider(
    request: pytest.FixtureRequest, fake_server: FakeModelServer
) -> AsyncIterator[OpenAIProvider | AnthropicProvider]:
    p = provider_for(str(request.param), fake_server)
    yield p
    await p.aclose()


async def turn(provider: OpenAIProvider | AnthropicProvider, history: History, prompt: str, n: int) -> None:
    setup = LoopSetup(provider, "fake-model", "be brief", (ScriptedTool("read"),), max_tokens=500)
    first = [PendingInput(f"in-{n}", prompt, "steer")]
    result = await run_loop(history, first, setup, AbortSignal(), lambda e: None)
    assert result.stop_reason == "completed"


def script(fake_server: FakeModelServer) -> None:
    fake_server.script(
        Reply([thinking("which file?"), text("Reading."), tool_call("read", {"x": "a"}, id="c1")]),
        say("It says hello."),
        say("Next done."),
    )


async def test_the_request_after_a_resume_equals_the_one_without_restart(
    provider: OpenAIProvider | AnthropicProvider, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    sessions = SessionStore(tmp_path / "sessions")
    script(fake_server)
    live = sessions.create(tmp_path, "fake-model", provider.name)
    await turn(provider, live.history, "read a", 1)
    live.close()  # the process ends here; the same history goes on without a restart below
    await turn(provider, live.history, "and next?", 2)
    without_restart = fake_server.requests[-1].body

    fake_server.script(say("Next done."))
    resumed = sessions.continue_latest(tmp_path)
    assert resumed.id == live.id and not resumed.loaded.repair  # type: ignore[union-attr]
    await turn(provider, resumed.history, "and next?", 2)
    resumed.close()
    after_restart = fake_server.requests[-1].body
    assert after_restart == without_restart
    assert all(r.wait_finished() == "completed" for r in fake_server.requests)
