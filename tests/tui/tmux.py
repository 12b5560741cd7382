"""``ink`` in tmux: a terminal that reflows its lines on a resize, as iTerm2, VTE, kitty and xterm.js do
(pyte, like xterm, cuts them instead). Its own server on a socket in the test's tmp dir; ``capture``
reads the pane with its whole history, as a user scrolling back would."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.tui.terminal import INK


class TmuxTerminal:
    def __init__(
        self, args: list[str], env: dict[str, str], cwd: Path, tmp: Path, rows: int, columns: int
    ) -> None:
        self._socket = str(tmp / "tmux.sock")
        command = shlex.join([*INK, *args])
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        self._tmux(
            "new-session",
            "-d",
            "-x",
            str(columns),
            "-y",
            str(rows),
            "-c",
            str(cwd),
            f"env -i {exports} {command}",
        )
        self._tmux("set-option", "-g", "window-size", "manual")
        self._tmux("set-option", "-g", "history-limit", "50000")

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self._socket, *args], capture_output=True, text=True, timeout=20)
        return done.stdout

    def send(self, text: str) -> None:
        self._tmux("send-keys", "-l", text)

    def enter(self) -> None:
        self._tmux("send-keys", "Enter")

    def resize(self, rows: int, columns: int) -> None:
        self._tmux("resize-window", "-x", str(columns), "-y", str(rows))

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def capture(self) -> list[str]:
        """The pane's history and screen, each line as shown (trailing spaces dropped)."""
        return [line.rstrip() for line in self._tmux("capture-pane", "-p", "-S", "-").split("\n")]

    def wait_for(self, predicate: Callable[[], object], what: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} not seen within {timeout} s; pane:\n{self.screen()}")
            time.sleep(0.05)

    def close(self) -> None:
        self._tmux("kill-server")
