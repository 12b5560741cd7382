"""What the palette lists, from the app: its commands (built-in, custom, MCP prompts), the values of a
command's argument (``/model``: the models, ``/resume``: the sessions of this folder) and the MCP
servers' resources."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ink.app import App
from ink.frontends.tui.commands import palette_commands
from ink.frontends.tui.served_models import ServedModels
from ink.wiring.mcp_part import mcp_of

Choices = Callable[[], Sequence[tuple[str, str]]]


class AppSources:
    """``served``: the models a server of the user's lists, which ``/model`` offers instead of the
    catalogue's when it applies."""

    def __init__(self, core: App, served: ServedModels | None = None) -> None:
        self._core = core
        self._arguments: dict[str, Choices] = {
            "model": lambda: (
                served.choices() if served is not None and served.applies else model_choices(core)
            ),
            "resume": lambda: session_choices(core),
        }

    def commands(self) -> Sequence[tuple[str, str, str]]:
        return palette_commands(self._core)

    def arguments(self) -> Mapping[str, Choices]:
        return self._arguments

    def resources(self) -> Sequence[tuple[str, str]]:
        part = mcp_of(self._core)
        return part.resource_mentions() if part is not None else []

    def cwd(self) -> Path:
        return self._core.settings.cwd


def model_choices(core: App) -> list[tuple[str, str]]:
    info = core.settings.provider_info
    return [(m, "current" if m == core.settings.model else info.name) for m in core.model_choices()]


def session_choices(core: App) -> list[tuple[str, str]]:
    """The sessions of this folder, newest first: their id's first 8 characters, age and first prompt."""
    from ink.frontends.tui.session_picker import one_line_prompt
    from ink.rewind import ago

    if core.sessions is None:
        return []
    now = time.time()
    found = core.sessions.sessions(core.settings.cwd)
    return [
        (info.id[:8], f"{ago(now - info.updated)} · {one_line_prompt(info)}")
        for info in found
        if info.id != core.session_id
    ]
