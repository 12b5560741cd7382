"""A real MCP server (the SDK's ``MCPServer``) for the sandbox tests: its tools try what the sandbox
refuses and say what happened.

    python mcp_server.py            serve over stdin/stdout
"""

from __future__ import annotations

import os
import socket

from mcp.server.mcpserver import MCPServer

server = MCPServer("ink-sandbox-test")


@server.tool()
def write(path: str) -> str:
    """Write a line to ``path``; says whether it could."""
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write("x\n")
    except OSError as exc:
        return f"refused: {exc.strerror}"
    return "wrote"


@server.tool()
def connect(port: int) -> str:
    """Connect to 127.0.0.1:``port``; says whether it could."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            return "connected"
    except OSError as exc:
        return f"refused: {exc.strerror}"


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


if __name__ == "__main__":
    server.run("stdio")
