"""A bounded buffer for command output that keeps the head and the tail and counts what it dropped.

The start of an output usually says what ran, the end says how it finished; the middle is what a cap
sacrifices. Memory stays bounded however much a command prints.
"""

from __future__ import annotations

from ink.ai.unicode import decode_bytes
from ink.tools.limits import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, plural


class HeadTailBuffer:
    """``keep_tail=False`` keeps only the head (for search results, where the first hits matter)."""

    def __init__(
        self, max_bytes: int = MAX_OUTPUT_BYTES, max_lines: int = MAX_OUTPUT_LINES, keep_tail: bool = True
    ) -> None:
        self._head_limit = max_bytes // 2 if keep_tail else max_bytes
        self._tail_limit = max_bytes - self._head_limit
        self._keep_tail = keep_tail
        self._max_lines = max_lines
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0
        self.total_lines = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.total_lines += data.count(b"\n")
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data and self._keep_tail:
            self._tail += data
            if len(self._tail) > 2 * self._tail_limit:  # trim in batches, not on every chunk
                del self._tail[: -self._tail_limit]

    def render(self) -> str:
        """The kept text (UTF-8, invalid bytes replaced, CRLF as LF) with a notice where it was cut."""
        if not self._keep_tail:
            return self._render_head()
        head, tail = bytes(self._head), bytes(self._tail[-self._tail_limit :])
        half = self._max_lines // 2
        if self.total_bytes > len(head) + len(tail):
            head, tail = _trim_to_lines(head, tail)
            head_lines, tail_lines = _split(head)[:half], _split(tail)
            tail_lines = tail_lines[-half:] if len(tail_lines) > half else tail_lines
        else:
            lines = _split(head + tail)
            if len(lines) <= self._max_lines:
                return _decode(head + tail)
            head_lines, tail_lines = lines[:half], lines[-half:]
        kept_head, kept_tail = b"".join(head_lines), b"".join(tail_lines)
        dropped_bytes = self.total_bytes - len(kept_head) - len(kept_tail)
        dropped_lines = self.total_lines - kept_head.count(b"\n") - kept_tail.count(b"\n")
        notice = (
            f"[... {plural(dropped_lines, 'line')} ({plural(dropped_bytes, 'byte')}) cut from the middle "
            f"of the output; showing the first {len(head_lines)} and the last {len(tail_lines)} lines ...]\n"
        )
        separator = "\n" if kept_head and not kept_head.endswith(b"\n") else ""
        return _decode(kept_head) + separator + notice + _decode(kept_tail)

    def _render_head(self) -> str:
        lines = _split(bytes(self._head))
        if len(lines) > 1 and not lines[-1].endswith(b"\n"):
            lines = lines[:-1]  # the last one may be cut inside
        lines = lines[: self._max_lines]
        kept = b"".join(lines)
        if len(kept) == self.total_bytes:
            return _decode(kept)
        dropped = self.total_lines - kept.count(b"\n")
        return _decode(kept) + (
            f"[... {plural(dropped, 'more line')} ({plural(self.total_bytes - len(kept), 'byte')}) "
            "not shown ...]\n"
        )


def _trim_to_lines(head: bytes, tail: bytes) -> tuple[bytes, bytes]:
    end = head.rfind(b"\n")
    if end >= len(head) // 2:
        head = head[: end + 1]
    start = tail.find(b"\n")
    if 0 <= start < len(tail) // 2:
        tail = tail[start + 1 :]
    return head, tail


def _split(data: bytes) -> list[bytes]:
    """Lines ending in LF (a lone CR, as progress bars print, does not end a line)."""
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _decode(data: bytes) -> str:
    return decode_bytes(data).replace("\r\n", "\n")
