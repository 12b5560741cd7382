"""MCP servers inside a whole app: configured in config.toml, offered to the model, interrupted like
ink's own tools (R17-R20, R33, R35), and the history stays valid for a strict API (R19)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ink.agent.events import ToolUpdate
from ink.config import Flags, Settings, load_settings
from ink.run.events import RunEnd, RunEvent
from ink.wiring import App, start_app
from ink.wiring.mcp_part import mcp_of
from tests.fakeserver import FakeModelServer, call, say
from tests.mcp_tools.servers import SERVER, journal_lines
from tests.processes import gone
from tests.waiting import wait_until


def configure(tmp_path: Path, fake: FakeModelServer, servers: str, protocol: str = "openai") -> Settings:
    home = tmp_path / "inkhome"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(servers)
    env = {"INK_HOME": str(home), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    flags = Flags(
        provider=protocol,
        base_url=fake.base_url(protocol),
        api_key="k",
        permission_mode="yolo",
        no_session=True,
    )
    return load_settings(flags, env, tmp_path)


def stdio_table(name: str, journal: Path, mode: str = "stdio", timeout: float = 90) -> str:
    args = json.dumps([SERVER, mode])
    return (
        f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n"
        f"env = {{ MCP_JOURNAL = {json.dumps(str(journal))} }}\nstartup_timeout = {timeout}\n"
    )


class Events:
    def __init__(self, app: App) -> None:
        self.seen: list[RunEvent] = []
        app.controller.subscribe(self.seen.append)

    def ends(self) -> list[RunEnd]:
        return [e for e in self.seen if isinstance(e, RunEnd)]


async def test_the_first_prompt_waits_for_the_servers_and_sees_their_tools(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    journal = tmp_path / "journal"
    settings = configure(tmp_path, fake_server, stdio_table("t", journal))
    fake_server.script(call("mcp__t__echo", {"text": "hello"}), say("done"))
    app = await start_app(settings)
    events = Events(app)
    try:
        app.controller.submit("use the echo tool")  # while the server is still starting: queued (R8)
        await wait_until(lambda: events.ends(), 120, "the run to end")
        await app.controller.wait_idle()
    finally:
        await app.aclose()
    assert [e.stop_reason for e in events.ends()] == ["completed"]
    offered = {t["function"]["name"]: t["function"] for t in fake_server.requests[0].body["tools"]}
    assert offered["mcp__t__echo"]["parameters"]["properties"]["text"]["type"] == "string"
    assert {"read", "bash", "mcp__t__slow", "mcp__t__picture"} <= set(offered)
    assert "mcp__t__echo" in fake_server.requests[0].system
    assert fake_server.requests[1].tool_results()[0][1] == "echo: hello"


async def test_an_abort_cancels_the_call_on_the_server_and_keeps_the_history_valid(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    journal = tmp_path / "journal"
    settings = configure(tmp_path, fake_server, stdio_table("t", journal))
    fake_server.script(call("mcp__t__slow", {"label": "a1"}, id="c1"), say("after the interrupt"))
    app = await start_app(settings)
    part = mcp_of(app)
    assert part is not None and part.starting is not None
    await part.starting
    await app.controller.wait_idle()
    events = Events(app)
    try:
        app.controller.submit("be slow")
        await wait_until(lambda: "started slow a1" in journal_lines(journal), 60, "the slow call")
        updates = lambda: [e for e in events.seen if isinstance(e, ToolUpdate)]  # noqa: E731
        await wait_until(updates, 30, "the server's progress as a tool_update event")
        assert updates()[-1].tool_call_id == "c1" and "a1: step 1 of 10" in updates()[-1].output
        app.controller.abort()
        await app.controller.wait_idle()
        await wait_until(lambda: "cancelled slow a1" in journal_lines(journal), 30, "the server's cancel")
        [end] = events.ends()
        assert end.stop_reason == "aborted"
        assert end.receipt is not None
        result = app.controller.history.messages[-2]
        assert result.role == "tool_result" and result.interrupted  # R33: interrupted, not a success
        assert "told to cancel slow" in result.output and "a1: step 1 of 10" in result.output
        app.controller.submit("go on")
        await app.controller.wait_idle()
        assert [e.stop_reason for e in events.ends()] == ["aborted", "completed"]
        # R19: the strict fake server accepted the history with the interrupted MCP call in it.
        assert [c for c, _ in fake_server.requests[1].tool_results()] == ["c1"]
        pid = part.manager.spared()[0].pid if part.manager else 0
        assert not gone(pid)  # the run's reaper spares the server: it lives as long as the app
    finally:
        await app.aclose()
    assert gone(pid)  # R35: and not longer


async def test_a_crash_mid_call_is_an_error_result_and_the_rest_works(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    journal = tmp_path / "journal"
    config = stdio_table("bad", journal) + stdio_table("hang", journal, "hang", timeout=1)
    settings = configure(tmp_path, fake_server, config)
    fake_server.script(call("mcp__bad__crash", {}, id="c1"), call("read", {"path": "notes.md"}), say("ok"))
    (tmp_path / "notes.md").write_text("still readable\n")
    app = await start_app(settings)
    events = Events(app)
    try:
        app.controller.submit("crash it")
        await wait_until(lambda: events.ends(), 120, "the run to end")
        await app.controller.wait_idle()
        part = mcp_of(app)
        assert part is not None and part.manager is not None
        states = {s.name: (s.state, s.error) for s in part.manager.statuses()}
    finally:
        await app.aclose()
    assert [e.stop_reason for e in events.ends()] == ["completed"]
    crash_result = fake_server.requests[1].tool_results()[0][1]
    assert "the MCP server bad is not available" in crash_result
    assert "still readable" in fake_server.requests[2].tool_results()[-1][1]
    assert states["bad"][0] == "failed" and states["hang"][0] == "failed"
    assert "did not start within 1 s" in (states["hang"][1] or "")


@pytest.mark.parametrize("protocol", ["openai", "openai-responses", "anthropic"])
async def test_a_tool_image_reaches_a_model_that_takes_images(
    fake_server: FakeModelServer, tmp_path: Path, protocol: str
) -> None:
    journal = tmp_path / "journal"
    settings = configure(tmp_path, fake_server, stdio_table("t", journal), protocol=protocol)
    fake_server.script(call("mcp__t__picture", {}, id="c1"), say("a red dot"))
    app = await start_app(settings)
    events = Events(app)
    try:
        app.controller.submit("show me")
        await wait_until(lambda: events.ends(), 120, "the run to end")
        await app.controller.wait_idle()
    finally:
        await app.aclose()
    assert [e.stop_reason for e in events.ends()] == ["completed"]
    body = fake_server.requests[1].body
    sent = json.dumps(body["input" if protocol == "openai-responses" else "messages"])
    assert "iVBORw0KGgo" in sent  # the PNG's base64, as the server sent it
    if protocol == "openai-responses":
        output, images = body["input"][-2:]
        assert output["type"] == "function_call_output" and "[image: image/png, 69 bytes]" in output["output"]
        assert images["role"] == "user" and images["content"][1]["image_url"].startswith("data:image/png")
    elif protocol == "anthropic":
        result = body["messages"][-1]["content"][0]
        assert result["type"] == "tool_result" and result["content"][1]["type"] == "image"
    else:
        tool, images = body["messages"][-2:]
        assert tool["role"] == "tool" and "[image: image/png, 69 bytes]" in tool["content"]
        assert images["role"] == "user" and images["content"][1]["image_url"]["url"].startswith(
            "data:image/png"
        )
    [result] = [m for m in app.controller.history.messages if m.role == "tool_result"]
    assert result.images is not None and result.images[0].mime_type == "image/png"
