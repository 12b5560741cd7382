"""The server-sent events parser (ink.ai.sse): the event stream format of the WHATWG HTML standard,
however the bytes are cut into network chunks (a CRLF split between two chunks is one line end, a
character split between two chunks is not damaged)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink.ai import sse
from ink.ai.sse import ServerSentEvent, SseParser


def parse(*chunks: bytes) -> list[ServerSentEvent]:
    parser = SseParser()
    events = [e for chunk in chunks for e in parser.feed(chunk)]
    return events + parser.close()


def test_data_lines_join_and_event_names_default_to_message() -> None:
    stream = b'data: {"a": 1}\n\nevent: ping\ndata: x\ndata:  y\n\n: a comment\ndata\n\n'
    assert parse(stream) == [
        ServerSentEvent("message", '{"a": 1}'),
        ServerSentEvent("ping", "x\n y"),  # one space after the colon is dropped, not two
        ServerSentEvent("message", ""),  # a field name alone is the field with an empty value
    ]


def test_every_line_end_counts_and_a_comment_alone_dispatches_nothing() -> None:
    assert parse(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n: keep-alive\n\n") == [
        ServerSentEvent("message", "a"),
        ServerSentEvent("message", "b"),
        ServerSentEvent("message", "c"),
    ]


def test_an_event_cut_off_by_the_end_of_the_stream_is_dropped() -> None:
    assert parse(b"data: whole\n\ndata: cut") == [ServerSentEvent("message", "whole")]
    assert parse(b"data: whole\n\ndata: cut\n") == [ServerSentEvent("message", "whole")]


def test_a_final_cr_ends_its_line_at_the_end_of_the_stream() -> None:
    assert parse(b"data: x\r", b"\r") == [ServerSentEvent("message", "x")]


def test_an_id_once_seen_makes_every_blank_line_an_event_as_before() -> None:
    """The behaviour of httpx-sse, which ink used before: kept so that no stream reads differently."""
    assert parse(b"id: 7\ndata: a\n\n\n") == [ServerSentEvent("message", "a"), ServerSentEvent("message", "")]
    assert parse(b"retry: soon\n\nretry: 10\n\n") == [ServerSentEvent("message", "")]


def test_fields_gathered_in_earlier_chunks_belong_to_the_next_event() -> None:
    assert parse(b"event: delta\n", b"data: x\n\n") == [ServerSentEvent("delta", "x")]
    assert parse(b"data: a\n", b"data: b\n\n") == [ServerSentEvent("message", "a\nb")]
    assert parse(b"retry: 5\n", b"data: x\n\n", b"\n") == [ServerSentEvent("message", "x")]


def test_undecodable_bytes_become_replacement_characters() -> None:
    assert parse(b"data: \xff\xfe ok\n\n") == [ServerSentEvent("message", "\ufffd\ufffd ok")]


STREAM = (
    'event: message_start\r\ndata: {"type": "message_start"}\r\n\r\n'
    ": ping\r\n\r\n"
    "data: caf\u00e9 \u2603 \U0001f600\n\n"
    "id: 1\rdata: one\rdata: two\r\r"
    "data: last\n\n"
).encode()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_cut_into_chunks_reads_the_same_as_the_whole(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[a:b] for a, b in itertools.pairwise(points) if b > a]
    assert (
        parse(*chunks)
        == parse(STREAM)
        == [
            ServerSentEvent("message_start", '{"type": "message_start"}'),
            ServerSentEvent("message", "caf\u00e9 \u2603 \U0001f600"),
            ServerSentEvent("message", "one\ntwo"),
            ServerSentEvent("message", "last"),
        ]
    )


def test_a_line_cut_into_many_chunks_is_one_line() -> None:
    chunks = [b"data: "] + [b"x" * 1000] * 5000 + [b"\n", b"\n"]
    assert parse(*chunks) == [ServerSentEvent("message", "x" * 5_000_000)]


def test_a_line_that_never_ends_is_refused_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken or hostile server: the parser holds at most ``MAX_LINE_BYTES`` of one line."""
    monkeypatch.setattr(sse, "MAX_LINE_BYTES", 10_000)
    parser = SseParser()
    assert parser.feed(b"data: whole\n\ndata: ") == [ServerSentEvent("message", "whole")]
    with pytest.raises(sse.LineTooLong):
        for _ in range(20):
            parser.feed(b"y" * 1000)


def test_an_event_whose_data_lines_never_end_is_refused_past_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broken or hostile server sends ``data:`` lines and never the blank line that ends the event: each
    line is short, but the parser holds at most ``MAX_EVENT_CHARS`` of the event's data, and an event
    that ends in time is still whole."""
    monkeypatch.setattr(sse, "MAX_EVENT_CHARS", 10_000)
    parser = SseParser()
    assert parser.feed(b"data: x\n" * 1000 + b"\n") == [ServerSentEvent("message", "\n".join(["x"] * 1000))]
    with pytest.raises(sse.LineTooLong, match="an event of the event stream is over 10,000 characters"):
        for _ in range(200):
            parser.feed(b"data: " + b"y" * 94 + b"\n")
