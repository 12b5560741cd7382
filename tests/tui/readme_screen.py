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


def capture_live() -> str:
    """A prompt with an @-mention, then a command whose output shows live under it."""
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        work = Path(tmp) / "parser"
        (work / "tests").mkdir(parents=True)
        (work / "tests" / "test_parser.py").write_text("def test_nested():\n    assert parse('[[1]]')\n")
        names = " ".join(f"test_parser.py::test_{n}" for n in ("empty", "nested", "unicode", "escapes"))
        command = f'for t in {names}; do echo "PASSED $t"; sleep 1; done; sleep 60'
        server.script(
            Reply([text("Running the parser tests."), tool_call("bash", {"command": command}, id="c1")])
        )
        env = ink_env(Path(tmp), TERM="xterm-256color", HOME=tmp)
        args = ["--base-url", server.openai_base_url, "--api-key", "k", "--model", "gpt-4.1"]
        ink = InkTerminal([*args, "--permission-mode", "yolo"], env, work, ROWS, COLUMNS)
        try:
            ink.wait_text("○ idle")
            ink.send("why does @tests/test_par")
            ink.wait_text("@tests/test_par")
            ink.send("\t")
            ink.wait_text("@tests/test_parser.py")
            ink.type_line("fail?")  # the pick put a space after the path
            ink.wait_text("│ PASSED test_parser.py::test_unicode")
            return _trimmed(ink.lines())
        finally:
            ink.close()


def _trimmed(lines: list[str]) -> str:
    while lines and not lines[-1]:
        lines = lines[:-1]
    return "\n".join(lines)


if __name__ == "__main__":
    first, second = capture()
    print(first, "\n\n---\n\n", second, "\n\n---\n\n", capture_live(), sep="")
