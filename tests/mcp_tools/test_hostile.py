"""A server's bytes cannot hang ink or take its other calls down (issue 26), and its lists are checked
(issue 23 item 9): hostile.py misbehaves on request, one tool a misdeed."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import ToolCallContext, ToolOutput
from ink.config.mcp import McpServerSpec
from ink.mcp.manager import McpManager
from ink.tools.processes import ProcessRegistry
from tests.processes import gone

HOSTILE = str(Path(__file__).with_name("hostile.py"))


def spec(name: str, journal: Path, **changes: Any) -> McpServerSpec:
    return McpServerSpec(
        name, command=sys.executable, args=(HOSTILE, str(journal)), startup_timeout=90, **changes
    )


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[McpManager]:
    made = McpManager([spec("h", tmp_path / "init.json")], {}, tmp_path, ProcessRegistry())
    await made.start()
    try:
        yield made
    finally:
        await made.aclose()


async def run(manager: McpManager, tool: str, **args: Any) -> ToolOutput:
    tools = {t.name: t for t in manager.tools()}
    return await tools[f"mcp__h__{tool}"].run(args, ToolCallContext("c1", AbortSignal()))


async def still_works(manager: McpManager) -> None:
    assert (await run(manager, "echo", text="after")).output == "echo: after"
    assert manager.statuses()[0].state == "ready"


async def test_a_line_that_is_not_utf8_fails_its_call_alone(manager: McpManager) -> None:
    out = await asyncio.wait_for(run(manager, "bad_utf8"), 30)
    assert out.is_error and "not valid UTF-8" in out.output
    await still_works(manager)


async def test_a_result_nested_5000_deep_fails_its_call_at_once(manager: McpManager) -> None:
    out = await asyncio.wait_for(run(manager, "deep"), 30)
    assert out.is_error and "nested too deep" in out.output
    await still_works(manager)


async def test_a_100_mb_line_fails_its_call_quickly_and_a_30_mb_one_is_read(manager: McpManager) -> None:
    started = time.monotonic()
    out = await asyncio.wait_for(run(manager, "huge", n=100), 60)
    assert out.is_error and "over the limit of 64.0 MiB" in out.output
    big = await asyncio.wait_for(run(manager, "huge", n=30), 60)
    assert not big.is_error and big.output.startswith("xxxx")
    assert time.monotonic() - started < 60  # linear: quadratic reading took over 60 s for 100 MB alone
    await still_works(manager)


async def test_a_line_that_names_no_call_marks_the_server_failed_visibly(manager: McpManager) -> None:
    out = await asyncio.wait_for(run(manager, "not_json"), 30)
    assert out.is_error and "not available" in out.output and "not JSON" in out.output
    [status] = manager.statuses()
    assert status.state == "failed" and "not JSON" in (status.error or "")
    again = await asyncio.wait_for(run(manager, "echo", text="x"), 5)  # fails at once, never hangs
    assert again.is_error and "not available" in again.output


async def test_a_silent_call_times_out_and_is_cancelled(tmp_path: Path) -> None:
    manager = McpManager(
        [spec("h", tmp_path / "init.json", call_timeout=1.0)], {}, tmp_path, ProcessRegistry()
    )
    await manager.start()
    try:
        out = await asyncio.wait_for(run(manager, "silent"), 30)
        assert out.is_error and "within 1 s (call_timeout)" in out.output
        await still_works(manager)
    finally:
        await manager.aclose()


async def test_images_past_the_results_budget_are_named_not_kept(manager: McpManager) -> None:
    tool = {t.name: t for t in manager.tools()}["mcp__h__images"]
    out = await tool.run({"n": 20}, ToolCallContext("c1", AbortSignal()))
    assert len(out.images) == 5  # MAX_RESULT_IMAGES, 5 MiB: the rest would be re-sent with every request
    assert out.output.count("over the result's image budget") == 20 - len(out.images)


async def test_a_crash_fails_the_server_with_its_exit_code(manager: McpManager) -> None:
    out = await asyncio.wait_for(run(manager, "crash"), 30)
    assert out.is_error and "exited with code 4" in out.output


async def test_a_server_that_floods_its_stderr_costs_only_its_tail(manager: McpManager) -> None:
    out = await asyncio.wait_for(run(manager, "shout"), 60)
    assert out.is_error and "exited with code 5" in out.output and "the last words" in out.output
    assert len(out.output) < 2000  # 20 MB of stderr: the tail quoted, 16 KiB kept


async def test_lists_refuse_duplicates_empty_bidi_and_task_only_tools(manager: McpManager) -> None:
    [status] = manager.statuses()
    assert "mcp__h__echo" in status.tools and "mcp__h__later" not in status.tools
    assert not any("dup" in name or "ab" in name for name in status.tools)
    notes = "\n".join(status.notes)
    assert notes.count("'dup' left out: the server lists it 2 times") == 1
    assert "'' left out: it has no name" in notes
    assert "U+202E" in notes and "runs only as an MCP task" in notes


async def test_ink_introduces_itself_and_gives_the_workspace_as_root(
    manager: McpManager, tmp_path: Path
) -> None:
    sent = json.loads((tmp_path / "init.json").read_text())
    root = tmp_path.resolve()  # noqa: ASYNC240
    assert sent["clientInfo"]["name"] == "ink" and sent["clientInfo"]["version"]
    assert set(sent["capabilities"]) == {"roots", "elicitation"}
    out = await run(manager, "roots")
    assert json.loads(out.output)["roots"] == [{"uri": root.as_uri(), "name": root.name}]


async def test_a_question_is_declined_when_nobody_can_answer_and_asked_when_someone_can(
    manager: McpManager,
) -> None:
    assert json.loads((await run(manager, "ask")).output) == {"action": "decline"}
    asked = []

    async def answer(server: str, message: str, schema: Any) -> dict[str, Any]:
        asked.append((server, message, schema["required"]))
        return {"action": "accept", "content": {"color": "blue"}}

    manager.elicitor = answer
    reply = json.loads((await run(manager, "ask")).output)
    assert reply == {"action": "accept", "content": {"color": "blue"}}
    assert asked == [("h", "Which color?", ["color"])]


async def test_list_changed_mid_session_offers_the_new_tool(manager: McpManager) -> None:
    changed = asyncio.Event()
    manager.on_change = lambda server: changed.set()
    assert "mcp__h__extra" not in {t.name for t in manager.tools()}
    await run(manager, "grow")
    await asyncio.wait_for(changed.wait(), 30)
    assert "mcp__h__extra" in {t.name for t in manager.tools()}
    assert (await run(manager, "extra")).output == "extra ran"


async def test_tool_names_that_clash_across_servers_are_both_refused(tmp_path: Path) -> None:
    """Issue 23 item 9: server ``a_`` with tool ``_b__c`` and server ``a`` with tool ``__b__c`` would both
    be mcp__a____b__c; neither is offered, and each server's notes name both."""
    from ink.mcp.connection import ServerConnection
    from ink.mcp.model import RemoteTool

    manager = McpManager([], {}, tmp_path, ProcessRegistry())
    for server, tool in (("a_", "_b__c"), ("a", "__b__c"), ("a", "ok")):
        conn = manager._connections.get(server) or ServerConnection(
            McpServerSpec(server, command="x"), {}, str(tmp_path), ProcessRegistry(), manager
        )
        conn.state = "ready"
        conn.tools = (*conn.tools, RemoteTool(server, tool, "", {"type": "object"}))
        manager._connections[server] = conn
    manager.specs = tuple(McpServerSpec(name, command="x") for name in ("a_", "a"))
    manager._name_tools()
    assert [t.name for t in manager.tools()] == ["mcp__a__ok"]
    for status in manager.statuses():
        assert any("a_'s tool '_b__c' and a's tool '__b__c'" in note for note in status.notes)


async def test_a_server_that_leaves_a_process_behind_is_ended_whole(tmp_path: Path) -> None:
    """R35: a server that exits when its stdin closes is forgotten without a scan of the system; one
    whose group still holds a process (here a sleep it started) is ended, that process with it."""
    pid_file = tmp_path / "sleep.pid"
    script = f"sleep 300 & echo $! > {pid_file}; exec {sys.executable} {HOSTILE}"
    leaves = McpServerSpec("leaves", command="sh", args=("-c", script), startup_timeout=90)
    clean = spec("clean", tmp_path / "init.json")
    processes = ProcessRegistry()
    manager = McpManager([leaves, clean], {}, tmp_path, processes)
    await manager.start()
    assert [s.state for s in manager.statuses()] == ["ready", "ready"]
    sleeper = int(pid_file.read_text())
    await manager.aclose()
    assert processes.entries == ()
    assert gone(sleeper) and all(gone(entry.pid) for entry in manager.spared())


async def test_streamable_http_failures_fail_their_call_or_the_server_visibly(tmp_path: Path) -> None:
    """Over HTTP: the session id and protocol version go with every message; a stream that is not
    JSON or ends without the answer fails that call at once, an HTTP error fails its call with the
    server's words, and a 404 for the session marks the server failed; closing deletes the session."""
    from tests.mcp_tools.hostile_http import HostileHttp

    with HostileHttp() as server:
        manager = McpManager([McpServerSpec("h", url=server.url)], {}, tmp_path, ProcessRegistry())
        await manager.start()
        try:
            updates: list[str] = []
            tools = {t.name: t for t in manager.tools()}
            ctx = ToolCallContext("c1", AbortSignal(), on_update=updates.append)
            assert (await tools["mcp__h__echo"].run({"text": "hi"}, ctx)).output == "echo: hi"
            assert updates == ["half way\n"]
            bad = await asyncio.wait_for(run(manager, "not_json"), 30)
            assert bad.is_error and "not JSON" in bad.output
            silent = await asyncio.wait_for(run(manager, "no_answer"), 30)
            assert silent.is_error and "ended its event stream without answering" in silent.output
            failed = await asyncio.wait_for(run(manager, "fail"), 30)
            assert failed.is_error and "HTTP 500" in failed.output and "the database is down" in failed.output
            assert manager.statuses()[0].state == "ready"
            expired = await asyncio.wait_for(run(manager, "expire"), 30)
            assert expired.is_error and "ended the session (HTTP 404)" in expired.output
            assert manager.statuses()[0].state == "failed"
        finally:
            await manager.aclose()
        later = [s["headers"] for s in server.seen[1:]]
        assert all(h.get("mcp-session-id") == "s1" for h in later)
        assert all(h.get("mcp-protocol-version") == "2025-11-25" for h in later)
        assert server.deleted
