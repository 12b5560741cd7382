"""Every tool result (and long thinking, and shell output) kept whole, to be shown again later.

A printed result may be folded to its first lines; its whole text stays here, under the title of the call
it belongs to. Ctrl+O walks back through the folded ones, newest first, one per press; ``/folds`` lists
them all and ``/expand N`` shows any. Bounded: the newest ``LIMIT`` entries, each cut at ``MAX_CHARS``.
"""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from ink.frontends.tui.blocks import Block

LIMIT = 200
MAX_CHARS = 1_000_000


class Fold(msgspec.Struct, frozen=True):
    number: int  # 1 for the first of the session; stays the same when older ones are dropped
    title: str
    block: Block
    cut: bool  # part of it was hidden when it was printed


class Folds:
    def __init__(self) -> None:
        self._items: list[Fold] = []
        self._cursor: int | None = None  # index of the fold Ctrl+O showed last
        self._count = 0

    def add(self, title: str, block: Block, *, cut: bool) -> None:
        if len(block.text) > MAX_CHARS:
            block = replace(block, text=block.text[:MAX_CHARS] + "\n… (cut: too long to keep)")
        self._count += 1
        self._items.append(Fold(self._count, title, block, cut))
        del self._items[:-LIMIT]
        self._cursor = None  # the next Ctrl+O starts again from the newest

    def next_cut(self) -> Fold | None:
        """The folded entry before the one shown last (the newest at first); None when none was cut."""
        cut = [i for i, fold in enumerate(self._items) if fold.cut]
        if not cut:
            return None
        earlier = [i for i in cut if self._cursor is None or i < self._cursor]
        self._cursor = earlier[-1] if earlier else cut[-1]  # past the oldest: back to the newest
        return self._items[self._cursor]

    def get(self, number: int) -> Fold | None:
        return next((fold for fold in self._items if fold.number == number), None)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def header(fold: Fold) -> Block:
    """The line printed above a fold shown again: which call it belongs to."""
    return Block("info", f"── #{fold.number} {fold.title} · whole output ──")
