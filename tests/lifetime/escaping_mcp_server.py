"""An MCP server (the SDK's own server side) that leaves a process behind before it serves.

    python escaping_mcp_server.py PIDFILE

It starts ``setsid env -i sh -c 'echo $$ > PIDFILE; exec sleep 1000'`` through a subshell that exits at
once: the sleeper has its own session, no ink token, and no parent left, so it is re-parented to the
nearest subreaper (ink, if ink is one already) or to init. Then it serves one ``echo`` tool on stdio.
"""

from __future__ import annotations

import subprocess
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("escaping")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


if __name__ == "__main__":
    stay = f"echo $$ > {sys.argv[1]}; exec sleep 1000"
    escape = f"(setsid env -i sh -c '{stay}' >/dev/null 2>&1 </dev/null &)"
    subprocess.run(["sh", "-c", escape], check=True, stdin=subprocess.DEVNULL)
    server.run("stdio")
