"""Tab completes a slash command's name, the built-in ones and the custom ones (docs/commands.md).

No menu: Tab puts the first match in the editor, Tab again the next one (prompt_toolkit's inline
completion), so the layout needs no float.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, merge_completers
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from ink.app import App

Names = Callable[[], Iterable[tuple[str, str]]]  # (name, what it does)


class SlashCompleter(Completer):
    def __init__(self, names: Names) -> None:
        self._names = names

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        typed = document.text_before_cursor
        if not typed.startswith("/") or typed.startswith("//") or any(c.isspace() for c in typed):
            return
        for name, meta in self._names():
            if name.startswith(typed[1:]):
                yield Completion(f"/{name}", start_position=-len(typed), display_meta=meta)


def build_completer(core: App) -> Completer:
    """Command names, their arguments (/model, /resume) and ``@`` paths, in one completer."""
    from ink.frontends.tui.arguments import ArgumentCompleter, MentionCompleter
    from ink.frontends.tui.commands import command_names
    from ink.frontends.tui.mcp_complete import ResourceCompleter
    from ink.wiring.mcp_part import mcp_of

    sources = {"model": lambda: model_choices(core), "resume": lambda: session_choices(core)}
    return merge_completers(
        [
            SlashCompleter(lambda: command_names(core)),
            ArgumentCompleter(sources),
            MentionCompleter(lambda: core.settings.cwd),
            ResourceCompleter(lambda: part.resource_mentions() if (part := mcp_of(core)) else []),
        ]
    )


def model_choices(core: App) -> list[tuple[str, str]]:
    info = core.settings.provider_info
    return [(m, "current" if m == core.settings.model else info.name) for m in info.models]


def session_choices(core: App) -> list[tuple[str, str]]:
    if core.sessions is None:
        return []
    found = core.sessions.sessions(core.settings.cwd)
    return [(info.id[:8], f"{info.message_count} messages") for info in found]
