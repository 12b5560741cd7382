"""A process that records a scripted run into a session and waits to be killed (test_crash.py).

    python -m tests.store.crash_writer SESSION_DIR CWD

After each history change it prints ``after N`` and waits for a line on stdin before going on, so the
test can kill -9 it at a chosen moment, by order rather than by timing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from msgspec.structs import replace

from ink.ai.messages import Message, ToolResult, UserMessage
from ink.store import SessionStore
from tests.store.helpers import answer, calls, result

SCRIPT: list[Message] = [  # fixed timestamps: the test compares with what the child wrote
    UserMessage("read a, b and c", timestamp=1.0),
    replace(calls("a", "b", "c"), timestamp=2.0),
    result("a", "alpha"),
    result("b", "beta"),
    ToolResult("c", "read", "gamma"),
    replace(answer("All read."), timestamp=3.0),
]


def main() -> None:
    session_dir, cwd = Path(sys.argv[1]), Path(sys.argv[2])
    handle = SessionStore(session_dir).create(cwd, "fake-model", "openai")
    for n, message in enumerate(SCRIPT, start=1):
        handle.history.append(message)
        print(f"after {n}", flush=True)
        if not sys.stdin.readline():
            break
    handle.close()


if __name__ == "__main__":
    main()
