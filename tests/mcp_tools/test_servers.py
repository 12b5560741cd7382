"""ink's MCP client against real servers written with the SDK (stdio and Streamable HTTP)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from ink.agent.abort import AbortSignal
from ink.agent.tool import ToolCallContext
from ink.ai.messages import ToolCall
from ink.config.keys import PermissionMode
from ink.config.rules import parse_rule
from ink.mcp.manager import McpManager
from ink.mcp.tool import McpTool
from ink.permissions import PermissionPolicy, RuleSet
from ink.tools.processes import ProcessRegistry
from tests.mcp_tools.servers import http_server, http_spec, journal_lines, stdio_spec
from tests.processes import gone
from tests.waiting import wait_until


def call_ctx(signal: AbortSignal | None = None) -> ToolCallContext:
    return ToolCallContext(ToolCall("call-1", "mcp", {}), signal or AbortSignal())


def by_name(manager: McpManager) -> dict[str, McpTool]:
    return {tool.name: tool for tool in manager.tools()}


async def test_stdio_tools_with_schemas_hints_and_an_image(tmp_path: Path) -> None:
    manager = McpManager([stdio_spec("t", tmp_path / "journal")], {}, tmp_path, ProcessRegistry())
    await manager.start()
    try:
        tools = by_name(manager)
        assert set(tools) == {
            "mcp__t__echo",
            "mcp__t__slow",
            "mcp__t__crash",
            "mcp__t__picture",
            "mcp__t__wipe",
            "mcp__t__lookup",
            "mcp__t__note",
            "mcp__t__ask",
            "mcp__t__grow",
        }
        echo = tools["mcp__t__echo"]
        assert echo.spec.parameters["properties"]["text"]["type"] == "string"
        assert echo.spec.description == "Say the text back."
        assert echo.concurrency_safe and not tools["mcp__t__wipe"].concurrency_safe
        assert tools["mcp__t__wipe"].remote.destructive
        out = await echo.run({"text": "hi"}, call_ctx())
        assert (out.output, out.is_error) == ("echo: hi", False)
        seen = []
        picture = McpTool(tools["mcp__t__picture"].remote, manager._connections["t"], seen.append)
        out = await picture.run({}, call_ctx())
        assert out.output == "a red dot\n[image: image/png, 69 bytes]"
        assert seen[0].images[0].mime_type == "image/png" and seen[0].images[0].data.startswith("iVBOR")
        [status] = manager.statuses()
        assert (status.state, status.transport, status.error) == ("ready", "stdio", None)
        pid = manager.spared()[0].pid
    finally:
        await manager.aclose()
    assert gone(pid)  # R35: no server outlives its manager


async def test_annotations_give_each_tool_its_kind_and_the_policy_judges_it_so(tmp_path: Path) -> None:
    """Issue 17: readOnlyHint, destructiveHint and openWorldHint, as a real SDK server sends them, make
    the tool's kind; the permission policy judges an MCP tool by that kind like any other tool."""
    manager = McpManager([stdio_spec("t", tmp_path / "journal")], {}, tmp_path, ProcessRegistry())
    await manager.start()
    try:
        tools = by_name(manager)
    finally:
        await manager.aclose()
    kinds = {name.removeprefix("mcp__t__"): tool.kind for name, tool in tools.items()}
    assert kinds == {
        "echo": "read", "picture": "read",  # read-only
        "lookup": "fetch",  # read-only, open world
        "note": "edit",  # changes local state, destroys nothing
        "wipe": "other", "slow": "other", "crash": "other",  # destructive, or not annotated
        "ask": "other", "grow": "other",
    }  # fmt: skip
    assert "(destructive)" in tools["mcp__t__wipe"].describe({"target": "prod"}).title

    def verdict(
        name: str, mode: PermissionMode = "ask", allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()
    ) -> str:
        rules = RuleSet(
            [parse_rule("allow", text, "test") for text in allow]
            + [parse_rule("deny", text, "test") for text in deny]
        )
        return PermissionPolicy(mode, rules, tmp_path, tools.get).check(name, {}).kind

    assert verdict("mcp__t__echo") == "allow"  # a read runs without a question
    assert verdict("mcp__t__wipe") == verdict("mcp__t__lookup") == verdict("mcp__t__note") == "ask"
    assert verdict("mcp__t__lookup", allow=("fetch",)) == "allow"  # the rule word for its kind
    assert verdict("mcp__t__wipe", allow=("fetch",)) == "ask"
    assert verdict("mcp__t__note", allow=("edit",)) == "allow"
    assert verdict("mcp__t__wipe", "yolo") == "allow"
    # R37: the server's readOnlyHint spares the question, never a deny rule (by name, or by kind)
    assert verdict("mcp__t__echo", deny=("mcp__t__echo",)) == "deny"
    assert verdict("mcp__t__echo", "yolo", deny=("read",)) == "deny"


async def test_a_server_that_never_answers_initialize_fails_alone(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    specs = [stdio_spec("hang", journal, "hang", timeout=1.0), stdio_spec("t", journal)]
    manager = McpManager(specs, {}, tmp_path, ProcessRegistry())
    await manager.start()
    try:
        hang, good = manager.statuses()
        assert hang.state == "failed" and "did not start within 1 s" in (hang.error or "")
        assert manager.spared()[0].command.endswith("hang")  # it was spawned: the wait was for an answer
        assert good.state == "ready"
        out = await by_name(manager)["mcp__t__echo"].run({"text": "still here"}, call_ctx())
        assert out.output == "echo: still here"
    finally:
        await manager.aclose()
    assert manager.spared() == [] or all(gone(e.pid) for e in manager.spared())


async def test_a_server_that_crashes_mid_call_fails_its_own_tools_only(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    manager = McpManager(
        [stdio_spec("bad", journal), stdio_spec("good", journal)], {}, tmp_path, ProcessRegistry()
    )
    await manager.start()
    try:
        tools = by_name(manager)
        out = await tools["mcp__bad__crash"].run({}, call_ctx())
        assert out.is_error and "the MCP server bad is not available" in out.output
        assert "crashes on purpose" in out.output  # the tail of its stderr says why
        again = await tools["mcp__bad__echo"].run({"text": "x"}, call_ctx())
        assert again.is_error and "not available" in again.output
        assert (await tools["mcp__good__echo"].run({"text": "ok"}, call_ctx())).output == "echo: ok"
        states = {s.name: s.state for s in manager.statuses()}
        assert states == {"bad": "failed", "good": "ready"}
    finally:
        await manager.aclose()


async def test_an_aborted_call_is_cancelled_on_the_server(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    manager = McpManager([stdio_spec("t", journal)], {}, tmp_path, ProcessRegistry())
    await manager.start()
    try:
        slow = by_name(manager)["mcp__t__slow"]
        signal = AbortSignal()
        running = asyncio.ensure_future(slow.run({"label": "s1"}, call_ctx(signal)))
        await wait_until(lambda: "started slow s1" in journal_lines(journal), 30, "the slow call to start")
        signal.abort()
        out = await running
        assert out.interrupted and out.is_error
        assert "told to cancel slow" in out.output
        await wait_until(lambda: "cancelled slow s1" in journal_lines(journal), 30, "the server's cancel")
        assert (
            await by_name(manager)["mcp__t__echo"].run({"text": "after"}, call_ctx())
        ).output == "echo: after"
    finally:
        await manager.aclose()


async def test_streamable_http_with_a_bearer_token_from_the_environment(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    with http_server("s3cret", journal) as url:
        env = {"TEST_MCP_TOKEN": "s3cret"}
        specs = [http_spec("web", url), http_spec("wrong", url, "Bearer nope")]
        manager = McpManager(specs, env, tmp_path, ProcessRegistry())
        await manager.start()
        try:
            web, wrong = manager.statuses()
            assert (web.state, web.transport) == ("ready", "http")
            assert wrong.state == "failed" and "s3cret" not in (wrong.error or "")
            tools = by_name(manager)
            assert (await tools["mcp__web__echo"].run({"text": "h"}, call_ctx())).output == "echo: h"
            signal = AbortSignal()
            running = asyncio.ensure_future(tools["mcp__web__slow"].run({"label": "h1"}, call_ctx(signal)))
            await wait_until(lambda: "started slow h1" in journal_lines(journal), 30, "the slow call")
            signal.abort()
            assert (await running).interrupted
            await wait_until(lambda: "cancelled slow h1" in journal_lines(journal), 30, "the server's cancel")
        finally:
            await manager.aclose()


async def test_a_missing_token_variable_is_a_clear_error(tmp_path: Path) -> None:
    spec = http_spec("web", "http://127.0.0.1:9/mcp")
    manager = McpManager([spec], {}, tmp_path, ProcessRegistry())
    await manager.start()
    [status] = manager.statuses()
    await manager.aclose()
    assert status.state == "failed" and "TEST_MCP_TOKEN is not set" in (status.error or "")
    assert os.environ.get("TEST_MCP_TOKEN") is None


async def test_many_tools_are_offered_on_demand_through_a_search(tmp_path: Path) -> None:
    from ink.mcp.catalogue import McpCatalogue, ToolSearch

    manager = McpManager([stdio_spec("t", tmp_path / "journal")], {}, tmp_path, ProcessRegistry())
    await manager.start()
    try:
        tools = manager.tools()
        catalogue = McpCatalogue(tools, defer_above=2)
        search = ToolSearch(catalogue)
        everything = [*tools, search]
        assert [s.name for s in catalogue.offer(everything)] == ["mcp_tool_search"]
        assert "t (9 tools)" in search.spec.description
        found = await search.run({"query": "say the text back"}, call_ctx())
        assert "## mcp__t__echo\nSay the text back." in found.output
        assert '"text"' in found.output  # the schema comes with it
        assert [s.name for s in catalogue.offer(everything)][:1] == ["mcp__t__echo"]
        assert "mcp__t__wipe" not in [s.name for s in catalogue.offer(everything)]
        nothing = await search.run({"query": "zebra"}, call_ctx())
        assert "No MCP tool matches" in nothing.output and not nothing.is_error
        assert McpCatalogue(tools).deferred is False  # five tools: every schema is sent as usual
    finally:
        await manager.aclose()


async def test_closing_while_a_server_is_still_starting_does_not_wait_for_its_timeout(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    manager = McpManager([stdio_spec("hang", journal, "hang")], {}, tmp_path, ProcessRegistry())
    starting = asyncio.ensure_future(manager.start())
    await wait_until(lambda: "hanging" in journal_lines(journal), 60, "the server to be waiting")
    await asyncio.wait_for(manager.aclose(), 30)  # its start-up timeout is 90 s
    await asyncio.wait_for(starting, 5)
    [status] = manager.statuses()
    assert status.state == "closed" and all(gone(e.pid) for e in manager.spared())


async def test_an_sdk_servers_prompts_resources_questions_and_new_tools(tmp_path: Path) -> None:
    """The same breadth against a server written with the official SDK: its prompt and resource are read,
    its elicitation is asked of the user (accepted here, declined without an answerer), and a tool it adds
    mid-session (tools/list_changed) is offered."""
    from ink.mcp.prompts import attach_resources, get_prompt, prompt_arguments

    manager = McpManager([stdio_spec("t", tmp_path / "journal")], {}, tmp_path, ProcessRegistry())
    await manager.start()
    changed = asyncio.Event()
    manager.on_change = lambda server: changed.set()
    try:
        [review] = manager.prompts()
        assert (review.name, [a.name for a in review.arguments]) == ("review", ["path"])
        got = await get_prompt(manager, review, prompt_arguments(review, "src/a.py"))
        assert got.text == "Please review src/a.py"
        assert [r.uri for r in manager.resources()] == ["notes://today"]
        text = await attach_resources(manager, "see @t:notes://today", lambda _t: None)
        assert '<attached resource="t:notes://today">' in text and "buy milk" in text
        tools = by_name(manager)
        assert (await tools["mcp__t__ask"].run({}, call_ctx())).output == "decline: -"

        async def answer(server: str, message: str, schema: Any) -> dict[str, Any]:
            return {"action": "accept", "content": {"color": "green"}}

        manager.elicitor = answer
        assert (await tools["mcp__t__ask"].run({}, call_ctx())).output == "accept: green"
        assert "mcp__t__extra" not in by_name(manager)
        await tools["mcp__t__grow"].run({}, call_ctx())
        await asyncio.wait_for(changed.wait(), 30)
        assert (await by_name(manager)["mcp__t__extra"].run({}, call_ctx())).output == "extra ran"
    finally:
        await manager.aclose()
