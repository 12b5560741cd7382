"""The input ledger and queue (R8, R13, R14, R30, R32).

Every submitted input gets an id and a state: ``queued`` -> ``taken`` -> ``committed`` (in the history),
or ``restored`` (handed back to the user) or ``cancelled`` (removed by the user). The queue is the
entries still ``queued``, in submission order. Entries reserved for a flush (R26) stay in the queue, so
the user still sees, edits and cancels them, but the loop's takes pass over them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Literal, TypeAlias

import msgspec

from ink.agent.loop import PendingInput
from ink.ai.messages import ToolImage
from ink.run.events import QueuedInput
from ink.vocabulary import InputMode, TakeMode

InputState: TypeAlias = Literal["queued", "taken", "committed", "restored", "cancelled"]


class QueueError(Exception):
    """A queue operation named an input that is not waiting in the queue."""


class LedgerEntry(msgspec.Struct):
    """One submitted input and where it is in its life (R30)."""

    seq: int
    input_id: str
    text: str
    mode: InputMode
    state: InputState = "queued"
    reserved: bool = False
    images: tuple[ToolImage, ...] = ()  # attached by the user (``@shot.png``); they go with the text

    @property
    def is_bang(self) -> bool:
        return is_bang(self.text)

    def pending(self) -> PendingInput:
        return PendingInput(self.input_id, self.text, self.mode, self.images)

    def public(self) -> QueuedInput:
        return QueuedInput(self.input_id, self.text, self.mode)


def is_bang(text: str) -> bool:
    """A bang line is run in the shell by the controller, never sent to the model (R14)."""
    return text.lstrip().startswith("!")


class InputLedger:
    def __init__(self) -> None:
        self._entries: dict[str, LedgerEntry] = {}
        self._seq = itertools.count(1)

    def skip_past(self, input_ids: Iterable[str]) -> None:
        """New ids start after every ``in-N`` given (the inputs of a resumed history, its checkpoints):
        an id names one input for the session's whole life, also across processes."""
        numbers = (int(i[3:]) for i in input_ids if i.startswith("in-") and i[3:].isdecimal())
        highest = max(numbers, default=0)
        self._seq = itertools.count(max(next(self._seq), highest + 1))

    def add(self, text: str, mode: InputMode, images: tuple[ToolImage, ...] = ()) -> LedgerEntry:
        seq = next(self._seq)
        entry = LedgerEntry(seq, f"in-{seq}", text, mode, images=images)
        self._entries[entry.input_id] = entry
        return entry

    def get(self, input_id: str) -> LedgerEntry | None:
        return self._entries.get(input_id)

    def state(self, input_id: str) -> InputState | None:
        entry = self._entries.get(input_id)
        return entry.state if entry else None

    def queued(self) -> list[LedgerEntry]:
        return [e for e in self._entries.values() if e.state == "queued"]

    def snapshot(self) -> tuple[QueuedInput, ...]:
        return tuple(e.public() for e in self.queued())

    def take(self, mode: InputMode, how: TakeMode) -> list[LedgerEntry]:
        """Take waiting ``mode`` entries for the history. Skips other modes, bang lines and entries
        reserved for a flush (R13, R14)."""
        candidates = [e for e in self.queued() if e.mode == mode and not e.is_bang and not e.reserved]
        taken = candidates if how == "all" else candidates[:1]
        for entry in taken:
            entry.state = "taken"
        return taken

    def commit(self, input_ids: Iterable[str]) -> None:
        for input_id in input_ids:
            entry = self._entries.get(input_id)
            if entry is not None and entry.state == "taken":
                entry.state = "committed"

    def reserve_all(self) -> None:
        """R26: the entries present when a run settled are the flush."""
        for entry in self.queued():
            entry.reserved = True

    def next_reserved(self) -> LedgerEntry | None:
        return next((e for e in self.queued() if e.reserved), None)

    def restore_all(self, keep: LedgerEntry | None = None) -> list[LedgerEntry]:
        """Hand back everything not in the history: queued entries and taken-but-uncommitted ones,
        in submission order (R22, R30). ``keep`` (a pending redirect, R24) is left as it is."""
        back = [e for e in self._entries.values() if e.state in ("queued", "taken") and e is not keep]
        for entry in back:
            entry.state = "restored"
            entry.reserved = False
        return back

    def restore(self, entry: LedgerEntry) -> None:
        entry.state = "restored"

    def mark_taken(self, entry: LedgerEntry) -> None:
        entry.state = "taken"
        entry.reserved = False

    def mark_committed(self, entry: LedgerEntry) -> None:
        entry.state = "committed"

    def edit(self, input_id: str, text: str) -> LedgerEntry:
        entry = self._waiting(input_id)
        entry.text = text
        return entry

    def cancel(self, input_id: str) -> LedgerEntry:
        entry = self._waiting(input_id)
        entry.state = "cancelled"
        return entry

    def set_mode(self, input_id: str, mode: InputMode) -> LedgerEntry:
        entry = self._waiting(input_id)
        entry.mode = mode
        return entry

    def _waiting(self, input_id: str) -> LedgerEntry:
        entry = self._entries.get(input_id)
        if entry is None:
            raise QueueError(f"no input with id {input_id!r}")
        if entry.state != "queued":
            raise QueueError(f"input {input_id!r} is no longer queued (it is {entry.state})")
        return entry
