"""Server-sent events from the bytes of a streamed response, in one pass per network chunk.

The event stream format (WHATWG HTML, "Parsing an event stream"): UTF-8 lines ended by CRLF, LF or CR;
``field: value`` lines, ``:`` comments, and a blank line that dispatches the event gathered so far. Data
lines join with ``\\n``; a missing ``event`` field means ``message``. Like httpx-sse, which ink used
before, an event is dispatched when anything was set since the last one (event, data, retry) or an id was
ever seen, and a last event left without its blank line when the stream ends is dropped.

A streamed reply arrives as thousands of small network chunks, usually one whole event each; the parser
works on the chunk's bytes (only whole lines are decoded, so a character split between two chunks is
never cut) instead of climbing a text decoder, a line decoder and an event decoder per chunk.
"""

from __future__ import annotations

from typing import NamedTuple

MAX_LINE_BYTES = 64 * 1024 * 1024  # one line of the stream: far above any reply event, below a runaway
MAX_EVENT_CHARS = MAX_LINE_BYTES  # the data lines of one event, gathered until its blank line


class LineTooLong(ValueError):
    """A line of the stream grew past ``MAX_LINE_BYTES`` without ending, or an event's data lines past
    ``MAX_EVENT_CHARS`` without the blank line that ends it: a broken or hostile server."""


class ServerSentEvent(NamedTuple):
    event: str
    data: str


class SseParser:
    """Feed it the response's chunks in order; each ``feed`` returns the events those bytes completed."""

    def __init__(self) -> None:
        self._tail: list[bytes] = []  # an unfinished line's pieces (its last may end in a CR whose LF
        self._tail_bytes = 0  # may come next); joined once, when the line ends: long lines stay linear
        self._event = ""
        self._data: list[str] = []
        self._data_chars = 0
        self._retry = False
        self._last_id = ""  # kept across events, as the format says

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Raises ``LineTooLong``."""
        if self._tail:
            if b"\n" not in chunk and b"\r" not in chunk and not self._tail[-1].endswith(b"\r"):
                self._hold(chunk)  # the same line goes on
                return []
            chunk = b"".join(self._tail) + chunk
            self._tail, self._tail_bytes = [], 0
        elif (  # the usual chunk: one whole ``data: ...`` event, and nothing gathered before it
            chunk[:6] == b"data: "
            and chunk.find(b"\n") == len(chunk) - 2
            and chunk[-1:] == b"\n"
            and b"\r" not in chunk
            and not (self._data or self._event or self._retry)
        ):
            return [ServerSentEvent("message", chunk[6:-2].decode("utf-8", "replace"))]
        if b"\r" in chunk:
            held = chunk.endswith(b"\r")  # its LF may come in the next chunk: one line end, not two
            if held:
                chunk = chunk[:-1]
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            end = chunk.rfind(b"\n")
            self._hold(chunk[end + 1 :] + b"\r" if held else chunk[end + 1 :])
        else:
            end = chunk.rfind(b"\n")
            self._hold(chunk[end + 1 :])
        if end < 0:
            return []
        return self._lines(chunk[:end].decode("utf-8", "replace").split("\n"))

    def close(self) -> list[ServerSentEvent]:
        """The stream ended: a held CR still ends its line (which may be the blank line of an event); an
        unfinished line cannot complete an event."""
        tail = b"".join(self._tail)
        self._tail, self._tail_bytes = [], 0
        if not tail.endswith(b"\r"):
            return []
        return self._lines([tail[:-1].decode("utf-8", "replace")])

    def _hold(self, piece: bytes) -> None:
        if not piece:
            return
        self._tail.append(piece)
        self._tail_bytes += len(piece)
        if self._tail_bytes > MAX_LINE_BYTES:
            raise LineTooLong(
                f"a line of the event stream is over {MAX_LINE_BYTES:,} bytes and has not ended"
            )

    def _lines(self, lines: list[str]) -> list[ServerSentEvent]:
        events: list[ServerSentEvent] = []
        for line in lines:
            if not line:
                if self._data or self._event or self._last_id or self._retry:
                    events.append(ServerSentEvent(self._event or "message", "\n".join(self._data)))
                    self._event, self._data, self._data_chars, self._retry = "", [], 0, False
                continue
            name, _, value = line.partition(":")
            if not name:
                continue  # a comment (keep-alive)
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
                self._data_chars += len(value) + 1
                if self._data_chars > MAX_EVENT_CHARS:
                    raise LineTooLong(
                        f"an event of the event stream is over {MAX_EVENT_CHARS:,} characters and has "
                        "not ended"
                    )
            elif name == "event":
                self._event = value
            elif name == "id":
                if "\0" not in value:
                    self._last_id = value
            elif name == "retry":
                self._retry = self._retry or _is_int(value)
        return events


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
