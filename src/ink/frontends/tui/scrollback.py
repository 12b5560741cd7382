"""What ink prints above its app (the scrollback), and laying it all out again when the width changes.

A terminal that reflows on a resize (tmux, iTerm2, VTE, kitty, xterm.js) re-wraps the rows the app drew
at the old width into more rows than prompt_toolkit erases, so a stale copy of the live area and its
rule stayed behind, every time; one that does not reflow cuts the printed lines instead. No erase at
the old geometry is right for both. So, as Claude Code does, a change of width clears the screen and
the terminal's own scrollback and prints the session's blocks again at the new width (the app is drawn
under them as usual): nothing stale stays, and earlier output reads at the new width too. A drag sends
many sizes: the lay-out waits for ``SETTLE_SECONDS`` without a new one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit.application import Application

from ink.frontends.tui.blocks import Block, plural
from ink.frontends.tui.paint import Painter
from ink.frontends.tui.theme import Theme

SETTLE_SECONDS = 0.15
KEPT_BLOCKS = 5000  # printed again after a resize; earlier ones are named in one line
CLEAR_ALL = "\x1b[H\x1b[2J\x1b[3J"  # cursor home, clear the screen, clear the terminal's scrollback


class InlineApplication(Application[int]):
    """prompt_toolkit's application, telling ``on_width_change`` when a resize changed the width (its own
    handling, an erase and a redraw, is kept for the height and until the lay-out)."""

    def __init__(self, on_width_change: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_width_change = on_width_change
        self._columns: int | None = None

    def _on_resize(self) -> None:
        super()._on_resize()
        columns = self.output.get_size().columns
        if self._columns is not None and columns != self._columns:
            self._on_width_change()
        self._columns = columns

    def _redraw(self, render_as_done: bool = False) -> None:
        if self._columns is None:
            self._columns = self.output.get_size().columns
        super()._redraw(render_as_done)


class Scrollback:
    def __init__(self, theme: Theme, clock: Callable[[], float] = time.monotonic) -> None:
        self._theme = theme
        self._clock = clock
        self.painter = Painter(theme=theme)
        self._blocks: list[Block] = []
        self._dropped = 0
        self._width: int | None = None  # the width the scrollback was last laid out at
        self._resized_at: float | None = None

    def paint(self, blocks: Sequence[Block], width: int) -> str:
        """The text of ``blocks`` at ``width``, kept to be printed again after a resize."""
        self._blocks.extend(blocks)
        if len(self._blocks) > KEPT_BLOCKS:
            self._dropped += len(self._blocks) - KEPT_BLOCKS
            del self._blocks[:-KEPT_BLOCKS]
        if self._width is None:
            self._width = width
        return self.painter.paint(blocks, width)

    def resized(self) -> None:
        self._resized_at = self._clock()

    def due(self) -> float | None:
        """Seconds until a lay-out is due (0: now), or None when none is needed. Also after a resize
        back to the width it was laid out at: a reflowing terminal re-wrapped the app's rows meanwhile."""
        if self._resized_at is None or self._width is None:
            return None
        return max(0.0, SETTLE_SECONDS - (self._clock() - self._resized_at))

    def relayout(self, width: int) -> str:
        """What to write to lay the scrollback out again at ``width``: clear, then every kept block."""
        self._resized_at, self._width = None, width
        self.painter = Painter(theme=self._theme)  # the gaps between blocks start afresh
        blocks = list(self._blocks)
        if self._dropped:
            blocks.insert(0, Block("info", f"… {plural(self._dropped, 'earlier block')} not shown again"))
        return CLEAR_ALL + self.painter.paint(blocks, width)
