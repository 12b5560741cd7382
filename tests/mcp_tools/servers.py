"""Starting the test MCP servers (server.py, written with the SDK's server side) the way ink would."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ink.config.mcp import McpServerSpec

SERVER = str(Path(__file__).with_name("server.py"))
SLOW_START = 90.0  # a Python server importing the SDK on a loaded 2-core machine: generous, never waited out


def stdio_spec(name: str, journal: Path, mode: str = "stdio", timeout: float = SLOW_START) -> McpServerSpec:
    env = {"MCP_JOURNAL": str(journal)}
    return McpServerSpec(name, command=sys.executable, args=(SERVER, mode), env=env, startup_timeout=timeout)


def http_spec(name: str, url: str, header: str = "Bearer ${TEST_MCP_TOKEN}") -> McpServerSpec:
    return McpServerSpec(name, url=url, headers={"Authorization": header}, startup_timeout=SLOW_START)


@contextmanager
def http_server(token: str, journal: Path) -> Iterator[str]:
    """A Streamable HTTP server on 127.0.0.1 answering only ``Bearer token``; yields its URL."""
    env = {"MCP_JOURNAL": str(journal), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", token], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().split()
        assert first[:1] == ["PORT"], first
        yield f"http://127.0.0.1:{first[1]}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def journal_lines(journal: Path) -> list[str]:
    return journal.read_text().splitlines() if journal.exists() else []
