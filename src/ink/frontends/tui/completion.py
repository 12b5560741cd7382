"""Tab completes a slash command's name, the built-in ones and the custom ones (docs/commands.md).

No menu: Tab puts the first match in the editor, Tab again the next one (prompt_toolkit's inline
completion), so the layout needs no float.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

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


def complete_slash(buffer: Buffer) -> None:
    """The Tab key: the next completion when completing already, else start with the first one."""
    if buffer.complete_state is not None:
        buffer.complete_next()
    else:
        buffer.start_completion(select_first=True)
