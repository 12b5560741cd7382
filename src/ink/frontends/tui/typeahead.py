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
import time

from ink.frontends.tui.blocks import sanitize

MAX_BYTES = 1 << 20
ANSWER_SECONDS = 1.0  # bounds the wait for a terminal that answers no query at all
ASK_ATTRIBUTES = "\x1b[c"  # primary device attributes: every terminal answers it
ATTRIBUTES = re.compile(r"\x1b\[\?[0-9;]*c")
ANSWERS = re.compile(r"\x1b\[\?[0-9;]*c|\x1b\][0-9]+;[^\x07\x1b]*(?:\x07|\x1b\\)")  # and OSC answers
_SEQUENCE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?")  # arrows and the like typed early


def read_typed_ahead(fd: int, out: int, ask: str = "") -> tuple[str, str]:
    """The keys waiting on the terminal ``fd`` (a line still being edited included), without waiting,
    and the terminal's answers to ``ask`` (written to ``out``): a device-attributes query goes after it,
    which every terminal answers, in order, so once that answer is in, every answer is (waited for at
    most ``ANSWER_SECONDS``). Answers never reach the editor as keys. "" and "" when ``fd`` is not a
    terminal; the terminal's modes are left as they were."""
    try:
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):
        return "", ""
    quiet = list(saved)
    quiet[3] = saved[3] & ~(termios.ICANON | termios.ECHO)  # the edited line becomes readable
    quiet[6] = list(saved[6])
    quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 0, 0
    data = b""
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        if ask:
            os.write(out, (ask + ASK_ATTRIBUTES).encode())
        data = _read(fd, ANSWER_SECONDS if ask else 0.0)
    except (termios.error, OSError):
        pass
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except (termios.error, OSError):
            pass
    text = data.decode("utf-8", "replace")
    answers = "".join(found.group(0) for found in ANSWERS.finditer(text))
    return ANSWERS.sub("", text), answers


def _read(fd: int, wait: float) -> bytes:
    """What ``fd`` holds now, and what comes within ``wait`` seconds until the attributes answer."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + wait
    while sum(map(len, chunks)) < MAX_BYTES:
        answered = ATTRIBUTES.search(b"".join(chunks).decode("utf-8", "replace"))
        left = 0.0 if answered else max(0.0, deadline - time.monotonic())
        if not select.select([fd], [], [], left)[0]:
            break
        data = os.read(fd, 65536)
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def split_typed(text: str) -> tuple[list[str], str]:
    """The lines ended by Enter, and the unended rest; escape sequences and control keys dropped."""
    lines = _SEQUENCE.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    ended, rest = lines[:-1], lines[-1]
    return [sanitize(line) for line in ended if line.strip()], sanitize(rest)
