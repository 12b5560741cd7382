"""Exact-text replacement for edit: find, refuse ambiguity, explain misses.

Pure string work, no files: ``apply_edits`` either returns the new text or raises ``EditRefused`` with a
message the model can act on (where the candidates are, which line looks closest).
"""

from __future__ import annotations

import msgspec

HINT_MAX_LINES = 20_000
"""Closest-line hints are computed only for files up to this many lines (it is a linear fuzzy scan)."""


class EditRefused(ValueError):
    """An edit cannot be applied; the message says why and how to fix the call."""


class Replacement(msgspec.Struct, frozen=True):
    """One edit: ``old_text`` replaced by ``new_text`` (every occurrence with ``replace_all``)."""

    old_text: str
    new_text: str
    replace_all: bool = False


def apply_edits(text: str, edits: list[Replacement], crlf_aware: bool) -> tuple[str, list[int]]:
    """Apply ``edits`` in order, each to the result of the previous one. All or nothing.

    Returns the new text and, per edit, how many places it replaced. ``crlf_aware`` (a file with mixed
    line endings, kept raw) lets an edit whose text uses ``\\n`` match CRLF lines. Raises ``EditRefused``
    naming the failing edit when there are several.
    """
    counts = []
    for index, edit in enumerate(edits, start=1):
        try:
            text, count = _apply_one(text, edit, crlf_aware)
        except EditRefused as exc:
            if len(edits) == 1:
                raise
            raise EditRefused(f"Edit {index} of {len(edits)}: {exc}") from None
        counts.append(count)
    return text, counts


def _apply_one(text: str, edit: Replacement, crlf_aware: bool) -> tuple[str, int]:
    old, new = edit.old_text, edit.new_text
    if not old:
        raise EditRefused("old_text is empty. To create or overwrite a whole file use write.")
    if old == new:
        raise EditRefused("old_text and new_text are the same; there is nothing to change.")
    starts = find_all(text, old)
    if not starts and crlf_aware and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        starts = find_all(text, old)
    if not starts:
        raise EditRefused("old_text was not found in the file." + closest_hint(text, edit.old_text))
    if len(starts) > 1 and not edit.replace_all:
        lines = ", ".join(str(line_of(text, start)) for start in starts)
        raise EditRefused(
            f"old_text is not unique: it occurs {len(starts)} times, starting at lines {lines}. "
            "Include more surrounding lines to pick one, or set replace_all to change every one."
        )
    if edit.replace_all:
        return text.replace(old, new), len(starts)
    return text.replace(old, new, 1), 1


def find_all(text: str, needle: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences of ``needle`` (what ``str.replace`` changes)."""
    starts = []
    at = text.find(needle)
    while at >= 0:
        starts.append(at)
        at = text.find(needle, at + len(needle))
    return starts


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def closest_hint(text: str, old: str) -> str:
    """A hint naming the file line most like the first non-blank line of ``old``, when one is close."""
    wanted = next((line.strip() for line in old.splitlines() if line.strip()), "")
    lines = text.splitlines()
    if not wanted or len(lines) > HINT_MAX_LINES:
        return " Read the file again to see its current text."
    stripped = [line.strip() for line in lines]
    if wanted in stripped:
        number = stripped.index(wanted) + 1
        return (
            f" Line {number} has the same text with different indentation or surrounding lines: "
            f"{lines[number - 1]!r}. Copy old_text exactly from a fresh read."
        )
    import difflib  # here: only a failed replacement looks for the closest text

    best = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.6)
    if not best:
        return " No line is close to it; read the file again to see its current text."
    number = stripped.index(best[0]) + 1
    return f" The closest line is {number}: {lines[number - 1]!r}. Copy old_text exactly from a fresh read."
