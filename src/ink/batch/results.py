"""``DIR/results.jsonl``: one line per task, written as each task ends; what ``--resume`` skips.

**Which line counts.** A task's line is final unless it says ``cancelled: true`` (the batch was cancelled
while the task ran, or before its check gave a verdict): ``--resume`` runs such a task again and its new
line replaces the old. So the file holds one line per task id, except while a resumed batch runs (or
after it was killed): then an id can have two lines, and the *last* complete line of an id is the one
that counts. The file is rewritten to one line per id (each id's last line) when a batch starts with
``--resume`` and when any batch ends, atomically (a new file renamed over the old). A torn last line (the
batch was killed while writing it) is ignored on reading and dropped by the rewrite.

Each task's session file is kept as ``DIR/sessions/ID.jsonl`` and its diff, git's exact bytes, as
``DIR/diffs/ID.diff`` (``git apply`` reproduces the run's changes); the line names both. The line's
``diff`` holds the same diff as text when it can: ``diffExact`` says whether it is git's bytes exactly,
``diffNote`` why not (longer than ``MAX_DIFF_TEXT`` bytes: cut at a line end; bytes that are not UTF-8:
shown as U+FFFD; longer than ``workspace.MAX_DIFF_BYTES``: the file too is cut at a line end).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"
MAX_DIFF_TEXT = 2_000_000  # bytes of a diff kept in the line itself; diffs/ID.diff has all of it
_INTERNAL = ("session", "started", "crashed", "diff", "diffSize")


class ResultsFile:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / RESULTS
        self.sessions = out / "sessions"
        self.diffs = out / "diffs"

    def exists(self) -> bool:
        return self.path.exists() and self.path.stat().st_size > 0

    def lines(self) -> list[dict[str, Any]]:
        """Every complete line, in file order."""
        if not self.path.exists():
            return []
        found = []
        with open(self.path, "rb") as file:
            for raw in file:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue  # torn by a kill while it was written
                if isinstance(line, dict) and isinstance(line.get("id"), str):
                    found.append(line)
        return found

    def latest(self) -> dict[str, dict[str, Any]]:
        """The line that counts for each task id: its last complete one."""
        return {line["id"]: line for line in self.lines()}

    def done_ids(self) -> set[str]:
        return {task_id for task_id, line in self.latest().items() if not line.get("cancelled")}

    def compact(self) -> None:
        """Rewrite the file to the line that counts of each id (in the order those lines were written),
        atomically; nothing to do when every id has one line and no line is torn."""
        if not self.path.exists():
            return
        lines = self.lines()
        last = {line["id"]: at for at, line in enumerate(lines)}
        with open(self.path, "rb") as file:
            complete = sum(1 for raw in file if raw.strip()) == len(lines)
        if complete and len(last) == len(lines):
            return
        kept = [line for at, line in enumerate(lines) if last[line["id"]] == at]
        temporary = self.path.with_name(f".{RESULTS}.rewrite")
        with open(temporary, "wb") as file:
            file.writelines(_encoded(line) for line in kept)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)

    def write(self, result: dict[str, Any]) -> dict[str, Any]:
        """Append ``result`` (its session and diff go to files of their own); returns the line written."""
        line = {k: v for k, v in result.items() if k not in _INTERNAL}
        self.out.mkdir(parents=True, exist_ok=True)
        session = result.get("session")
        if session:
            self.sessions.mkdir(parents=True, exist_ok=True)
            target = self.sessions / f"{result['id']}.jsonl"
            target.write_text(session, "utf-8")
            line["session"] = str(target.relative_to(self.out))
        line |= self._diff(result["id"], result.get("diff") or b"", result.get("diffSize") or 0)
        with open(self.path, "ab") as f:
            if f.tell() and not _ends_with_newline(self.path):
                f.write(b"\n")  # a torn line stays alone on its line
            f.write(_encoded(line))
            f.flush()
            os.fsync(f.fileno())
        return line

    def _diff(self, task_id: str, data: bytes, size: int) -> dict[str, Any]:
        """The line's diff fields; the bytes go to ``diffs/ID.diff`` (an earlier attempt's file goes)."""
        target = self.diffs / f"{task_id}.diff"
        if not data:
            target.unlink(missing_ok=True)
            return {"diff": "", "diffFile": None, "diffExact": True, "diffNote": None}
        self.diffs.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.part")
        temporary.write_bytes(data)
        os.replace(temporary, target)
        text, notes = _diff_text(data)
        if size > len(data):
            notes.insert(
                0, f"the diff is {size:,} bytes: {target.name} holds its first {len(data):,} (whole lines)"
            )
        return {
            "diff": text,
            "diffFile": str(target.relative_to(self.out)),
            "diffExact": not notes,
            "diffNote": "; ".join(notes) or None,
        }


def _diff_text(data: bytes) -> tuple[str, list[str]]:
    """The diff as text for the line, and what keeps it from being git's bytes exactly."""
    notes = []
    if len(data) > MAX_DIFF_TEXT:
        cut = data[: data.rfind(b"\n", 0, MAX_DIFF_TEXT) + 1]
        notes.append(f"diff holds the first {len(cut):,} bytes (whole lines) of {len(data):,}: see diffFile")
        data = cut
    try:
        return data.decode("utf-8"), notes
    except UnicodeDecodeError:
        notes.append("the diff holds bytes that are not UTF-8, shown in diff as U+FFFD: see diffFile")
        return data.decode("utf-8", "replace"), notes


def _encoded(line: dict[str, Any]) -> bytes:
    return json.dumps(line, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"


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
