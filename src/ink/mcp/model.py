"""What ink knows of MCP servers and their tools, without the SDK: plain data for lists and adapters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import msgspec

from ink.agent.tool import ToolKind

ServerState: TypeAlias = Literal["starting", "ready", "failed", "closed", "disabled", "needs_approval"]


class RemoteTool(msgspec.Struct, frozen=True):
    """One tool a server offers, as it described itself. ``read_only``, ``destructive`` and
    ``open_world`` are the server's annotations (``readOnlyHint``, ``destructiveHint``,
    ``openWorldHint``; None when it did not say): hints, taken at their word because a server the user
    did not configure or approve is not started at all."""

    server: str
    name: str
    description: str
    schema: Mapping[str, Any]
    read_only: bool = False
    destructive: bool | None = None
    title: str | None = None
    open_world: bool | None = None

    @property
    def kind(self) -> ToolKind:
        """What the annotations make of the tool (docs/mcp.md): a read-only tool that reaches the outside
        world fetches, any other read-only tool reads; a tool that changes only local state and destroys
        nothing edits; anything else (destructive, reaching out, or unannotated) is ``other``."""
        if self.read_only:
            return "fetch" if self.open_world else "read"
        if self.destructive is False and self.open_world is False:
            return "edit"
        return "other"


class ServerStatus(msgspec.Struct, frozen=True):
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
