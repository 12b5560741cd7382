"""The pure parts of the RPC frontend: splitting stdin into lines under a size limit (the shared stdio
plumbing, at the RPC's settings), checking one command line, encoding one output line. (The protocol as a
whole is tested through the real process in the other files.)"""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from ink.frontends.rpc.protocol import Command, Rejection, overlong_rejection, parse_line
from ink.frontends.stdio import LineSplitter, Overlong, encode_line
from ink.frontends.stdio.writer import text_line
from ink.run.events import TextDeltaEvent, event_to_json


def split(chunks: list[bytes], limit: int = 10) -> list[bytes | Overlong]:
    splitter = LineSplitter(limit)
    out: list[bytes | Overlong] = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    out.extend(splitter.finish())
    return out


def test_lines_are_split_at_newlines_whatever_the_chunks() -> None:
    assert split([b"ab\ncd", b"e\n", b"\nf"]) == [b"ab", b"cde", b"", b"f"]


def test_an_overlong_line_is_reported_once_and_the_next_lines_still_parse() -> None:
    out = split([b"ok\n0123456789", b"ABCDEF", b"GHI\nnext\n"], limit=10)
    assert out[0] == b"ok" and out[2] == b"next" and len(out) == 3
    assert isinstance(out[1], Overlong) and out[1].head.startswith(b"0123456789")


def test_an_overlong_line_inside_one_chunk() -> None:
    out = split([b"0123456789AB\nshort\n"], limit=10)
    assert isinstance(out[0], Overlong) and out[1] == b"short"


def test_a_line_of_exactly_the_limit_is_accepted() -> None:
    assert split([b"0123456789\n"], limit=10) == [b"0123456789"]


def test_an_unterminated_overlong_last_line_stays_discarded() -> None:
    out = split([b"0123456789ABC"], limit=10)
    assert len(out) == 1 and isinstance(out[0], Overlong)


@given(st.lists(st.binary(max_size=30), max_size=8), st.data())
def test_any_chunking_gives_the_same_lines(lines: list[bytes], data: st.DataObject) -> None:
    lines = [x.replace(b"\n", b"") for x in lines]
    stream = b"".join(x + b"\n" for x in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    expected = [x if len(x) <= 20 else "overlong" for x in lines]
    got = [x if isinstance(x, bytes) else "overlong" for x in split(chunks, limit=20)]
    assert got == expected


def test_a_valid_command_keeps_its_id_and_fields() -> None:
    parsed = parse_line(b'{"type":"edit_queued","id":7,"inputId":"in-1","text":"x"}')
    assert parsed == Command("edit_queued", {"inputId": "in-1", "text": "x"}, 7, True)


def test_a_command_without_an_id_is_valid() -> None:
    parsed = parse_line(b'{"type":"abort"}')
    assert isinstance(parsed, Command) and parsed.has_id is False


def test_an_overlong_lines_id_and_command_are_read_from_its_head() -> None:
    rejection = overlong_rejection(b'{"type": "prompt", "id": "x\\"1", "text": "aaaa', 1 << 20)
    assert (rejection.command, rejection.id, rejection.has_id) == ("prompt", 'x"1', True)
    assert overlong_rejection(b'{"id": 12, "type": "steer", "te', 10).id == 12
    unknown = overlong_rejection(b'{"text": "aaa', 10)
    assert isinstance(unknown, Rejection) and unknown.has_id is False


def test_lines_with_lone_surrogates_round_trip_as_json() -> None:
    text = json.loads('"a\\ud800b"')
    data = encode_line({"type": "text_delta", "text": text})
    assert data.decode("utf-8").endswith("\n")  # valid UTF-8
    assert json.loads(data)["text"] == text


@given(st.text())
@example('a\ud800"\n\x00\u00e9\\')
def test_a_streamed_chunk_s_line_is_the_event_s_json_byte_for_byte(text: str) -> None:
    """The RPC writes a text delta without building its object (one line per streamed chunk, R1): the
    same bytes as the event's JSON form, lone surrogates, quotes and control characters included."""
    assert text_line(text, "text_delta") == encode_line(event_to_json(TextDeltaEvent(text)))


def test_a_non_finite_number_is_written_as_null() -> None:
    assert json.loads(encode_line({"x": float("nan"), "y": [float("inf")]})) == {"x": None, "y": [None]}


def test_json_nested_too_deep_for_the_parser_is_a_rejection_not_a_crash() -> None:
    parsed = parse_line(b"[" * 100_000)
    assert isinstance(parsed, Rejection) and "not valid JSON" in parsed.reason
