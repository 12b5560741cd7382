"""What the TUI prints above its input: finished blocks, each printed once into the scrollback.

A ``Block`` is plain data (kind, text, tone); ``paint.Painter`` turns it into terminal text. Keeping the
two apart lets the renderer be tested without a terminal and without rich.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

import msgspec

Kind: TypeAlias = Literal[
    "markdown",  # a finished block of the model's reply
    "thinking",  # the model's reasoning, dimmed
    "user",  # an input that entered the history (R31)
    "tool",  # one line: a tool call that ended
    "output",  # a tool's or a shell command's output, folded
    "listing",  # TERM<TAB>WHAT lines, as two columns (/help, /agents, ...)
    "diff",  # an edit's unified diff, coloured
    "bang",  # ``$ command`` of a bang line
    "info",  # dim notes: a retry, a permission answer, command output
    "warning",
    "error",
    "interrupted",  # an abort: never an error (R18)
]
Tone: TypeAlias = Literal["", "ok", "error", "interrupted", "dim"]


class Block(msgspec.Struct, frozen=True):
    kind: Kind
    text: str
    tone: Tone = ""


_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def sanitize(text: str) -> str:
    """Text safe to print: no escape sequences or control characters from a model or a command (they
    could move the cursor or restyle the terminal); tabs become spaces, ``\\r\\n`` a newline."""
    if text.isprintable():
        return text
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\t", "    "))
    return _CONTROL.sub("", text)


def shown_exactly(text: str) -> str:
    """``text`` as a question shows what it asks to approve: each character that would not show as itself
    written as its escape (``\\x1b``, ``\\u202e``): controls and the ESC of an escape sequence (which
    ``sanitize`` drops), a bidi override or isolate that reorders what follows on a terminal with bidi
    (VTE, Konsole), zero-width and other invisible characters, a no-break space that bash reads as part
    of a word. What is seen is what runs (R38); line breaks stay, tabs become spaces."""
    if text.isprintable():
        return text
    return "".join(_exact(char) for char in text)


def _exact(char: str) -> str:
    if char.isprintable() or char == "\n":
        return char
    if char == "\t":
        return "    "
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def fold(text: str, keep: int) -> tuple[str, int]:
    """The first ``keep`` lines of ``text`` and how many lines were left out."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= keep:
        return "\n".join(lines), 0
    return "\n".join(lines[:keep]), len(lines) - keep


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
