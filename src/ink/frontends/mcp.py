"""``ink mcp list`` and ``ink mcp approve NAME``: the configured MCP servers, their state and tools.

    $ ink mcp list
    github   ready           stdio  3 tools  github-mcp-server stdio
      mcp__github__search_issues   Search issues and pull requests
      ...
    lint     needs_approval  stdio  0 tools  lint-mcp   (declared by the project (...); approve it with: ...)

``list`` starts every enabled, approved server (in parallel, as ink would), lists what each offers and
ends them. ``approve NAME`` remembers the user's approval of a server a project declares (docs/mcp.md).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from ink.config import Invocation, Settings
from ink.mcp.model import ServerStatus

USAGE = "usage: ink mcp list | ink mcp approve NAME"
DESCRIPTION_WIDTH = 70


def main(settings: Settings, invocation: Invocation, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    words = (invocation.prompt or "list").split()
    if words == ["list"]:
        return asyncio.run(list_servers(settings, out))
    if len(words) == 2 and words[0] == "approve":
        return approve(settings, words[1], out)
    print(f"ink: {USAGE}", file=sys.stderr)
    return 2


async def list_servers(settings: Settings, out: TextIO) -> int:
    from ink.mcp.manager import McpManager
    from ink.mcp.trust import McpApprovals
    from ink.tools.processes import ProcessRegistry

    if not settings.mcp_servers:
        print(
            "no MCP servers configured; add [mcp.servers.NAME] to $INK_HOME/config.toml (docs/mcp.md)",
            file=out,
        )
        return 0
    manager = McpManager(
        settings.mcp_servers, settings.env, settings.cwd, ProcessRegistry(), McpApprovals(settings.ink_home)
    )
    try:
        await manager.start()
        descriptions = {tool.name: tool.spec.description for tool in manager.tools()}
        for status in manager.statuses():
            print(format_status(status), file=out)
            for name in status.tools:
                print(f"  {name}  {_first_line(descriptions.get(name, ''))}", file=out)
    finally:
        await manager.aclose(settings.kill_delay)
    return 0


def format_status(status: ServerStatus) -> str:
    tools = "1 tool" if len(status.tools) == 1 else f"{len(status.tools)} tools"
    line = f"{status.name}  {status.state}  {status.transport}  {tools}  {status.target}"
    return f"{line}  ({status.error})" if status.error else line


def approve(settings: Settings, name: str, out: TextIO) -> int:
    from ink.mcp.trust import McpApprovals, pin

    spec = next((s for s in settings.mcp_servers if s.name == name), None)
    if spec is None:
        known = ", ".join(s.name for s in settings.mcp_servers) or "none"
        print(f"ink: no MCP server named {name!r} is configured here (configured: {known})", file=sys.stderr)
        return 2
    if spec.origin != "project":
        print(f"{name} is in your own config ({spec.where}): it needs no approval", file=out)
        return 0
    McpApprovals(settings.ink_home).approve(spec)
    print(f"approved {name} ({spec.target()}), declared in {spec.where}; it starts from now on", file=out)
    for line in pin(spec).lines():  # R40: what the approval covers; a change to any of it asks again
        print(f"  {line}", file=out)
    return 0


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= DESCRIPTION_WIDTH else line[: DESCRIPTION_WIDTH - 1] + "…"
