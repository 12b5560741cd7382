"""Many MCP tools without sending every schema on every request: a search that loads them on demand.

A few servers can offer hundreds of tools, and each schema costs context on every model call. Above
``DEFER_ABOVE`` MCP tools, the model is offered only ink's own tools, the MCP tools it has already loaded
and ``mcp_tool_search``: a search over the names and descriptions of every MCP tool, which returns the
best matches with their full JSON schemas and loads them, so they are offered from the next model call
of the same run on. Every MCP tool stays known to the scheduler, so a call runs (validated, judged by
the permission policy under its own name) even before it was loaded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ink.agent.tool import CallDescription, Tool, ToolCallContext, ToolKind, ToolOutput
from ink.ai.provider import ToolSpec
from ink.mcp.tool import McpTool

DEFER_ABOVE = 40
SEARCH_NAME = "mcp_tool_search"
DEFAULT_LIMIT = 5
_WORD = re.compile(r"[a-z0-9]+")


class McpCatalogue:
    """Every MCP tool of the session (``McpTool.offered``: the server lists it now) and which of them a
    model call is given. Called for each model call, so a tool a server no longer lists is not offered
    from the next request on."""

    def __init__(self, tools: Sequence[McpTool], defer_above: int = DEFER_ABOVE) -> None:
        self.every = list(tools)
        self.defer_above = defer_above
        self.loaded: set[str] = set()

    @property
    def tools(self) -> list[McpTool]:
        """The tools offered now."""
        return [tool for tool in self.every if tool.offered]

    @property
    def deferred(self) -> bool:
        return len(self.tools) > self.defer_above

    def add(self, tools: Sequence[McpTool]) -> None:
        self.every += [tool for tool in tools if all(tool is not known for known in self.every)]

    def offer(self, tools: Sequence[Tool]) -> list[ToolSpec]:
        """The specs a model call is given (``LoopSetup.offer``): all but the MCP tools no longer offered
        and, past ``defer_above`` of them, those not loaded yet through the search."""
        deferred = self.deferred
        hidden = {t.name for t in self.every if not t.offered or (deferred and t.name not in self.loaded)}
        if not deferred:
            hidden.add(SEARCH_NAME)  # few tools: every schema is sent, nothing to search
        return [t.spec for t in tools if t.spec.name not in hidden]

    def search(self, query: str, limit: int) -> list[McpTool]:
        words = set(_WORD.findall(query.lower()))
        scored = []
        for index, tool in enumerate(self.tools):
            name_words = set(_WORD.findall(tool.name.lower()))
            text_words = set(_WORD.findall(tool.spec.description.lower()))
            score = 3 * len(words & name_words) + len(words & text_words)
            if score or query.strip().lower() in tool.name.lower():
                scored.append((-score, index, tool))
        return [tool for _score, _index, tool in sorted(scored, key=lambda x: x[:2])[:limit]]


class ToolSearch:
    """``mcp_tool_search``: find MCP tools by what they do; the ones found are offered from now on."""

    def __init__(self, catalogue: McpCatalogue) -> None:
        self._catalogue = catalogue

    @property
    def spec(self) -> ToolSpec:
        servers: dict[str, int] = {}
        for tool in self._catalogue.tools:
            servers[tool.remote.server] = servers.get(tool.remote.server, 0) + 1
        offered = ", ".join(f"{name} ({count} tools)" for name, count in servers.items())
        description = (
            f"Find tools of the connected MCP servers: {offered}. Their schemas are not listed up front; "
            "search by what you need (words of the task), then call the tools found by their names."
        )
        schema = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what the tool should do, in a few words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "at most this many"},
            },
            "required": ["query"],
            "additionalProperties": False,
        }
        return ToolSpec(SEARCH_NAME, description, schema)

    @property
    def kind(self) -> ToolKind:
        return "search"

    @property
    def concurrency_safe(self) -> bool:
        return True

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return CallDescription(f"search MCP tools: {args.get('query', '')}")

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        query = args.get("query")
        limit = args.get("limit", DEFAULT_LIMIT)
        if not isinstance(query, str) or not query.strip():
            return ToolOutput("query must be a non-empty string", is_error=True)
        limit = limit if isinstance(limit, int) and limit > 0 else DEFAULT_LIMIT
        found = self._catalogue.search(query, min(limit, 20))
        if not found:
            return ToolOutput(f"No MCP tool matches {query!r}; try other words.")
        self._catalogue.loaded.update(tool.name for tool in found)
        parts = [f"{len(found)} tools found; they can be called now:"]
        for tool in found:
            spec = tool.spec
            parts.append(f"\n## {spec.name}\n{spec.description}\nparameters: {json.dumps(spec.parameters)}")
        return ToolOutput("\n".join(parts))
