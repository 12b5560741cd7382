"""The editor's MCP servers (``mcpServers``) are started and their tools offered (docs/mcp.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.acp.conftest import StartAcp, text_prompt
from tests.fakeserver import FakeModelServer, call, say
from tests.mcp_tools.servers import SERVER


def test_acp_starts_the_editors_servers_and_advertises_http(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(call("mcp__ed__echo", {"text": "from the editor"}), say("done"))
    ink = start_acp("--permission-mode", "yolo")
    init = ink.ok("initialize", protocolVersion=1, clientCapabilities={})
    assert init["agentCapabilities"]["mcpCapabilities"] == {"http": True, "sse": False}
    editor = {"name": "ed", "command": sys.executable, "args": [SERVER, "stdio"], "env": []}
    session = ink.ok("session/new", cwd=str(project), mcpServers=[editor])["sessionId"]
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("echo"))
    assert ink.wait_response(prompt, timeout=180)["result"] == {"stopReason": "end_turn"}
    review = {"name": "mcp__ed__review", "description": "Review a file.", "input": {"hint": "arguments"}}

    def offers_review(m: dict[str, Any]) -> bool:
        update = m.get("params", {}).get("update", {}) if m.get("method") == "session/update" else {}
        return review in update.get("availableCommands", [])

    ink.wait_line(offers_review, timeout=60)  # the editor's server's prompt, once the server is ready
    assert fake_server.requests[1].tool_results()[-1][1] == "echo: from the editor"
    sse = {"type": "sse", "name": "s", "url": "http://127.0.0.1:1/sse", "headers": []}
    refused = ink.error("session/new", cwd=str(project), mcpServers=[sse])
    assert refused["code"] == -32602 and "not 'sse'" in refused["message"]
