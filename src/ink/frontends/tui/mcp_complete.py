"""Tab after ``@``: the resources of the MCP servers, as ``@SERVER:URI`` mentions (docs/mcp.md).

Listed beside the workspace's paths (``arguments.MentionCompleter``); a mention is read from its server
when the prompt enters the history (``ink.mcp.prompts``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

MAX_SHOWN = 50


class ResourceCompleter(Completer):
    def __init__(self, mentions: Callable[[], Iterable[tuple[str, str]]]) -> None:
        self._mentions = mentions  # (SERVER:URI, what it is)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if not word.startswith("@"):
            return
        typed = word[1:]
        shown = 0
        for mention, meta in self._mentions():
            if mention.startswith(typed) and shown < MAX_SHOWN:
                shown += 1
                yield Completion("@" + mention, start_position=-len(word), display_meta=meta)
