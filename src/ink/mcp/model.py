"""What ink knows of MCP servers and their tools, without the SDK: plain data for lists and adapters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

ServerState: TypeAlias = Literal["starting", "ready", "failed", "closed", "disabled", "needs_approval"]


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """One tool a server offers, as it described itself. ``read_only`` and ``destructive`` are the
    server's annotations (hints: a server the user did not trust is not started at all)."""

    server: str
    name: str
    description: str
    schema: Mapping[str, Any]
    read_only: bool = False
    destructive: bool = False
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One line of ``/mcp``, ``ink mcp list`` and the RPC ``mcp_list`` answer."""

    name: str
    state: ServerState
    transport: Literal["stdio", "http"]
    target: str
    origin: str
    error: str | None
    tools: tuple[str, ...]  # the names the model sees

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "transport": self.transport,
            "target": self.target,
            "origin": self.origin,
            "error": self.error,
            "tools": list(self.tools),
        }
