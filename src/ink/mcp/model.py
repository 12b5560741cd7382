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


class PromptArgument(msgspec.Struct, frozen=True):
    name: str
    description: str = ""
    required: bool = False


class RemotePrompt(msgspec.Struct, frozen=True):
    """A prompt a server offers (``prompts/list``): a custom command ``/mcp__SERVER__PROMPT ARGS``."""

    server: str
    name: str
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()


class RemoteResource(msgspec.Struct, frozen=True):
    """A resource a server offers (``resources/list``): mentioned as ``@SERVER:URI``."""

    server: str
    uri: str
    name: str = ""
    description: str = ""
    mime_type: str | None = None


class ServerStatus(msgspec.Struct, frozen=True):
    """One line of ``/mcp``, ``ink mcp list`` and the RPC ``mcp_list`` answer."""

    name: str
    state: ServerState
    transport: Literal["stdio", "http"]
    target: str
    origin: str
    error: str | None
    tools: tuple[str, ...]  # the names the model sees
    notes: tuple[str, ...] = ()  # what was left out of its lists, and why
    read_only: tuple[str, ...] = ()  # its tools that say they only read (readOnlyHint): no question in ask
    prompts: tuple[str, ...] = ()  # the commands its prompts became: mcp__SERVER__PROMPT
    resources: int = 0
    pinned: tuple[str, ...] = ()  # awaiting approval: what approving it would pin (R40)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "transport": self.transport,
            "target": self.target,
            "origin": self.origin,
            "error": self.error,
            "tools": list(self.tools),
            "readOnly": list(self.read_only),
            "prompts": list(self.prompts),
            "resources": self.resources,
            "notes": list(self.notes),
            "pinned": list(self.pinned),
        }
