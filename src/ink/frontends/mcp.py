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
from collections.abc import Mapping
from typing import TextIO

from ink.ai.printable import printable
from ink.config import Invocation, Settings
from ink.mcp.model import ServerStatus

USAGE = "usage: ink mcp list | ink mcp approve NAME | ink mcp --help"
DESCRIPTION_WIDTH = 70
HELP = """usage: ink mcp list | ink mcp approve NAME

The MCP servers ink starts: those of [mcp.servers.NAME] in $INK_HOME/config.toml (yours), and those a
project declares in .ink/config.toml (started only once you approve them).

  ink mcp list           start every enabled, approved server as ink would, show each one's state
                         (ready, failed, disabled, needs_approval), its tools (marked "read-only" when
                         the server says they only read: they run without a question in ask mode),
                         prompts (/mcp__SERVER__PROMPT), resources (@SERVER:URI) and what was left out
                         of its lists and why; then end them
  ink mcp approve NAME   approve the project's server NAME: what it runs is shown and pinned, and a
                         change to it asks again

A server table:

  [mcp.servers.github]                 # stdio: a program ink starts
  command = "github-mcp-server"
  args = ["stdio"]
  env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }
  startup_timeout = 15                 # seconds to start and list its tools
  call_timeout = 300                   # seconds a call may go without an answer or progress
  sandbox = true                       # run it in ink's sandbox, as commands are (default false)

  [mcp.servers.docs]                   # Streamable HTTP
  url = "http://127.0.0.1:8931/mcp"
  headers = { Authorization = "Bearer ${DOCS_TOKEN}" }

In the terminal UI: /mcp (and /mcp approve NAME). Over RPC: get_mcp. Details: docs/mcp.md."""


def main(settings: Settings, invocation: Invocation, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    words = (invocation.prompt or "list").split()
    if words in (["--help"], ["-h"], ["help"]):
        print(HELP, file=out)
        return 0
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
        settings.mcp_servers,
        settings.env,
        settings.cwd,
        ProcessRegistry(),
        McpApprovals(settings.ink_home, settings.cwd),
    )
    try:
        await manager.start()
        descriptions = {tool.name: tool.spec.description for tool in manager.tools()}
        for status in manager.statuses():
            for line in status_lines(status, descriptions):
                print(line, file=out)
    finally:
        await manager.aclose(settings.kill_delay)
    return 0


def status_lines(status: ServerStatus, descriptions: Mapping[str, str]) -> list[str]:
    """A server's line, then a line per tool (read-only ones marked: the server's own claim), its
    prompts and resources, and a line per thing left out of its lists."""
    lines = [format_status(status)]
    lines += [f"  {printable(line)}" for line in status.pinned]  # what approving it would cover (R40)
    for name in status.tools:
        claim = "  (read-only, the server says)"
        mark = claim if name in status.read_only else ""
        lines.append(f"  {name}  {printable(_first_line(descriptions.get(name, '')))}{mark}")
    if status.prompts:
        lines.append("  prompts: " + " ".join(f"/{name}" for name in status.prompts))
    if status.resources:
        lines.append(f"  resources: {status.resources} (mention one as @{status.name}:URI)")
    lines += [f"  note: {printable(note)}" for note in status.notes]
    return lines


def format_status(status: ServerStatus) -> str:
    tools = "1 tool" if len(status.tools) == 1 else f"{len(status.tools)} tools"
    line = f"{status.name}  {status.state}  {status.transport}  {tools}  {status.target}"
    return f"{line}  ({printable(status.error)})" if status.error else line


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
    McpApprovals(settings.ink_home, settings.cwd).approve(spec)
    print(f"approved {name} ({spec.target()}), declared in {spec.where}; it starts from now on", file=out)
    for line in pin(
        spec, settings.cwd
    ).lines():  # R40: what the approval covers; a change to any of it asks again
        print(f"  {line}", file=out)
    return 0


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= DESCRIPTION_WIDTH else line[: DESCRIPTION_WIDTH - 1] + "…"
