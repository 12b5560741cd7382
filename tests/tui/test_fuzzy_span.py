"""The palette's scattered-match measure (``fuzzy._tightest_span``): the same spans as the regular
expression it replaced (kept here as the oracle), without its exponential backtracking on a match that
fails from a later start."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ink.frontends.tui.fuzzy import SCATTERED, _tightest_span, rank_of


def regex_span(query: str, text: str) -> int | None:
    pattern = "(?=(" + ".*?".join(map(re.escape, query)) + "))"
    spans = [len(found.group(1)) for found in re.finditer(pattern, text, re.DOTALL)]
    return min(spans) if spans else None


@given(st.text("abc/", min_size=1, max_size=4), st.text("abc/.", max_size=24))
def test_the_span_is_the_shortest_stretch_holding_the_query_in_order(query: str, text: str) -> None:
    assert _tightest_span(query, text) == regex_span(query, text)


def test_a_match_that_fails_late_in_a_long_path_is_measured_at_once() -> None:
    # The regular expression took 17 s on 49 characters and minutes on 69; this is a few microseconds.
    path = "a" * 8 + "-b" + "a" * 4000
    assert _tightest_span("a" * 8 + "b", path) == 10
    assert rank_of("a" * 8 + "b", path) == (SCATTERED, 10, len(path), path)
