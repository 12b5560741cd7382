"""What was typed while ink was starting, before its UI took the terminal.

Until then the terminal is in its cooked mode: it echoes the keys and turns Enter into a line feed, and
a line not yet ended waits in its line editor. Read as the UI reads keys, that line feed would be Ctrl+J,
a new line, and the prompt would sit unsent. So the UI takes what is pending first: each ended line is
an input the user sent (Enter), the unended rest goes into the editor.
"""

from __future__ import annotations

import os
import re
import select
import termios

from ink.frontends.tui.blocks import sanitize

MAX_BYTES = 1 << 20
_SEQUENCE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?")  # arrows and the like typed early


def read_typed_ahead(fd: int) -> str:
    """The bytes waiting on the terminal ``fd`` (a line still being edited included), without
    waiting; "" when ``fd`` is not a terminal. The terminal's modes are left as they were."""
    try:
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):
        return ""
    quiet = list(saved)
    quiet[3] = saved[3] & ~(termios.ICANON | termios.ECHO)  # the edited line becomes readable
    quiet[6] = list(saved[6])
    quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 0, 0
    chunks: list[bytes] = []
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        while sum(map(len, chunks)) < MAX_BYTES and select.select([fd], [], [], 0)[0]:
            data = os.read(fd, 65536)
            if not data:
                break
            chunks.append(data)
    except (termios.error, OSError):
        pass
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except (termios.error, OSError):
            pass
    return b"".join(chunks).decode("utf-8", "replace")


def split_typed(text: str) -> tuple[list[str], str]:
    """The lines ended by Enter, and the unended rest; escape sequences and control keys dropped."""
    lines = _SEQUENCE.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    ended, rest = lines[:-1], lines[-1]
    return [sanitize(line) for line in ended if line.strip()], sanitize(rest)
