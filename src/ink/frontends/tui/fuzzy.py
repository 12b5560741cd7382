"""Fuzzy matching for the palette: ``mod`` finds ``/model``, ``@models`` finds ``src/ink/ai/models.py``.

A candidate matches when the query's characters appear in it in order (case ignored), as in fzf or
prompt_toolkit's ``FuzzyCompleter``. Ranking puts the matches a person means first: the name itself
(the last path segment) starting with the query, then holding it, then the whole path starting with or
holding it, then scattered matches, the tightest first; shorter candidates win ties. prompt_toolkit's
completer ranks by tightness alone and knows no path segments, so ``@models`` would rank any path
with those letters close together (in a folder's name, say) as high as a file named ``models.py``: the
tiers here are the part it lacks.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
Rank = tuple[int, int, int, str]

EXACT, NAME_PREFIX, IN_NAME, PATH_PREFIX, IN_PATH, SCATTERED = range(6)


def rank_of(query: str, text: str) -> Rank | None:
    """How well ``text`` matches ``query`` (lower is better), or None when it does not match."""
    if not query:
        return (EXACT, 0, 0, "")  # nothing typed yet: the candidates' own order
    q, t = query.lower(), text.lower()
    name = _name(t)
    if t == q or name == q:
        return (EXACT, 0, len(t), t)
    if name.startswith(q):
        return (NAME_PREFIX, 0, len(t), t)
    if q in name:
        return (IN_NAME, name.index(q), len(t), t)
    if t.startswith(q):
        return (PATH_PREFIX, 0, len(t), t)
    if q in t:
        return (IN_PATH, t.index(q), len(t), t)
    span = _tightest_span(q, t)
    return None if span is None else (SCATTERED, span, len(t), t)


def rank(query: str, items: Iterable[T], key: Callable[[T], str], limit: int) -> list[T]:
    """The ``limit`` best matches of ``query`` among ``items`` (by ``key``), best first."""
    scored = ((rank_of(query, key(item)), index, item) for index, item in enumerate(items))
    best = heapq.nsmallest(limit, ((r, i, item) for r, i, item in scored if r is not None), key=_first_two)
    return [item for _rank, _index, item in best]


def _first_two(entry: tuple[Rank | None, int, object]) -> tuple[Rank | None, int]:
    return entry[0], entry[1]


def _name(path: str) -> str:
    """The last segment of a path (a folder's, for ``src/``)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def _tightest_span(query: str, text: str) -> int | None:
    """The length of the shortest stretch of ``text`` holding ``query``'s characters in order: from each
    place the first character is, the earliest way to match the rest (linear in ``text`` per start; a
    regular expression of lazy ``.*?`` backtracked exponentially where the match failed: a query of
    ``aaaaaaaab`` took 17 s on one path of 49 characters)."""
    best: int | None = None
    start = text.find(query[0])
    while start >= 0:
        end = start
        for char in query[1:]:
            end = text.find(char, end + 1)
            if end < 0:
                return best  # no later start can match either
        best = end - start + 1 if best is None else min(best, end - start + 1)
        start = text.find(query[0], start + 1)
    return best
