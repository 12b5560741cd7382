"""A peer's words made safe for one line of a terminal.

A server's error body, its reason phrase or an error event are shown to the user as they came: raw,
``ESC ] 0 ; ... BEL`` retitles the terminal, ``ESC [ 2 J`` clears it, a line break starts a line that looks
like ink's own, and a right-to-left override reorders what follows. Every error line made from a peer's
bytes goes through ``printable``; ``ink.ai.errors.ProviderError`` applies it to every message it holds.
"""

from __future__ import annotations

import re
from functools import cache

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@cache  # compiled on first use: most runs never make an error line
def _unprintable() -> re.Pattern[str]:
    # C0 controls, DEL, C1 controls (U+009B is a one-character CSI), the line and paragraph separators,
    # and the bidirectional embeddings, overrides and isolates
    return re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with each control character written as its escape (``\\x1b``, ``\\n``, ``\\u202e``);
    text without any is returned as it is."""
    return _unprintable().sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
