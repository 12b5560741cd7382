"""MCP stdio servers whose table says ``sandbox = true`` run in the sandbox (R41): they can write the
workspace and the temporary folders only and reach no network; without a sandbox to run in they are not
started (R39), and taking a project's server out of it asks for approval again (R40). A real server
written with the SDK, the real sandbox, ink's own MCP client."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import ToolCallContext
from ink.ai.messages import ToolCall
from ink.config.errors import ConfigError
from ink.config.mcp import McpServerSpec, check_mcp
from ink.mcp.manager import McpManager
from ink.mcp.trust import pin
from ink.sandbox import Sandbox, no_sandbox, open_sandbox
from ink.tools.processes import ProcessRegistry
from tests.sandbox.conftest import outside, require_sandbox
from tests.sandbox.test_escapes import connections, listener

__all__ = ["listener", "outside"]
SERVER = str(Path(__file__).with_name("mcp_server.py"))


def spec(name: str, sandbox: bool) -> McpServerSpec:
    return McpServerSpec(name, command=sys.executable, args=(SERVER,), sandbox=sandbox, startup_timeout=120)


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    require_sandbox()
    opened = open_sandbox("workspace-write", tmp_path)
    yield opened
    opened.close()


async def call(manager: McpManager, tool: str, **args: object) -> str:
    [found] = [t for t in manager.tools() if t.name == tool]
    out = await found.run(args, ToolCallContext(ToolCall("c1", tool, args), AbortSignal()))
    return out.output


async def test_R41_a_sandboxed_server_writes_only_the_workspace_and_reaches_no_network(
    tmp_path: Path, sandbox: Sandbox, outside: Path, listener: socket.socket
) -> None:
    server = listener
    port = server.getsockname()[1]
    manager = McpManager(
        [spec("boxed", True), spec("free", False)], {}, tmp_path, ProcessRegistry(), None, sandbox
    )
    await manager.start()
    try:
        assert [s.error for s in manager.statuses()] == [None, None]
        assert await call(manager, "mcp__boxed__write", path=str(tmp_path / "in.txt")) == "wrote"
        assert (await call(manager, "mcp__boxed__write", path=str(outside / "boxed"))).startswith("refused")
        assert not (outside / "boxed").exists()
        assert (await call(manager, "mcp__boxed__connect", port=port)).startswith("refused")
        assert connections(server) == 0
        assert await call(manager, "mcp__free__write", path=str(outside / "free")) == "wrote"  # not sandboxed
        assert await call(manager, "mcp__free__connect", port=port) == "connected"
    finally:
        await manager.aclose()
        server.close()


async def test_R39_a_server_asking_for_the_sandbox_is_not_started_without_one(tmp_path: Path) -> None:
    manager = McpManager([spec("boxed", True)], {}, tmp_path, ProcessRegistry(), None, no_sandbox(tmp_path))
    await manager.start()
    try:
        [status] = manager.statuses()
        assert status.state == "failed"
        assert "sandbox = true" in (status.error or "") and "without a sandbox" in (status.error or "")
        assert manager.tools() == []
    finally:
        await manager.aclose()


def test_sandbox_is_a_key_of_command_servers_and_part_of_what_an_approval_pins(tmp_path: Path) -> None:
    def read(table: str) -> list[McpServerSpec]:
        import tomllib

        return check_mcp(tomllib.loads(table)["mcp"], lambda _table, _key: "config.toml:1")

    [boxed] = read('[mcp.servers.s]\ncommand = "srv"\nsandbox = true\n')
    assert boxed.sandbox
    with pytest.raises(ConfigError, match="sandbox are for command servers"):
        read('[mcp.servers.s]\nurl = "http://127.0.0.1:1/mcp"\nsandbox = true\n')
    with pytest.raises(ConfigError, match="true or false"):
        read('[mcp.servers.s]\ncommand = "srv"\nsandbox = "yes"\n')
    where = str(tmp_path / ".ink" / "config.toml") + ":1"
    inside = McpServerSpec("s", command="srv", sandbox=True, where=where)
    free = McpServerSpec("s", command="srv", where=where)
    assert pin(inside).digest() != pin(free).digest()  # taken out of the sandbox: asked again
    assert "runs: srv (in the sandbox)" in pin(inside).lines()
