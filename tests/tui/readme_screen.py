"""Capture the README's screens: a run with a queued steer, then the abort that hands it back.

    .venv/bin/python -m tests.tui.readme_screen

The real ``ink`` in a pseudo-terminal (pyte renders it) against the fake model server; prints the two
screens as text. The same steps are asserted by tests/tui/test_tui_keys.py.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Reply, text, tool_call
from tests.tui.terminal import InkTerminal

ROWS, COLUMNS = 18, 92


def capture() -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        work = Path(tmp) / "parser"  # HOME is the tmp dir: the status line shows ~/parser
        work.mkdir()
        command = "pytest -q tests/test_parser.py 2>&1 | tail -3; sleep 60"
        server.script(
            Reply(
                [
                    text("I'll run the parser tests first to see what fails."),
                    tool_call("bash", {"command": command}, id="c1"),
                ]
            )
        )
        env = ink_env(Path(tmp), TERM="xterm-256color", HOME=tmp)
        args = ["--base-url", server.openai_base_url, "--api-key", "k", "--model", "gpt-4.1"]
        ink = InkTerminal([*args, "--permission-mode", "yolo"], env, work, ROWS, COLUMNS)
        try:
            ink.wait_text("○ idle")
            ink.type_line("fix the failing parser test")
            ink.wait_text("running 1.")
            ink.type_line("also keep the error messages as they are")
            ink.wait_text("steer      also keep")
            ink.wait_text("running 2.")
            running = _trimmed(ink.lines())
            ink.send("\x03")
            ink.wait_text("⏹ interrupted")
            ink.wait_text("○ idle")
            ink.drain()
            aborted = _trimmed(ink.lines())
        finally:
            ink.close()
    return running, aborted


def _trimmed(lines: list[str]) -> str:
    while lines and not lines[-1]:
        lines = lines[:-1]
    return "\n".join(lines)


if __name__ == "__main__":
    first, second = capture()
    print(first, "\n\n---\n\n", second, sep="")
