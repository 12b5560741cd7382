"""The editor's MCP servers (``mcpServers`` of ``session/new`` and ``session/load``) as ink's own.

ACP sends stdio servers as ``{name, command, args, env: [{name, value}]}`` and HTTP ones as
``{type: "http", name, url, headers: [{name, value}]}``. They are the user's servers (configured in the
editor), so they start without the approval a project's need; a name the user's config also has is the
editor's. SSE servers are refused: ink advertises ``mcpCapabilities: {http: true, sse: false}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ink.config.mcp import McpServerSpec, server_name_problem

if TYPE_CHECKING:
    from ink.app.service import App


class BadServer(ValueError):
    """An entry of ``mcpServers`` ink cannot use; the text says which and why."""


def servers_from_acp(raw: Any) -> list[McpServerSpec]:
    if not isinstance(raw, list):
        raise BadServer("mcpServers must be a list")
    return [_server(entry, index) for index, entry in enumerate(raw)]


def _server(entry: Any, index: int) -> McpServerSpec:
    where = f"mcpServers[{index}]"
    if not isinstance(entry, Mapping):
        raise BadServer(f"{where} must be an object")
    name = entry.get("name")
    problem = server_name_problem(name)
    if problem is not None or not isinstance(name, str):
        raise BadServer(f"{where}.name: {problem}")
    kind = entry.get("type", "stdio")
    if kind == "http":
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise BadServer(f"{where}.url must be an http(s) URL")
        headers = _pairs(entry.get("headers", []), f"{where}.headers")
        return McpServerSpec(name, url=url, headers=headers, where=where, origin="client")
    if kind != "stdio":
        raise BadServer(f"{where}: ink connects to stdio and http MCP servers, not {kind!r}")
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise BadServer(f"{where}.command must be a non-empty string")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise BadServer(f"{where}.args must be a list of strings")
    env = _pairs(entry.get("env", []), f"{where}.env")
    return McpServerSpec(name, command=command, args=tuple(args), env=env, where=where, origin="client")


def _pairs(raw: Any, where: str) -> dict[str, str]:
    """ACP's ``[{name, value}]``, taken literally (``origin="client"``: no ``${VAR}`` expansion)."""
    if not isinstance(raw, list):
        raise BadServer(f"{where} must be a list of {{name, value}}")
    pairs: dict[str, str] = {}
    for item in raw:
        if not isinstance(item, Mapping) or not all(isinstance(item.get(k), str) for k in ("name", "value")):
            raise BadServer(f"{where} must be a list of {{name, value}} strings")
        pairs[item["name"]] = item["value"]
    return pairs


def merged(own: Sequence[McpServerSpec], editor: Sequence[McpServerSpec]) -> tuple[McpServerSpec, ...]:
    names = {spec.name for spec in editor}
    return tuple([spec for spec in own if spec.name not in names] + list(editor))


def offer_mcp_prompts(app: App, offer: Callable[[list[tuple[str, str]]], None]) -> None:
    """Once the app's MCP servers are ready, and whenever a server's lists change, ``offer`` gets their
    prompts (``/mcp__SERVER__PROMPT``, description) for the editor's command list."""
    from ink.wiring.mcp_part import mcp_of

    part = mcp_of(app)
    if part is not None:
        part.listeners.append(lambda: offer(part.prompt_commands()))
