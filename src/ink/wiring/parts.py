"""The parts an app's settings call for (``default_parts``), in start order: adding a part is one line
here. What a part is and how its lifetime goes: ``ink.app.service``."""

from __future__ import annotations

from ink.app.service import AppPart
from ink.config import Settings


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
