"""A run works with the set-up it started with, sub-agents included (R13), in a real app against the fake
model server: a model switch while the run goes on reaches neither the run nor the sub-agents it starts."""

from __future__ import annotations

from pathlib import Path

from ink.agent.events import ToolStart
from ink.config import Flags, Settings, load_settings
from ink.run.events import RunEnd, RunEvent
from ink.wiring import build_app
from tests.fakeserver import FakeModelServer, call, say
from tests.waiting import wait_until


def settings(tmp_path: Path, server: FakeModelServer) -> Settings:
    env = {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path)}
    flags = Flags(
        provider="openai",
        base_url=server.openai_base_url,
        api_key="k",
        model="gpt-4.1",
        permission_mode="yolo",
        no_session=True,
    )
    return load_settings(flags, env, tmp_path)


async def test_R13_a_model_switch_at_a_sub_agents_tool_start_reaches_neither_it_nor_the_run(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.script(
        call("task", {"description": "look", "prompt": "look around", "agent": "explore"}, id="t1"),
        say("the sub-agent's answer"),
        say("the run's answer"),
        say("the next run's answer"),
    )
    app = build_app(settings(tmp_path, fake_server))
    events: list[RunEvent] = []

    def on_event(event: RunEvent) -> None:
        events.append(event)
        if isinstance(event, ToolStart) and event.name == "task" and event.source is None:
            app.switch_model("gpt-4.1-mini")  # as RPC's set_model would, at this very moment

    app.controller.subscribe(on_event)
    try:
        app.controller.submit("delegate it")
        await wait_until(lambda: any(isinstance(e, RunEnd) for e in events), 60, "the run to end")
        app.controller.submit("and now?")
        await wait_until(lambda: len([e for e in events if isinstance(e, RunEnd)]) == 2, 60, "the next run")
    finally:
        await app.aclose()
    assert [e.stop_reason for e in events if isinstance(e, RunEnd)] == ["completed", "completed"]
    sent = [request.body["model"] for request in fake_server.requests]
    assert sent == ["gpt-4.1", "gpt-4.1", "gpt-4.1", "gpt-4.1-mini"]  # the run, its sub-agent, the run; next
    assert fake_server.requests[1].user_texts() == ["look around"]  # the second request was the sub-agent's
