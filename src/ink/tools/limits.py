"""Output caps shared by every tool, and the helpers that cut text with an honest notice.

A tool result goes into the model's context: an unbounded one can crowd out everything else, so every
tool caps what it returns and says what it cut and how to see more.
"""

from __future__ import annotations

MAX_OUTPUT_BYTES = 50_000
"""Largest text a tool returns (UTF-8 bytes, notices excluded)."""
MAX_OUTPUT_LINES = 2000
"""Most lines a tool returns; also read's default page size."""
MAX_LINE_CHARS = 2000
"""Longest single line read shows; the rest of the line is replaced by a notice."""
MAX_LIST_ENTRIES = 1000
"""Most paths glob and ls list."""
MAX_ECHO_CHARS = 500
"""Longest piece of the caller's input (a path, a pattern) quoted back in a message: a 20 MB path in a
failing call must not become a 20 MB error. Longer than any real path (PATH_MAX is 4096 bytes, but
paths that long are never typed), short enough to stay a line."""


def bounded(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and end around a notice."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    return f"{head}…[{len(text) - len(head) - len(tail)} characters cut]…{tail}"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "replace"))


def cap_head(
    text: str, max_bytes: int = MAX_OUTPUT_BYTES, max_lines: int = MAX_OUTPUT_LINES
) -> tuple[str, int]:
    """Keep the first lines of ``text`` that fit both caps. Returns (kept text, number of lines cut).

    Only whole lines are kept, except that a first line longer than ``max_bytes`` is cut inside.
    """
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    size = 0
    for line in lines[:max_lines]:
        size += utf8_len(line)
        if size > max_bytes:
            break
        kept.append(line)
    if not kept and lines:
        first = lines[0].encode("utf-8", "replace")[:max_bytes].decode("utf-8", "ignore")
        return first, len(lines)
    return "".join(kept), len(lines) - len(kept)


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {nouns or noun + 's'}"
