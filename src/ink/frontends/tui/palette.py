"""The palette: a menu under the input that opens as you type ``/`` (commands), a command's argument
(``/model ``, ``/resume ``) or ``@`` (files of the workspace, MCP resources), filtered fuzzily as you
type (``fuzzy``), each entry with what it is.

Keys while it is open (``key_bindings``): Up/Down choose, Tab puts the chosen entry in the input, Enter
runs the chosen command (after ``/``) or, after an argument or ``@``, picks the entry only when you chose
one with the arrows (else the input is sent as typed: Enter never turns what you typed into something
else behind your back); Esc closes the menu and interrupts nothing (Esc with no menu open still
interrupts a run, R17). Typing on reopens it; Tab reopens a menu closed with Esc.

Commands and arguments are ranked as you type; files are ranked in a thread (a 20,000-file workspace
takes tens of milliseconds), the menu showing the one-level listing of ``mentions.path_completions`` at
once and the fuzzy matches of the whole workspace (``file_index``) when they come.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.utils import get_cwidth

from ink.frontends.tui.blocks import sanitize
from ink.frontends.tui.file_index import FileIndex
from ink.frontends.tui.fuzzy import rank
from ink.frontends.tui.mentions import path_completions
from ink.frontends.tui.wrapping import fit

log = logging.getLogger(__name__)

ROWS = 8  # entries shown at once
LIMIT = 50  # entries kept of a ranking
Fragments = list[tuple[str, str]]
Kind = Literal["command", "argument", "mention"]
Choices = Callable[[], Sequence[tuple[str, str]]]  # (value, what it is)
Spawn = Callable[[Coroutine[Any, Any, None], str], object]


class Item(msgspec.Struct, frozen=True):
    text: str  # what replaces the typed word: "/model", "gpt-4.1", "@src/app.py"
    label: str  # the first column: "/model [NAME]"
    meta: str = ""  # what it is or does
    then: str = " "  # typed after it once picked ("": a folder, whose entries the menu lists next)


class Context(msgspec.Struct, frozen=True):
    kind: Kind
    start: int  # where the word the menu completes starts, in the text before the cursor
    query: str


class Sources(Protocol):
    """Where the entries come from (``commands.palette_sources``)."""

    def commands(self) -> Sequence[tuple[str, str, str]]: ...  # (name, usage, what it does)

    def arguments(self) -> Mapping[str, Choices]: ...  # command name -> its argument's values

    def resources(self) -> Sequence[tuple[str, str]]: ...  # (SERVER:URI, what it is)

    def cwd(self) -> Path: ...


def context_of(before: str, arguments: Mapping[str, object]) -> Context | None:
    """What the menu completes for the text before the cursor, or None (no menu)."""
    if before.startswith("/") and not before.startswith("//") and "\n" not in before:
        name, space, rest = before[1:].partition(" ")
        if not space and not any(c.isspace() for c in name):
            return Context("command", 0, name)
        if space and name.lower() in arguments and " " not in rest:
            return Context("argument", len(name) + 2, rest)
    word = before.rsplit(None, 1)[-1] if before and not before[-1].isspace() else ""
    if word.startswith("@") and "\\" not in word:
        return Context("mention", len(before) - len(word), word[1:])
    return None


class Palette:
    def __init__(
        self, sources: Sources, files: FileIndex, changed: Callable[[], None], spawn: Spawn | None = None
    ) -> None:
        self._sources, self._files, self._changed, self._spawn = sources, files, changed, spawn
        self.context: Context | None = None
        self.items: list[Item] = []
        self.selected = 0
        self.navigated = False  # an entry was chosen with the arrows
        self._dismissed: str | None = None  # the text Esc closed the menu on
        self._before = ""
        self._generation = 0

    @property
    def is_open(self) -> bool:
        return bool(self.items) and self._dismissed != self._before

    # -- following the input ---------------------------------------------------------------------

    def update(self, before: str) -> None:
        """The text before the cursor changed: find the entries for it."""
        self._generation += 1
        self._before = before
        self.context = context_of(before, self._sources.arguments())
        self.selected, self.navigated = 0, False
        self.items = self._entries(self.context) if self.context is not None else []
        if self.context is not None and self.context.kind == "mention" and self._spawn is not None:
            self._spawn(self._rank_files(self._generation, self.context), "@ ranking")
        self._changed()

    def refresh(self) -> None:
        """Rank again for the same text (the file index grew, a server listed its models)."""
        if self.context is not None and self.context.kind in ("mention", "argument"):
            self.update(self._before)

    def dismiss(self) -> None:
        self._dismissed = self._before
        self._changed()

    def reopen(self) -> bool:
        """Tab with the menu closed by Esc: open it again. False when it has nothing to show."""
        self._dismissed = None
        self._changed()
        return self.is_open

    def move(self, delta: int) -> None:
        if self.items:
            self.selected = (self.selected + delta) % len(self.items)
            self.navigated = True
            self._changed()

    def pick(self, buffer: Buffer) -> Item | None:
        """Put the chosen entry in place of the word it completes. An argument, once picked, closes the
        menu; a command's name opens its argument's, a folder its entries."""
        if not self.is_open or self.context is None:
            return None
        item = self.items[self.selected]
        document = buffer.document
        before, after = document.text_before_cursor, document.text_after_cursor
        head = before[: self.context.start] + item.text + item.then
        kind = self.context.kind
        buffer.document = Document(head + after, len(head))  # the menu follows (``update``)
        if kind == "argument":
            self._dismissed = self._before  # the value is there: no menu for it again
            self._changed()
        return item

    # -- entries ---------------------------------------------------------------------------------

    def _entries(self, context: Context) -> list[Item]:
        if context.kind == "command":
            commands = self._sources.commands()
            found = rank(context.query, commands, lambda c: c[0], LIMIT)
            return [Item(f"/{name}", usage, sanitize(what)) for name, usage, what in found]
        if context.kind == "argument":
            name = self._before[1:].split(" ", 1)[0].lower()
            values = self._sources.arguments()[name]()
            chosen = rank(context.query, values, lambda v: v[0], LIMIT)
            return [Item(value, value, sanitize(meta), then="") for value, meta in chosen]
        return _ranked(context.query, self._quick_mentions(context.query))

    def _quick_mentions(self, query: str) -> list[Item]:
        """What is known at once: the entries of the folder typed so far, and the MCP resources."""
        paths = [_path_item(p) for p in path_completions(query, self._sources.cwd())]
        resources = [Item("@" + m, "@" + m, sanitize(meta)) for m, meta in self._sources.resources()]
        return paths + resources

    async def _rank_files(self, generation: int, context: Context) -> None:
        quick = self._quick_mentions(context.query)
        paths = self._files.paths()
        indexed = await asyncio.to_thread(rank, context.query, paths, str, LIMIT)
        if generation != self._generation:
            return  # typed on meanwhile: a newer ranking is on its way
        seen = {item.text for item in quick}
        merged = quick + [i for i in map(_path_item, indexed) if i.text not in seen]
        self.items = _ranked(context.query, merged)
        self.selected = min(self.selected, max(0, len(self.items) - 1))
        self._changed()

    # -- what is shown ---------------------------------------------------------------------------

    def hint(self) -> str:
        """The status line's hint while the menu is open."""
        assert self.context is not None
        enter = {"command": "enter run", "argument": "enter send", "mention": "enter send"}[self.context.kind]
        more = ""
        if self.context.kind == "mention" and self._files.walking:
            more = " · listing files…"
        elif self.context.kind == "mention" and self._files.cut:
            more = " · not every file searched (a huge folder)"
        count = f" ({self.selected + 1}/{len(self.items)})" if len(self.items) > ROWS else ""
        return f"↑↓ choose{count} · tab pick · {enter} · esc close{more}"

    def fragments(self, width: int) -> Fragments:
        start = max(0, min(self.selected - ROWS // 2, len(self.items) - ROWS))
        shown = self.items[start : start + ROWS]
        column = min(max(get_cwidth(i.label) for i in shown) + 2, max(12, width * 11 // 20))
        out: Fragments = []
        for index, item in enumerate(shown, start):
            chosen = index == self.selected
            label = fit(sanitize(item.label), column - 2)
            out.append(("class:prompt" if chosen else "", "› " if chosen else "  "))
            out.append(("bold" if chosen else "", label + " " * (column - get_cwidth(label))))
            out.append(("class:hint", fit(item.meta, width - column - 3) + "\n"))
        out[-1] = (out[-1][0], out[-1][1].rstrip("\n"))
        return out

    def rows(self) -> int:
        return min(len(self.items), ROWS) if self.is_open else 0


def describe_command(text: str, commands: Sequence[tuple[str, str, str]]) -> str | None:
    """``/name ...`` in the input: ``/name · what it does`` for the status line; None for other text."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    name = text[1:].split(None, 1)[0] if text[1:].strip() else ""
    found = next((c for c in commands if c[0] == name), None)
    return f"/{name} · {sanitize(found[2])}" if found is not None else None


def _path_item(path: str) -> Item:
    folder = path.endswith("/")
    return Item("@" + path, "@" + path, "folder" if folder else "", then="" if folder else " ")


def _ranked(query: str, items: list[Item]) -> list[Item]:
    """``items`` that match ``query``, best first (the ``@`` left out of the match)."""
    return rank(query, items, lambda i: i.text[1:], LIMIT)


class PaletteActions(Protocol):
    def submit(self, mode: Literal["steer", "follow_up"]) -> None: ...


def key_bindings(palette: Palette, buffer: Buffer, actions: PaletteActions, other: Filter) -> KeyBindings:
    """Active while the menu is open (and ``other``: no question holds the keyboard); they come after
    the app's own, so they win."""
    kb = KeyBindings()
    shown = Condition(lambda: palette.is_open) & other

    def enter() -> None:
        context = palette.context
        if context is not None and (context.kind == "command" or palette.navigated):
            palette.pick(buffer)
            if context.kind == "mention":
                return
        actions.submit("steer")

    kb.add("up", filter=shown)(lambda _e: palette.move(-1))
    kb.add("down", filter=shown)(lambda _e: palette.move(1))
    kb.add("tab", filter=shown)(lambda _e: palette.pick(buffer))
    kb.add("enter", filter=shown)(lambda _e: enter())
    kb.add("escape", filter=shown)(lambda _e: palette.dismiss())
    return kb
