"""The rewind picker: Esc Esc on an empty input, or ``/rewind``, lists the inputs to go back to.

Newest first, each with the files its work changed. Up/Down choose; Enter rewinds the files and the
conversation, ``f`` the files only, ``c`` the conversation only; Esc closes. The rewind itself is the
app's (``App.checkpoints``, docs/rewind.md): this module only asks and tells. When files were changed
outside ink, the picker names them and waits for ``y`` (overwrite: the rewind again with ``force``) or
``n``. Inputs the rewind undid come back into the editor through the ``input_restored`` event, like any
restored input (R30).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

import msgspec
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings

from ink.ai.messages import Message, UserMessage
from ink.app import App
from ink.checkpoints.keeper import Checkpoint
from ink.frontends.tui.blocks import Block, plural, sanitize
from ink.frontends.tui.mentions import typed_part
from ink.rewind import ChangedOutside, RewindError, RewindResult, SessionCheckpoints, ago, one_line

DOUBLE_ESCAPE_SECONDS = 0.8  # the second Esc of Esc Esc comes within this long
ROWS = 8  # inputs shown at once
FILES_SHOWN = 3
Fragments = list[tuple[str, str]]


class Choice(msgspec.Struct, frozen=True):
    checkpoint: Checkpoint
    files: bool
    conversation: bool


class RewindPicker:
    def __init__(
        self,
        core: App,
        say: Callable[[Block], None],
        changed: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        hold_notes: Callable[[bool], None] = lambda _hold: None,
    ) -> None:
        self._core, self._say, self._changed, self._clock = core, say, changed, clock
        self._hold_notes = hold_notes  # the inputs put back are told after the rewind's own line
        self.entries: list[Checkpoint] = []
        self.selected = 0
        self.confirming: tuple[Choice, tuple[str, ...]] | None = None  # files changed outside ink
        self.is_open = False
        self._escaped_at: float | None = None
        self._opening: asyncio.Future[None] | None = None

    # -- opening -----------------------------------------------------------------------------------

    def escape_pressed(self, input_empty: bool) -> bool:
        """Called on every Esc the editor gets. True when this one is the second of Esc Esc on an empty
        input: the picker opened (or said why it cannot)."""
        now = self._clock()
        second = (
            input_empty and self._escaped_at is not None and now - self._escaped_at <= DOUBLE_ESCAPE_SECONDS
        )
        self._escaped_at = None if second else now if input_empty else None
        if second:
            self.open()
        return second

    def open(self) -> None:
        """Shown once the pending snapshots are taken (the last run's end: its files are known)."""
        part = self._core.checkpoints
        if part is None:
            self._say(Block("info", "rewind needs workspace checkpoints, which are off here"))
            return
        self._opening = self._core.tasks.spawn(self._open(part), "rewind picker")  # the app awaits it

    async def _open(self, part: SessionCheckpoints) -> None:
        await part.settled()
        self.entries = list(reversed(_offered(part.checkpoints(), self._core.controller.history.messages)))
        if not self.entries:
            self._say(Block("info", "nothing to rewind to yet: a checkpoint is taken before each input"))
            return
        self.selected, self.confirming, self.is_open = 0, None, True
        self._changed()

    def close(self) -> None:
        self.is_open, self.confirming = False, None
        self._changed()

    # -- keys --------------------------------------------------------------------------------------

    def move(self, delta: int) -> None:
        if self.confirming is None and self.entries:
            self.selected = (self.selected + delta) % len(self.entries)
            self._changed()

    def choose(self, *, files: bool, conversation: bool) -> None:
        if self.confirming is not None or not self.entries:
            return
        checkpoint = self.entries[self.selected]
        if checkpoint.kind == "rewind":  # the undo of a rewind holds files only
            files, conversation = True, False
        self._start(Choice(checkpoint, files, conversation), force=False)

    def answer(self, overwrite: bool) -> None:
        """``y``/``n`` once files changed outside ink were named."""
        if self.confirming is None:
            return
        choice, _paths = self.confirming
        if overwrite:
            self._start(choice, force=True)
        else:
            self._say(Block("info", "rewind cancelled: nothing was changed"))
            self.close()

    def _start(self, choice: Choice, *, force: bool) -> None:
        part = self._core.checkpoints
        assert part is not None  # the picker opens only with checkpoints
        try:
            task = part.start_rewind(
                choice.checkpoint.input_id, files=choice.files, conversation=choice.conversation, force=force
            )
        except RewindError as exc:
            self._say(Block("error", f"cannot rewind: {exc}"))
            self.close()
            return
        self.close()
        self._hold_notes(True)
        task.add_done_callback(lambda done: self._finished(choice, done))

    def _finished(self, choice: Choice, task: asyncio.Future[RewindResult]) -> None:
        try:
            self._report(choice, task)
        finally:
            self._hold_notes(False)

    def _report(self, choice: Choice, task: asyncio.Future[RewindResult]) -> None:
        if task.cancelled():
            return
        problem = task.exception()
        if isinstance(problem, ChangedOutside):
            self.confirming, self.is_open = (choice, tuple(problem.paths)), True
            self._changed()
        elif problem is not None:
            self._say(Block("error", f"rewind failed, nothing was changed: {problem}"))
        else:
            self._say(Block("info", done_text(choice, task.result())))

    # -- drawing -----------------------------------------------------------------------------------

    def fragments(self, width: int) -> Fragments:
        if self.confirming is not None:
            return self._confirm_fragments()
        out: Fragments = [("class:question.title", "rewind to just before")]
        out.append(
            ("class:hint", "  ↑↓ choose · enter files+conversation · f files · c conversation · esc close")
        )
        start = max(0, min(self.selected - ROWS // 2, len(self.entries) - ROWS))
        now = time.time()
        for index in range(start, min(len(self.entries), start + ROWS)):
            entry = self.entries[index]
            chosen = index == self.selected
            age = f"{ago(now - entry.time):>8}  "
            line = _line(entry, max(10, width - len(age) - 4))
            out.append(("", "\n"))
            out.append(("class:prompt" if chosen else "", "› " if chosen else "  "))
            out.append(("class:hint", age))
            out.append(("bold" if chosen else "", line))
        return out

    def _confirm_fragments(self) -> Fragments:
        assert self.confirming is not None
        _choice, paths = self.confirming
        out: Fragments = [
            (
                "class:question.title",
                f"{plural(len(paths), 'file')} changed outside ink would be overwritten:",
            )
        ]
        for path in paths[:ROWS]:
            out += [("", "\n"), ("class:question.text", f"  {sanitize(path)}")]
        if len(paths) > ROWS:
            out += [("", "\n"), ("class:hint", f"  … {len(paths) - ROWS} more")]
        out += [("", "\n"), ("class:question.key", " y "), ("", " overwrite them   ")]
        out += [("class:question.key", " n "), ("", " leave everything as it is")]
        return out


def key_bindings(picker: RewindPicker) -> KeyBindings:
    """Active while the picker is open; they come after the app's own, so they win. Other keys are
    swallowed: the editor is not typed into behind the list."""
    kb = KeyBindings()
    listing = Condition(lambda: picker.is_open and picker.confirming is None)
    confirming = Condition(lambda: picker.is_open and picker.confirming is not None)
    kb.add("<any>", filter=listing | confirming)(lambda _e: None)
    kb.add("up", filter=listing)(lambda _e: picker.move(-1))
    kb.add("down", filter=listing)(lambda _e: picker.move(1))
    kb.add("enter", filter=listing)(lambda _e: picker.choose(files=True, conversation=True))
    kb.add("f", filter=listing)(lambda _e: picker.choose(files=True, conversation=False))
    kb.add("c", filter=listing)(lambda _e: picker.choose(files=False, conversation=True))
    kb.add("escape", filter=listing)(lambda _e: picker.close())
    kb.add("y", filter=confirming)(lambda _e: picker.answer(True))
    kb.add("n", filter=confirming)(lambda _e: picker.answer(False))
    kb.add("escape", filter=confirming)(lambda _e: picker.answer(False))
    return kb


def _offered(checkpoints: list[Checkpoint], messages: Sequence[Message]) -> list[Checkpoint]:
    """The checkpoints worth offering: an input still in the conversation, one older than all of it
    (compacted away: its files can still go back), a rewind's own; not an input an earlier rewind cut
    off (it is gone from the conversation, and its text came back to the editor then)."""
    kept = {m.input_id for m in messages if isinstance(m, UserMessage) and m.input_id is not None}
    times = [c.time for c in checkpoints if c.input_id in kept]
    oldest = min(times, default=float("inf"))
    return [c for c in checkpoints if c.kind == "rewind" or c.input_id in kept or c.time < oldest]


def done_text(choice: Choice, result: RewindResult) -> str:
    parts = [f"⟲ rewound to just before “{one_line(typed_part(choice.checkpoint.text), 60)}”"]
    if choice.files:
        parts.append(f"{plural(len(result.written), 'file')} restored, {len(result.removed)} removed")
    if choice.conversation:
        parts.append("conversation cut before it; its input is back in the editor")
    if result.undo is not None and (result.written or result.removed):
        parts.append("undo: /rewind, “before the rewind”")
    return " · ".join(parts)


def _line(entry: Checkpoint, width: int) -> str:
    files = entry.files
    if entry.kind == "rewind":
        changed = f"  ⟲ files only · {plural(len(files), 'file')}"
    elif files:
        shown = ", ".join(files[:FILES_SHOWN]) + (", …" if len(files) > FILES_SHOWN else "")
        changed = f"  · {plural(len(files), 'file')}: {shown}"
    else:
        changed = "  · no files changed"
    text = one_line(typed_part(entry.text), max(10, width - len(changed)))  # no attachments' text
    return sanitize(text + changed)[:width]
