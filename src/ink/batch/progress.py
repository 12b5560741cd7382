"""What a batch shows while it runs: a line per finished task, and on a terminal one live status line
(done / running / failed, cost so far, an ETA) redrawn below them. Not a terminal: the plain lines only."""

from __future__ import annotations

import time
from typing import Any, TextIO

from ink.batch.results import cost_of, status_of

_MARK = {"pass": "✓", "done": "✓", "fail": "✗", "error": "!", "timeout": "⏱", "cancelled": "⏹"}


class Progress:
    def __init__(self, total: int, jobs: int, stream: TextIO, *, live: bool, already_done: int = 0) -> None:
        self.total, self.jobs, self.stream, self.live = total, jobs, stream, live
        self.done, self.running, self.failed, self.cost = already_done, 0, 0, 0.0
        self.started_at = time.monotonic()
        self._finished_here = 0

    def started(self) -> None:
        self.running += 1
        self._redraw()

    def finished(self, line: dict[str, Any]) -> None:
        self.running -= 1
        self.done += 1
        self._finished_here += 1
        status = status_of(line)
        self.failed += status in ("fail", "error", "timeout")
        self.cost += cost_of(line)
        seconds = (line.get("durationMs") or 0) / 1000
        error = (line.get("error") or "").splitlines()
        detail = f" · {error[0][:100]}" if error else ""
        self._print(
            f"{_MARK.get(status, '·')} {line['id']} {status} · {seconds:.1f}s · ${cost_of(line):.4f}{detail}"
        )

    def note(self, text: str) -> None:
        self._print(f"ink batch: {text}")

    def tick(self) -> None:
        self._redraw()

    def close(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def status_line(self) -> str:
        elapsed = time.monotonic() - self.started_at
        left = self.total - self.done
        eta = ""
        if self._finished_here and left:
            per_task = elapsed / self._finished_here  # already parallel: finished per wall second
            eta = f" · ETA {_clock(per_task * left)}"
        return (
            f"{self.done}/{self.total} done · {self.running} running · {self.failed} failed"
            f" · ${self.cost:.4f} · {_clock(elapsed)}{eta}"
        )

    def _print(self, text: str) -> None:
        prefix = "\r\x1b[K" if self.live else ""
        self.stream.write(f"{prefix}{text}\n")
        self._redraw()

    def _redraw(self) -> None:
        if self.live:
            self.stream.write(f"\r\x1b[K{self.status_line()}")
        self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
