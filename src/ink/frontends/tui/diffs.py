"""A unified diff as styled lines: the code highlighted for its language, and within a changed line the
words that changed marked, for the scrollback (rich) and the question panel (prompt_toolkit).

Pure data: ``diff_lines`` reads the text of a unified diff (the language from its ``+++`` file name,
with pygments, which rich already depends on) and returns lines of ``Part``s; each renderer maps a part's
token type and ``changed`` flag to its own styles. A removed line and the added line that replaces it are
compared word by word; lines too different to compare are marked whole by their sign alone.
"""

from __future__ import annotations

import difflib
import itertools
import re
from functools import lru_cache
from typing import Any, Literal, TypeAlias

import msgspec

Role: TypeAlias = Literal["file", "hunk", "add", "del", "context", "note"]
WORDS = re.compile(r"\w+|\s+|[^\w\s]")
MIN_LIKENESS = 0.4  # below this, a removed and an added line are not one line changed: no word marks
MAX_HIGHLIGHTED = 4000  # characters of one line lexed and compared; a longer line is shown plain


class Part(msgspec.Struct, frozen=True):
    text: str
    token: Any = None  # a pygments token type (None: plain text)
    changed: bool = False  # a word that differs from the line it replaces or is replaced by


class DiffLine(msgspec.Struct, frozen=True):
    role: Role
    sign: str  # "+", "-", " " for code lines; "" for headers and notes
    parts: tuple[Part, ...]


def diff_lines(unified: str) -> list[DiffLine]:
    """The lines of ``unified``, styled. Never raises: text that is not a diff comes back as notes."""
    out: list[DiffLine] = []
    lexer: Any = None
    removed: list[int] = []  # indexes in ``out`` of the removed lines waiting for their replacements
    added: list[int] = []
    in_hunk = False
    lines = unified.split("\n")
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if (line.startswith("--- ") and following.startswith("+++ ")) or (
            not in_hunk and line.startswith("+++ ")
        ):
            _mark_words(out, removed, added)
            in_hunk = False
            if line.startswith("+++ "):
                lexer = _lexer(_file_name(line[4:]))
            out.append(DiffLine("file", "", (Part(line),)))
            continue
        if line.startswith("@@"):
            _mark_words(out, removed, added)
            in_hunk = True
            out.append(DiffLine("hunk", "", (Part(line),)))
            continue
        sign, code = line[:1], line[1:]
        if in_hunk and sign in ("+", "-", " "):
            if sign == " " or (sign == "-" and added):
                _mark_words(out, removed, added)
            if sign == "+":
                added.append(len(out))
            elif sign == "-":
                removed.append(len(out))
            role: Role = "add" if sign == "+" else "del" if sign == "-" else "context"
            out.append(DiffLine(role, sign, _highlight(lexer, code)))
            continue
        _mark_words(out, removed, added)
        in_hunk = in_hunk and line.startswith("\\")  # "\ No newline at end of file" is part of a hunk
        out.append(DiffLine("note", "", (Part(line),)))
    _mark_words(out, removed, added)
    return out


def _file_name(header: str) -> str:
    name = header.split("\t", 1)[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name


@lru_cache(maxsize=64)
def _lexer(name: str) -> Any:
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except (ClassNotFound, ValueError):
        return None


def _highlight(lexer: Any, code: str) -> tuple[Part, ...]:
    if lexer is None or not code or len(code) > MAX_HIGHLIGHTED:
        return (Part(code),)
    parts = [Part(text, token) for token, text in lexer.get_tokens(code) if text]
    joined = "".join(p.text for p in parts)
    return tuple(parts) if joined == code else (Part(code),)  # a lexer that changed the text: plain


def _mark_words(out: list[DiffLine], removed: list[int], added: list[int]) -> None:
    """Pair the waiting removed and added lines in order and mark the words that differ in each pair."""
    for old, new in zip(removed, added, strict=False):
        old_text, new_text = _text(out[old]), _text(out[new])
        if max(len(old_text), len(new_text)) > MAX_HIGHLIGHTED:
            continue
        a, b = WORDS.findall(old_text), WORDS.findall(new_text)
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        if matcher.ratio() < MIN_LIKENESS:
            continue
        old_marks, new_marks = [], []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                old_marks.append((len("".join(a[:i1])), len("".join(a[:i2]))))
                new_marks.append((len("".join(b[:j1])), len("".join(b[:j2]))))
        out[old] = _with_marks(out[old], old_marks)
        out[new] = _with_marks(out[new], new_marks)
    removed.clear()
    added.clear()


def _text(line: DiffLine) -> str:
    return "".join(p.text for p in line.parts)


def _with_marks(line: DiffLine, marks: list[tuple[int, int]]) -> DiffLine:
    """``line`` with its parts cut at the marked ranges' ends, the parts inside them ``changed``."""
    cuts = sorted({edge for mark in marks for edge in mark})
    parts: list[Part] = []
    at = 0
    for part in line.parts:
        start, end = at, at + len(part.text)
        edges = [start, *(c for c in cuts if start < c < end), end]
        for left, right in itertools.pairwise(edges):
            changed = any(m0 <= left and right <= m1 for m0, m1 in marks)
            parts.append(Part(part.text[left - start : right - start], part.token, changed))
        at = end
    return DiffLine(line.role, line.sign, tuple(parts))
