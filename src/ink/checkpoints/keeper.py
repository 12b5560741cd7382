"""Which checkpoint belongs to which input, taken as each input enters the history.

``Checkpoints`` listens to a run controller's events: on ``input_taken`` (the input that starts a run, a
steer, a follow-up, a flushed queue entry: R31) it snapshots the workspace as it is *before* the work the
input asks for; on ``run_end`` it snapshots it again, which gives each checkpoint the files changed until
the next one and tells later whether a file was changed outside ink. Snapshots run one after another in
the background while the model is called; ``before_tool`` makes every tool call wait for the pending one,
so no tool can change a file before the checkpoint that must hold it was taken.

The records go to ``$INK_HOME/checkpoints/sessions/<session id>.jsonl`` (one JSON object per line,
appended), so a resumed session can still rewind. A failed snapshot (git missing, a full disk) is logged
and leaves that input without a checkpoint; it never fails a run.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ink.checkpoints.shadow import RestoreReport, ShadowError, ShadowRepo

log = logging.getLogger(__name__)
CLOSE_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Checkpoint:
    input_id: str
    text: str
    run_id: str | None
    time: float
    commit: str
    files: tuple[str, ...] = ()  # changed by the work of this input (until the next checkpoint or run end)

    def to_json(self) -> dict[str, Any]:
        return {
            "inputId": self.input_id,
            "text": self.text,
            "runId": self.run_id,
            "time": self.time,
            "commit": self.commit,
            "files": list(self.files),
        }


@dataclass
class CheckpointLog:
    """The append-only record of one session's checkpoints; a later line for an input updates it."""

    path: Path
    records: dict[str, Checkpoint] = field(default_factory=dict)

    @classmethod
    def open(cls, ink_home: Path, session_id: str) -> CheckpointLog:
        log_file = cls(ink_home / "checkpoints" / "sessions" / f"{session_id}.jsonl")
        log_file.records = log_file._read()
        return log_file

    def _read(self) -> dict[str, Checkpoint]:
        records: dict[str, Checkpoint] = {}
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return records
        for raw in lines:
            try:
                data = json.loads(raw)
                records[data["inputId"]] = Checkpoint(
                    data["inputId"],
                    data["text"],
                    data.get("runId"),
                    float(data["time"]),
                    data["commit"],
                    tuple(data.get("files", ())),
                )
            except (ValueError, KeyError, TypeError):
                continue  # a line torn by a kill: that checkpoint is lost, the others are not
        return records

    def put(self, checkpoint: Checkpoint) -> None:
        self.records[checkpoint.input_id] = checkpoint
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        line = json.dumps(checkpoint.to_json(), ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


class Checkpoints:
    def __init__(self, repo: ShadowRepo, record: CheckpointLog) -> None:
        self.repo, self.record = repo, record
        self._run_id: str | None = None
        self._last: Checkpoint | None = None  # the newest checkpoint, whose files are not known yet
        self._end_commit: str | None = None  # the workspace at the end of the last run
        self._chain: asyncio.Task[None] | None = None

    def all(self) -> list[Checkpoint]:
        return sorted(self.record.records.values(), key=lambda c: c.time)

    def get(self, input_id: str) -> Checkpoint | None:
        return self.record.records.get(input_id)

    def on_event(self, event: object) -> None:
        """A run controller listener (never blocks: the snapshots are queued)."""
        kind = getattr(event, "type", None)
        if kind == "run_start":
            self._run_id = getattr(event, "run_id", None)
        elif kind == "input_taken" and getattr(event, "source", None) is None:
            for taken in getattr(event, "inputs", ()):
                self._then(functools.partial(self._take, taken.input_id, taken.text, self._run_id))
        elif kind == "run_end" and getattr(event, "source", None) is None:
            self._then(self._close)

    async def settled(self) -> None:
        """Wait for the snapshots queued so far."""
        while self._chain is not None and not self._chain.done():
            await asyncio.shield(self._chain)

    def gate(self, inner: Callable[..., Awaitable[Any]] | None) -> Callable[..., Awaitable[Any]]:
        """A ``before_tool`` hook: the pending checkpoint first, then ``inner`` (the permission check)."""

        async def before_tool(call: Any, signal: Any) -> Any:
            await self.settled()
            return await inner(call, signal) if inner is not None else None

        return before_tool

    async def changed_outside(self) -> list[str]:
        """Files changed since the end of the last run, that is by someone other than ink."""
        await self.settled()
        if self._end_commit is None:
            return []
        now = await self.repo.snapshot(f"probe-{time.monotonic_ns()}")
        return await self.repo.changed(self._end_commit, now.commit)

    async def restore(self, input_id: str) -> RestoreReport:
        """The workspace as it was when ``input_id`` was taken. Raises ``KeyError`` for an input without a
        checkpoint, ``ShadowError`` when git fails."""
        await self.settled()
        checkpoint = self.record.records[input_id]
        report = await self.repo.restore(checkpoint.commit, f"undo/{input_id}-{time.monotonic_ns()}")
        self._end_commit = None  # the next "changed outside" compares with the next run's end
        return report

    async def aclose(self) -> None:
        if self._chain is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._chain), CLOSE_SECONDS)
            except TimeoutError:
                log.warning("a workspace checkpoint did not finish in %s s; it is left out", CLOSE_SECONDS)

    # -- mechanism ----------------------------------------------------------------------------------

    def _then(self, step: Callable[[], Awaitable[None]]) -> None:
        previous = self._chain

        async def chained() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            try:
                await step()
            except (ShadowError, OSError) as exc:
                log.warning("workspace checkpoint failed: %s", exc)

        self._chain = asyncio.ensure_future(chained())

    async def _take(self, input_id: str, text: str, run_id: str | None) -> None:
        snapshot = await self.repo.snapshot(f"input/{input_id}")
        await self._finish_last(snapshot.commit)
        checkpoint = Checkpoint(input_id, text, run_id, time.time(), snapshot.commit)
        self.record.put(checkpoint)
        self._last = checkpoint

    async def _close(self) -> None:
        snapshot = await self.repo.snapshot(f"end/{time.monotonic_ns()}")
        await self._finish_last(snapshot.commit)
        self._end_commit = snapshot.commit

    async def _finish_last(self, commit: str) -> None:
        last, self._last = self._last, None
        if last is not None:
            files = await self.repo.changed(last.commit, commit)
            self.record.put(replace(last, files=tuple(files)))
