"""``DIR/results.jsonl``: one line per finished task, written as it ends; what ``--resume`` skips.

A line is final unless the batch was cancelled while the task ran (``cancelled: true``): such a task is run
again by ``--resume``. Each task's session file is kept as ``DIR/sessions/ID.jsonl`` and named in its line.
A torn last line (the batch was killed while writing it) is ignored on reading.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"


class ResultsFile:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / RESULTS
        self.sessions = out / "sessions"

    def exists(self) -> bool:
        return self.path.exists() and self.path.stat().st_size > 0

    def latest(self) -> dict[str, dict[str, Any]]:
        """The last complete line of each task id."""
        latest: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return latest
        for raw in self.path.read_bytes().splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue  # torn by a kill while it was written
            if isinstance(line, dict) and isinstance(line.get("id"), str):
                latest[line["id"]] = line
        return latest

    def done_ids(self) -> set[str]:
        return {task_id for task_id, line in self.latest().items() if not line.get("cancelled")}

    def write(self, result: dict[str, Any]) -> dict[str, Any]:
        """Append ``result`` (its session text goes to its own file); returns the line as written."""
        line = {k: v for k, v in result.items() if k not in ("session", "started", "crashed")}
        session = result.get("session")
        if session:
            self.sessions.mkdir(parents=True, exist_ok=True)
            target = self.sessions / f"{result['id']}.jsonl"
            target.write_text(session, "utf-8")
            line["session"] = str(target.relative_to(self.out))
        self.out.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as f:
            if f.tell() and not _ends_with_newline(self.path):
                f.write(b"\n")  # a torn line stays alone on its line
            f.write(json.dumps(line, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
            f.flush()
            os.fsync(f.fileno())
        return line


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def cost_of(line: dict[str, Any]) -> float:
    usage = line.get("usage")
    cost = usage.get("costUsd") if isinstance(usage, dict) else None
    return float(cost) if isinstance(cost, int | float) else 0.0


def status_of(line: dict[str, Any]) -> str:
    """One word for a task's end: pass, fail, done (no check), cancelled, timeout or error."""
    if line.get("cancelled"):
        return "cancelled"
    if line.get("error") or line.get("stopReason") in (None, "error"):
        return "error"
    if line.get("timedOut"):
        return "timeout" if line.get("verdict") is None else str(line["verdict"])
    return str(line["verdict"]) if line.get("verdict") else "done"


def summary(lines: list[dict[str, Any]], wall_seconds: float) -> str:
    """The table printed at the end of a batch: one row per task, then the totals."""
    rows = [("task", "status", "stop", "time", "cost", "error")]
    for line in lines:
        error = (line.get("error") or "").splitlines()
        rows.append(
            (
                line["id"],
                status_of(line),
                str(line.get("stopReason") or "-"),
                f"{(line.get('durationMs') or 0) / 1000:.1f}s",
                f"${cost_of(line):.4f}",
                error[0][:60] if error else "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    counts: dict[str, int] = {}
    for line in lines:
        counts[status_of(line)] = counts.get(status_of(line), 0) + 1
    tally = ", ".join(f"{n} {word}" for word, n in sorted(counts.items()))
    total = sum(cost_of(line) for line in lines)
    text.append(f"{len(lines)} tasks: {tally or 'none'}; cost ${total:.4f}; wall {wall_seconds:.1f}s")
    return "\n".join(text)
