"""App parts: what has an asynchronous start and end and lives as long as the app (the MCP servers, the
local model server). ``default_parts`` lists them; adding one is one line there.

``open_app`` drives them: every part's ``prepare`` (before anything is built: a part may give the
settings something the app needs, such as the model server's address), then, once the app is built,
every part's ``start``, in the order of the list; ``App.aclose`` closes them in reverse. A part whose
``prepare`` or ``start`` raises makes ``open_app`` close the others and raise ``AppStartError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ink.config import Settings

if TYPE_CHECKING:
    from ink.wiring.app import App


class AppStartError(Exception):
    """A part of the app could not start; the message says which and why (shown as one line, exit 2)."""


class AppPart(Protocol):
    """A part with a start and an end in the app's lifetime. Subclass it to inherit the defaults."""

    name: str  # for messages: "the MCP servers"

    async def prepare(self, settings: Settings) -> Settings:
        """Before anything is built: the settings the app is to be built with (default: unchanged)."""
        return settings

    async def start(self, app: App) -> None:
        """Once the app is built, before the frontend uses it. May hand work to ``app.tasks`` or occupy
        the controller with a command (input that arrives meanwhile is queued, R8)."""
        return None

    async def aclose(self) -> None:
        """End what ``prepare`` and ``start`` began, however far they got. Called once."""
        ...


def default_parts(settings: Settings) -> list[AppPart]:
    """The parts ``settings`` call for, in start order."""
    from ink.local import serves_locally

    parts: list[AppPart] = []
    if serves_locally(settings):
        from ink.wiring.local_part import LocalModelPart

        parts.append(LocalModelPart())
    if settings.mcp_servers:
        from ink.wiring.mcp_part import McpPart

        parts.append(McpPart())
    return parts
