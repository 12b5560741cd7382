"""Cutting a streamed reply into finished markdown blocks (no terminal)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ink.frontends.tui.splitter import BlockSplitter


def blocks_of(chunks: list[str]) -> list[str]:
    splitter = BlockSplitter()
    return [b for chunk in chunks for b in splitter.feed(chunk)] + splitter.finish()


def test_a_paragraph_is_finished_when_the_next_one_starts() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("First para") == []
    assert splitter.feed("graph.\n\nSec") == []  # a blank line alone does not prove the end
    assert splitter.live_lines(10) == ["First paragraph.", "", "Sec"]
    assert splitter.feed("ond.\n") == ["First paragraph."]
    assert splitter.live_lines(10) == ["Second."]
    assert splitter.finish() == ["Second."]
    assert splitter.empty


def test_a_code_block_is_one_block_even_with_blank_lines_inside() -> None:
    reply = "Look:\n```python\ndef f():\n\n    return 1\n```\nAfter."
    assert blocks_of([reply]) == ["Look:", "```python\ndef f():\n\n    return 1\n```", "After."]


def test_a_code_block_ends_at_its_closing_fence_at_once() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("```\ncode\n") == []
    assert splitter.feed("```\n") == ["```\ncode\n```"]


def test_a_list_with_blank_lines_between_items_stays_one_block() -> None:
    reply = "1. one\n\n2. two\n\n   more about two\n\nNext paragraph."
    assert blocks_of(list(reply)) == ["1. one\n\n2. two\n\n   more about two", "Next paragraph."]


def test_a_long_line_without_newlines_stays_live_until_the_end() -> None:
    splitter = BlockSplitter()
    for i in range(500):
        assert splitter.feed(f"w{i} ") == []
    assert splitter.live_lines(3)[-1].endswith("w499 ")
    assert splitter.finish() == [" ".join(f"w{i}" for i in range(500)) + " "]


@given(
    st.lists(st.sampled_from(["a", "b ", "\n", "\n\n", "```", "- ", "1. ", "  ", "x\n"]), max_size=60),
    st.data(),
)
def test_blocks_never_lose_or_reorder_text(pieces: list[str], data: st.DataObject) -> None:
    """However the reply is chunked, the blocks hold every non-blank line, in order."""
    reply = "".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(reply)), max_size=10)))
    chunks = [reply[a:b] for a, b in zip([0, *cuts], [*cuts, len(reply)], strict=True)]
    lines = [line for block in blocks_of(chunks) for line in block.split("\n") if line.strip()]
    assert lines == [line for line in reply.split("\n") if line.strip()]
