"""Ctrl+R on an idle prompt: search the prompt history (this project's, across sessions), as bash's
reverse-i-search and Claude Code's do. While a run goes on, Ctrl+R stays "interrupt and redirect" (R24).

What you type while it is open goes into the search, not the input: the prompts holding it (case
ignored) are listed newest first. Ctrl+R or Up goes to an older match, Down to a newer one; Enter or Tab
puts the chosen prompt into the input (to send or change: nothing is sent by the search itself); Esc,
Ctrl+C or Ctrl+G gives back the input as it was. The search starts from what the input held.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from ink.frontends.tui.blocks import sanitize
from ink.frontends.tui.editor import replace_text
from ink.frontends.tui.wrapping import fit

ROWS = 6  # matches shown at once
Fragments = list[tuple[str, str]]


class HistorySearch:
    def __init__(self, buffer: Buffer, changed: Callable[[], None]) -> None:
        self._buffer, self._changed = buffer, changed
        self.is_open = False
        self.query = ""
        self.matches: list[str] = []
        self.selected = 0
        self._original = ""

    def open(self) -> None:
        self._original = self._buffer.text
        self.query, self.is_open = self._original.strip(), True
        self._find()

    def type(self, text: str) -> None:
        self.query += text.replace("\n", " ")
        self._find()

    def backspace(self) -> None:
        self.query = self.query[:-1]
        self._find()

    def move(self, delta: int) -> None:
        """``delta`` 1: an older match; -1: a newer one (kept within the list)."""
        if self.matches:
            self.selected = max(0, min(len(self.matches) - 1, self.selected + delta))
            self._changed()

    def accept(self) -> None:
        """The chosen prompt into the input (the input as it was when nothing matches)."""
        chosen = self.matches[self.selected] if self.matches else self._original
        self._close()
        replace_text(self._buffer, chosen)

    def cancel(self) -> None:
        self._close()
        replace_text(self._buffer, self._original)

    def _close(self) -> None:
        self.is_open = False
        self._changed()

    def _find(self) -> None:
        """The prompts holding the query, newest first, each once."""
        wanted = self.query.lower()
        seen: set[str] = set()
        found = []
        for entry in reversed(self._buffer.history.get_strings()):
            if wanted in entry.lower() and entry not in seen:
                seen.add(entry)
                found.append(entry)
        self.matches, self.selected = found, 0
        self._changed()

    def hint(self) -> str:
        return "type to search · ctrl+r/↑ older · ↓ newer · enter/tab take it · esc back"

    def fragments(self, width: int) -> Fragments:
        count = f"{self.selected + 1}/{len(self.matches)}" if self.matches else "no match"
        out: Fragments = [("class:question.title", "search prompts: "), ("bold", sanitize(self.query))]
        out.append(("class:hint", f"▏ {count}"))
        start = max(0, min(self.selected - ROWS // 2, len(self.matches) - ROWS))
        for index in range(start, min(len(self.matches), start + ROWS)):
            chosen = index == self.selected
            out.append(("", "\n"))
            out.append(("class:prompt" if chosen else "", "› " if chosen else "  "))
            out.append(("bold" if chosen else "", _one_line(self.matches[index], width - 3)))
        return out

    def rows(self) -> int:
        return 1 + min(len(self.matches), ROWS) if self.is_open else 0


def _one_line(text: str, room: int) -> str:
    return fit(sanitize(" ⏎ ".join(part.strip() for part in text.strip().split("\n"))), room)


def key_bindings(search: HistorySearch, other: Filter) -> KeyBindings:
    """Active while the search is open (and ``other``); they come after the app's own, so they win.
    Every other key is swallowed: the input is not typed into behind the search."""
    kb = KeyBindings()
    shown = Condition(lambda: search.is_open) & other

    @kb.add(Keys.Any, filter=shown)
    def _typed(event: KeyPressEvent) -> None:
        if event.data and event.data.isprintable():
            search.type(event.data)

    @kb.add(Keys.BracketedPaste, filter=shown)
    def _pasted(event: KeyPressEvent) -> None:
        search.type(event.data)

    kb.add("backspace", filter=shown)(lambda _e: search.backspace())
    for key in ("c-r", "up"):
        kb.add(key, filter=shown)(lambda _e: search.move(1))
    kb.add("down", filter=shown)(lambda _e: search.move(-1))
    for key in ("enter", "tab"):
        kb.add(key, filter=shown)(lambda _e: search.accept())
    for key in ("escape", "c-c", "c-g"):
        kb.add(key, filter=shown)(lambda _e: search.cancel())
    return kb
