"""Cutting a streamed reply into finished markdown blocks, so each is rendered once.

Text arrives in small chunks. A block is finished when the text after it proves it cannot continue: a
blank line followed by a line that is not a continuation (not indented, not the next item of a list), or
the closing fence of a code block. Finished blocks are printed as markdown above the input; the
unfinished rest stays raw in the live area. Work per chunk is proportional to the chunk, never to the
reply: only complete lines are examined, each once.
"""

from __future__ import annotations

import re

_LIST_ITEM = re.compile(r"\s{0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_JOIN_PARTS = 64  # join the pieces of a line that goes on and on, so it is never a long list


class BlockSplitter:
    """Feed text with ``feed``; it returns the blocks that became finished. ``finish`` ends the reply.

    ``live_lines`` is the unfinished text: the lines of the open block (blank lines pending after it
    included) and the incomplete last line.
    """

    def __init__(self) -> None:
        self._lines: list[str] = []  # the open block
        self._blanks = 0  # blank lines seen after the open block (not yet known to end it)
        self._partial: list[str] = []  # the incomplete last line, in pieces
        self._fence: str | None = None  # the marker of an open code fence
        self._is_list = False

    def feed(self, text: str) -> list[str]:
        if "\n" not in text:
            self._add_partial(text)
            return []
        pieces = text.split("\n")
        finished: list[str] = []
        self._partial.append(pieces[0])
        first = "".join(self._partial)
        self._partial = [pieces[-1]] if pieces[-1] else []
        for line in (first, *pieces[1:-1]):
            block = self._line(line)
            if block is not None:
                finished.append(block)
        return finished

    def finish(self) -> list[str]:
        """The reply ended: whatever is open is finished (the last line may still end a block first)."""
        finished = []
        if self._partial:
            tail = "".join(self._partial)
            self._partial = []
            before = self._line(tail)
            if before is not None:
                finished.append(before)
        block = self._close()
        self._fence = None
        return [*finished, block] if block is not None else finished

    def live_lines(self, max_lines: int) -> list[str]:
        """At most the last ``max_lines`` lines of the unfinished text."""
        lines = self._lines[-max_lines:] if self._lines else []
        if self._blanks and lines:
            lines = [*lines, *[""] * min(self._blanks, 1)]
        if self._partial:
            lines = [*lines, "".join(self._partial)]
        return lines[-max_lines:]

    @property
    def empty(self) -> bool:
        return not self._lines and not self._partial

    def _add_partial(self, text: str) -> None:
        self._partial.append(text)
        if len(self._partial) > _JOIN_PARTS:
            self._partial = ["".join(self._partial)]

    def _line(self, line: str) -> str | None:
        if self._fence is not None:
            self._lines.append(line)
            if _closes(line, self._fence):
                self._fence = None
                return self._close()
            return None
        if not line.strip():
            if self._lines:
                self._blanks += 1
            return None
        finished = None
        if self._lines and not self._continues(line):
            finished = self._close()
        self._open_line(line)
        return finished

    def _continues(self, line: str) -> bool:
        """Does ``line`` belong to the open block?"""
        if not self._blanks:
            return not _FENCE.match(line) or line[:1].isspace()
        if line[:1].isspace():
            return True  # an indented paragraph or code under a list item
        return self._is_list and bool(_LIST_ITEM.match(line))

    def _open_line(self, line: str) -> None:
        if not self._lines:
            self._is_list = bool(_LIST_ITEM.match(line))
        self._lines.extend([""] * self._blanks)
        self._blanks = 0
        self._lines.append(line)
        fence = _FENCE.match(line)
        if fence is not None:
            self._fence = fence.group(1)

    def _close(self) -> str | None:
        lines, self._lines, self._blanks = self._lines, [], 0
        self._is_list = False
        return "\n".join(lines) if lines else None


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0])
