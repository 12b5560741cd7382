"""Cutting text into screen rows by display width (wide characters count two columns).

``wrap_words`` breaks at spaces, as prose is read (a word longer than a row is the only thing cut);
``wrap_chars`` fills every row, for text where each character matters where it stands (commands, code).
"""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.utils import get_cwidth


def width_of(text: str) -> int:
    return len(text) if text.isascii() else get_cwidth(text)


LIST_MARKS = ("- ", "* ", "• ")


def fit(text: str, room: int) -> str:
    """``text`` on one row of at most ``room`` columns, ended with "…" where it was cut."""
    text = text.replace("\n", " ")
    if room <= 0:
        return ""
    if width_of(text) <= room:
        return text
    head = wrap_chars(text, max(1, room - 1))[0]
    return (head if width_of(head) < room else "") + "…"


def wrap_chars(line: str, width: int) -> list[str]:
    """``line`` cut into rows of at most ``width`` columns (one empty row for an empty line)."""
    width = max(1, width)
    if not line:
        return [""]
    if line.isascii():
        return [line[i : i + width] for i in range(0, len(line), width)]
    rows: list[str] = []
    row: list[str] = []
    used = 0
    for char in line:
        w = get_cwidth(char)
        if used + w > width and row:
            rows.append("".join(row))
            row, used = [], 0
        row.append(char)
        used += w
    rows.append("".join(row))
    return rows


def wrap_words(line: str, width: int) -> list[str]:
    """``line`` cut into rows of at most ``width`` columns at its spaces; a word wider than a row is
    cut where it must be. The space a row ends at is dropped; the line's indentation starts every row
    (when it leaves room for text), and a list item's later rows go under its text, not its mark."""
    width = max(1, width)
    rest = line.lstrip(" ")
    first = line[: len(line) - len(rest)]
    hang = first + "  " if rest.startswith(LIST_MARKS) else first
    if width_of(hang) * 2 > width:
        first = hang = ""
    rows: list[str] = []
    row, started = first, False
    for word in rest.split(" "):
        joined = f"{row} {word}" if started else row + word
        if width_of(joined) <= width:
            row, started = joined, True
            continue
        if started:
            rows.append(row)
        pieces = wrap_chars(word, width - width_of(hang))
        rows.extend(hang + piece for piece in pieces[:-1])
        row, started = hang + pieces[-1], True
    rows.append(row)
    return rows


def wrap_tail(lines: Sequence[str], width: int, max_rows: int) -> list[str]:
    """The last ``max_rows`` screen rows of ``lines`` wrapped at ``width`` columns."""
    width = max(1, width)
    rows: list[str] = []
    for line in reversed(lines):
        wrapped = _wrap_tail(line.replace("\t", "    "), width, max_rows - len(rows))
        rows[:0] = wrapped
        if len(rows) >= max_rows:
            break
    return rows


def _wrap_tail(line: str, width: int, keep: int) -> list[str]:
    """The last ``keep`` rows of ``line`` wrapped at its spaces, as the printed block will be: a long
    line is wrapped from a little before its last rows, never whole (the live area is redrawn often)."""
    start = max(0, len(line) - (keep + 2) * width * 2)
    start -= start % width  # a line without spaces is cut at the same columns as when wrapped whole
    return wrap_words(line[start:], width)[-keep:]
