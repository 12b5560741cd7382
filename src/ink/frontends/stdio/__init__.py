"""The stdio plumbing the headless frontends share (``rpc``: JSON lines, ``acp``: JSON-RPC 2.0 lines).

    lines     stdin as lines under a size limit, read by a thread (never blocks the event loop)
    writer    stdout claimed for the protocol; lines encoded at once, written in order by a thread
    numbers   ``load_json``: JSON read only as it can be written back (no NaN, no 1e400, no key twice)
    server    ``StdioServer``: read, dispatch, stop (end of input, SIGTERM, closed stdout), shut down

What a line means (framing of commands, error shapes, which events become which lines) stays in each
frontend; this package only moves bytes and ends the process cleanly.
"""

from __future__ import annotations

from ink.frontends.stdio.lines import LineSplitter, Overlong, read_lines
from ink.frontends.stdio.numbers import DuplicateKey, load_json
from ink.frontends.stdio.server import StdioServer
from ink.frontends.stdio.writer import LineWriter, claim_stdout, encode_line

__all__ = [
    "DuplicateKey",
    "LineSplitter",
    "LineWriter",
    "Overlong",
    "StdioServer",
    "claim_stdout",
    "encode_line",
    "load_json",
    "read_lines",
]
