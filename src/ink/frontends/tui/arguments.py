"""Tab after a slash command's name completes its argument; Tab after ``@`` completes a path.

``/model <Tab>`` offers the provider's known models, ``/resume <Tab>`` the sessions of this directory,
``@src/<Tab>`` the entries of ``src`` (.gitignore honoured). The command names themselves are completed
by ``completion.SlashCompleter``; the app merges the three.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from ink.frontends.tui.mentions import path_completions

Choices = Callable[[], Iterable[tuple[str, str]]]  # (value, what it is)


class ArgumentCompleter(Completer):
    """``/name partial`` -> the values of ``sources[name]`` starting with ``partial``."""

    def __init__(self, sources: Mapping[str, Choices]) -> None:
        self._sources = sources

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        typed = document.text_before_cursor
        if not typed.startswith("/") or "\n" in typed:
            return
        name, space, partial = typed[1:].partition(" ")
        source = self._sources.get(name.lower())
        if not space or source is None or " " in partial:
            return
        for value, meta in source():
            if value.startswith(partial):
                yield Completion(value, start_position=-len(partial), display_meta=meta)


class MentionCompleter(Completer):
    """``@partial`` (the word under the cursor) -> paths of the workspace."""

    def __init__(self, cwd: Callable[[], Path]) -> None:
        self._cwd = cwd

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if not word.startswith("@"):
            return
        for path in path_completions(word[1:], self._cwd()):
            yield Completion("@" + path, start_position=-len(word))
