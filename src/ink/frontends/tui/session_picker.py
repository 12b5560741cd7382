"""``ink --resume`` without an id: the sessions of this directory to pick from, before the app starts.

Newest first, each with its age, its first prompt (as typed: attachments left out) and its size. Up and
Down (Page Up/Down, Home/End) choose, typing filters (every word typed must be in the first prompt or
the id, case ignored), Enter resumes the chosen one, Esc (or Ctrl+C, Ctrl+D) quits ink: nothing is
written, no session is made, no model server started. The picker runs before the app is built, so the
choice becomes an ordinary ``--resume ID``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window
from prompt_toolkit.styles import Style

from ink.frontends.tui.blocks import plural, sanitize
from ink.frontends.tui.mentions import typed_line
from ink.frontends.tui.theme import Theme
from ink.frontends.tui.wrapping import fit, width_of
from ink.rewind import ago
from ink.store import SessionInfo

MAX_ROWS = 12  # sessions shown at once (fewer in a short terminal)
AGE_WIDTH = 9  # "365d ago" and a space
HINTS = ("↑↓ choose · enter resume · type to filter · esc quit", "↑↓ · enter resume · esc quit")
Fragments = StyleAndTextTuples


class SessionPicker:
    """The list and what is chosen in it; ``fragments`` draws it. No terminal here."""

    def __init__(self, sessions: Sequence[SessionInfo], where: str, now: float) -> None:
        self._sessions = list(sessions)
        self._where = where
        self._now = now
        self._prompts = {info.id: one_line_prompt(info) for info in self._sessions}
        self.query = ""
        self.shown = list(self._sessions)
        self.selected = 0

    @property
    def chosen(self) -> SessionInfo | None:
        return self.shown[self.selected] if self.shown else None

    def move(self, delta: int) -> None:
        if self.shown:
            self.selected = max(0, min(len(self.shown) - 1, self.selected + delta))

    def type(self, text: str) -> None:
        self._filter(self.query + sanitize(" ".join(text.split("\n"))))

    def backspace(self) -> None:
        self._filter(self.query[:-1])

    def _filter(self, query: str) -> None:
        chosen = self.chosen
        self.query = query
        words = query.lower().split()
        self.shown = [
            info
            for info in self._sessions
            if all(w in f"{info.id} {self._prompts[info.id]}".lower() for w in words)
        ]
        self.selected = self.shown.index(chosen) if chosen in self.shown else 0

    def title(self) -> str:
        """The line printed above the picker (``pick_session``)."""
        return f"ink: resume a session of {self._where} ({plural(len(self._sessions), 'session')})"

    def fragments(self, width: int, rows: int) -> Fragments:
        """The filter typed, at most ``rows`` sessions (the chosen one in view) and the keys."""
        rows = max(1, min(MAX_ROWS, rows))
        out: Fragments = []
        if self.query:
            count = f"{len(self.shown)} of {len(self._sessions)}"
            out.append(("class:prompt", fit(f"{count} · filter: {self.query}▏", width) + "\n"))
        if not self.shown:
            out.append(("class:hint", fit("  no session's first prompt holds all of that", width) + "\n"))
        start = max(0, min(self.selected - rows // 2, len(self.shown) - rows))
        for index, info in enumerate(self.shown[start : start + rows], start):
            out += self._row(info, index == self.selected, width)
        hint = next((h for h in HINTS if width_of(h) <= width), HINTS[-1])
        out.append(("class:hint", fit(hint, width)))
        return out

    def _row(self, info: SessionInfo, chosen: bool, width: int) -> Fragments:
        age = ago(self._now - info.updated).ljust(AGE_WIDTH)
        size = f"  {plural(info.message_count, 'message')}" if width >= 60 else ""
        room = width - 2 - AGE_WIDTH - width_of(size)
        if room < 8:  # a very narrow terminal: the prompt keeps what room there is
            age, size, room = "", "", width - 2
        prompt = fit(self._prompts[info.id], room)
        gap = " " * max(0, room - width_of(prompt))
        mark = ("class:prompt", "› ") if chosen else ("", "  ")
        text_style = "bold" if chosen else ""
        return [mark, ("class:hint", age), (text_style, prompt + gap), ("class:hint", size + "\n")]


def one_line_prompt(info: SessionInfo) -> str:
    """A session's first prompt as the user typed it, on one line: attachments left out."""
    prompt = " ".join(sanitize(typed_line(info.first_prompt)).split())
    return prompt or f"(no prompt yet) {info.id[:8]}"


async def pick_session(sessions: Sequence[SessionInfo], where: str, theme: Theme) -> SessionInfo | None:
    """Show the picker until the user chooses (the session) or quits (None). ``sessions``: newest first."""
    picker = SessionPicker(sessions, where, time.time())
    # A line of its own above the picker: the picker erased on the screen's top row was a "clear screen"
    # to tmux (scroll-on-clear), which kept a stale copy of it in its scrollback.
    sys.stdout.write(picker.title() + "\n")
    sys.stdout.flush()
    app: Application[SessionInfo | None] = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(lambda: _draw(app, picker)), wrap_lines=False)])),
        key_bindings=_key_bindings(picker),
        style=Style.from_dict(dict(theme.styles)),
        full_screen=False,
        erase_when_done=True,
        mouse_support=False,
    )
    app.ttimeoutlen = 0.01  # a lone Esc quits at once (an arrow's bytes come in one write)
    app.timeoutlen = 0.0
    return await app.run_async(handle_sigint=False)


def _draw(app: Application[SessionInfo | None], picker: SessionPicker) -> Fragments:
    size = app.output.get_size()
    return picker.fragments(size.columns, size.rows - 3 - (1 if picker.query else 0))  # the title, the hint


def _key_bindings(picker: SessionPicker) -> KeyBindings:
    kb = KeyBindings()
    moves = {"up": -1, "down": 1, "pageup": -MAX_ROWS, "pagedown": MAX_ROWS, "home": -(10**9), "end": 10**9}
    for key, delta in moves.items():
        kb.add(key)(lambda _e, delta=delta: picker.move(delta))

    @kb.add("enter")
    def _resume(event: KeyPressEvent) -> None:
        if picker.chosen is not None:
            event.app.exit(result=picker.chosen)

    @kb.add("escape", eager=True)
    @kb.add("c-c")
    @kb.add("c-d")
    def _quit(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    kb.add("backspace")(lambda _e: picker.backspace())
    kb.add(Keys.BracketedPaste)(lambda e: picker.type(e.data))

    @kb.add(Keys.Any)
    def _typed(event: KeyPressEvent) -> None:
        if event.data.isprintable():
            picker.type(event.data)

    return kb
