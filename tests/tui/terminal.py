"""``ink`` in a real pseudo-terminal, its output rendered by a terminal emulator (pyte).

``InkTerminal`` spawns ``python -m ink`` with pexpect, feeds everything it writes into a pyte screen
(which answers cursor-position requests as a real terminal does) and keeps the raw bytes too. Tests
wait for what the screen shows (``wait_for``), never for time to pass.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte

INK = [sys.executable, "-m", "ink"]
ROWS, COLUMNS = 30, 100
STATUS_MARKS = ("○ ", "● ", "◌ ", "⏸ ")


class _Screen(pyte.HistoryScreen):
    """A screen that keeps what scrolls off the top, and answers the program's queries."""

    def __init__(self, columns: int, rows: int, reply: Callable[[str], object]) -> None:
        super().__init__(columns, rows, history=200_000, ratio=0.5)
        self._reply = reply

    def write_process_input(self, data: str) -> None:
        self._reply(data)


class InkTerminal:
    """``shell``: ink is started by an interactive bash in the terminal (job control: Ctrl+Z, ``fg``)."""

    def __init__(
        self,
        args: list[str],
        env: dict[str, str],
        cwd: Path,
        rows: int = ROWS,
        columns: int = COLUMNS,
        *,
        shell: bool = False,
        background: str | None = None,
    ) -> None:
        """``background``: ``rrrr/gggg/bbbb``, the answer to an OSC 11 query (as xterm gives it); None:
        no answer, as pyte (like the Linux console) gives none."""
        self.rows, self.columns = rows, columns
        self._background = background
        self.raw = bytearray()
        if shell:
            self.child = pexpect.spawn(
                "bash", ["--norc", "--noprofile", "-i"], env=env | {"PS1": "$ "}, cwd=str(cwd),
                dimensions=(rows, columns), echo=False,
            )  # fmt: skip
        else:
            self.child = pexpect.spawn(
                INK[0], [*INK[1:], *args], env=env, cwd=str(cwd), dimensions=(rows, columns), echo=False
            )
        self.child.delaybeforesend = None  # pexpect sleeps 50 ms before every send by default
        self.screen = _Screen(columns, rows, lambda data: self.child.send(data.encode()))
        self.stream = pyte.ByteStream(self.screen)
        self.arrivals: list[tuple[float, int]] = []  # (time, len(raw) after the read), for latency checks
        if shell:
            self.wait_text("$")
            self.send(shlex.join([*INK, *args]) + "\r")

    # -- reading --------------------------------------------------------------------------------------

    def pump(self, timeout: float = 0.05) -> bool:
        """Read what the program wrote (waiting at most ``timeout``); False when nothing came."""
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return False
        except pexpect.EOF:
            return False
        self.raw += data
        self.arrivals.append((time.monotonic(), len(self.raw)))
        if self._background is not None and b"\x1b]11;?" in data:  # answered before pyte answers DA
            self.child.send(f"\x1b]11;rgb:{self._background}\x1b\\".encode())
        self.stream.feed(data)
        return True

    def wait_for(self, predicate: Callable[[], object], timeout: float = 15.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what or predicate} not seen within {timeout} s; screen:\n{self.text()}")
            if not self.pump() and not self.child.isalive():
                self.drain()
                if predicate():
                    return
                raise AssertionError(
                    f"ink exited ({self.child.exitstatus}) before {what}; screen:\n{self.text()}"
                )

    def wait_text(self, text: str, timeout: float = 15.0) -> None:
        self.wait_for(lambda: text in self.text(), timeout, repr(text))

    def wait_printed(self, text: str, *, whole_line: bool = True, timeout: float = 15.0) -> None:
        """Wait until ``text`` is a line of the scrollback (``whole_line=False``: anywhere in it). ink
        prints finished blocks on its paint tick, while the live area is redrawn on any change: text
        seen on the screen does not mean that the blocks before it are printed yet."""
        if whole_line:
            self.wait_for(lambda: text in self.scrollback(), timeout, f"the line {text!r}")
        else:
            self.wait_for(lambda: text in "\n".join(self.scrollback()), timeout, repr(text))

    def wait_live_area_empty(self, timeout: float = 15.0) -> None:
        """Wait until the live area above the rule shows nothing: every block is in the scrollback
        (an idle status line can be drawn before the paint loop's tick prints the last block)."""

        def empty() -> bool:
            lines = self.lines()
            rules = [i for i, line in enumerate(lines) if line and set(line) == {"─"}]
            return bool(rules) and rules[-1] > 0 and not lines[rules[-1] - 1].strip()

        self.wait_for(empty, timeout, "the live area empty")

    def drain(self) -> None:
        while self.pump(0.01):
            pass

    # -- what is shown --------------------------------------------------------------------------------

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines())

    def scrollback(self) -> list[str]:
        """Every line the terminal holds: what scrolled off the top, then the screen."""
        top = [
            "".join(line[x].data for x in range(self.columns)).rstrip() for line in self.screen.history.top
        ]
        return top + self.lines()

    def editor_rows(self) -> list[str]:
        """The editor's rows, prompt mark and indent removed: the rows between the rule above the
        editor and the status line below it."""
        lines = self.lines()
        rules = [i for i, line in enumerate(lines) if line and set(line) == {"─"}]
        if not rules:
            return []
        rows = []
        for line in lines[rules[-1] + 1 :]:
            if line[:2] in STATUS_MARKS:
                break
            rows.append(line[2:])
        return rows

    def input_line(self) -> str:
        """The editor's first row as shown, prompt mark included (``"›"`` when empty)."""
        rows = self.editor_rows()
        return ("› " + rows[0]).rstrip() if rows else ""

    def editor_text(self) -> str:
        return "\n".join(self.editor_rows()).rstrip()

    # -- typing ---------------------------------------------------------------------------------------

    def resize(self, rows: int, columns: int) -> None:
        """Resize the terminal as a window manager does: the pty's size changes and ink gets SIGWINCH;
        the emulator's screen takes the new size too."""
        self.rows, self.columns = rows, columns
        self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def send(self, data: str | bytes) -> None:
        self.child.send(data if isinstance(data, bytes) else data.encode())

    def answer(self, key: str) -> None:
        """Answer the permission question shown with ``key`` (y, a or n) the deliberate way (R38): once
        a hand-over counts, Ctrl+O hands the question the keyboard (the editor may hold text), then the
        key."""
        self.wait_for(
            lambda: "tab answer it" in self.text() or "ctrl+o answer it" in self.text(),
            what="a hand-over that counts",
        )
        self.send("\x0f")
        self.wait_text("y/a/n answer")
        self.send(key)

    def type_line(self, text: str) -> None:
        """Type ``text`` and press Enter."""
        self.send(text)
        self.wait_for(lambda: text.split("\n")[-1][-20:] in self.text(), what=f"echo of {text!r}")
        self.send("\r")

    # -- the end --------------------------------------------------------------------------------------

    def wait_exit(self, timeout: float = 60.0) -> int:
        """ink's exit status. The bound tells an exit from a hang, not a fast machine from a slow one: on
        a loaded machine an exit that ends a run (its end snapshot, the parts closed) took over 20 s."""
        deadline = time.monotonic() + timeout
        while self.child.isalive():
            if time.monotonic() > deadline:
                raise TimeoutError(f"ink did not exit within {timeout} s; screen:\n{self.text()}")
            self.pump(0.05)
        self.drain()
        self.child.close()
        status = self.child.exitstatus
        return status if status is not None else 128 + (self.child.signalstatus or 0)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close(force=True)


def char_at(terminal: InkTerminal, text: str) -> pyte.screens.Char:
    """The styled character where ``text`` first starts on the screen (its colour, bold, italics)."""
    for y, line in enumerate(terminal.lines()):
        x = line.find(text)
        if x >= 0:
            return terminal.screen.buffer[y][x]
    raise AssertionError(f"{text!r} is not on the screen:\n{terminal.text()}")
