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

A restore is itself recorded as a checkpoint (``kind`` "rewind": the workspace just before it), so a
rewind can be undone by rewinding the files to that one. The snapshot at a run's end is recorded too
(an ``end`` line): what differs from it later was changed outside ink, also after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from ink.checkpoints.shadow import RestoreReport, ShadowError, ShadowRepo, TooManyFiles, private_dirs

log = logging.getLogger(__name__)
CLOSE_SECONDS = 30.0
RUN_END_SECONDS = 5.0  # an aborted run's end snapshot waits this long for its run_end to go out first


CheckpointKind = Literal["input", "rewind"]


class Checkpoint(msgspec.Struct, frozen=True):
    """``input``: the workspace just before an input was taken. ``rewind``: just before a restore (its
    ``input_id`` is made up, ``rewind-...``; ``files`` are the ones the restore changed)."""

    input_id: str
    text: str
    run_id: str | None
    time: float
    commit: str
    files: tuple[str, ...] = ()  # changed by the work of this input (until the next checkpoint or run end)
    kind: CheckpointKind = "input"

    def to_json(self) -> dict[str, Any]:
        return {
            "inputId": self.input_id,
            "text": self.text,
            "runId": self.run_id,
            "time": self.time,
            "commit": self.commit,
            "files": list(self.files),
            "kind": self.kind,
        }


class CheckpointLog(msgspec.Struct):
    """The append-only record of one session's checkpoints; a later line for an input updates it."""

    path: Path | None  # None: kept in memory only (a session that is not saved)
    records: dict[str, Checkpoint] = msgspec.field(default_factory=dict)
    end: str | None = None  # the workspace when the last run ended; None when a later input has no end

    @classmethod
    def open(cls, ink_home: Path, session_id: str) -> CheckpointLog:
        log_file = cls(ink_home / "checkpoints" / "sessions" / f"{session_id}.jsonl")
        log_file.records = log_file._read()
        return log_file

    def _read(self) -> dict[str, Checkpoint]:
        records: dict[str, Checkpoint] = {}
        if self.path is None:
            return records
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return records
        for raw in lines:
            try:
                data = json.loads(raw)
                if "end" in data:
                    self.end = str(data["end"])
                    continue
                checkpoint = Checkpoint(
                    data["inputId"],
                    data["text"],
                    data.get("runId"),
                    float(data["time"]),
                    data["commit"],
                    tuple(data.get("files", ())),
                    "rewind" if data.get("kind") == "rewind" else "input",
                )
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a line torn by a kill: that checkpoint is lost, the others are not
            if checkpoint.input_id not in records and checkpoint.kind == "input":
                self.end = None  # a run began after the last end (and was killed before its own)
            records[checkpoint.input_id] = checkpoint
        return records

    def put(self, checkpoint: Checkpoint) -> None:
        self.records[checkpoint.input_id] = checkpoint
        self._append(checkpoint.to_json())

    def put_end(self, commit: str) -> None:
        self.end = commit
        self._append({"end": commit, "time": time.time()})

    def _append(self, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        private_dirs(self.path.parent)
        line = json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


class Checkpoints:
    """``notify`` tells the user something about the checkpoints (that they are off for a workspace too
    big to keep), once; the app makes it a ``notice`` event, which every frontend shows."""

    def __init__(
        self, repo: ShadowRepo, record: CheckpointLog, notify: Callable[[str], None] | None = None
    ) -> None:
        self.repo, self.record, self.notify = repo, record, notify
        self._run_id: str | None = None
        self._run_start: str | None = None  # the first checkpoint of the current run
        self._closed: dict[str, asyncio.Event] = {}  # run -> its run_end seen; its end snapshot began early
        self._last: Checkpoint | None = None  # the newest checkpoint, whose files are not known yet
        self._end_commit: str | None = record.end  # the workspace at the end of the last run
        self._chain: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None  # the session-open snapshot, while cancellable
        self._warm_commit: str | None = None
        self._warm_fresh = False  # nothing of ink's ran since the session-open snapshot began
        self.off = False  # the workspace is too big to keep (shadow.MAX_NEW_FILES)

    def all(self) -> list[Checkpoint]:
        return sorted(self.record.records.values(), key=lambda c: c.time)

    def get(self, input_id: str) -> Checkpoint | None:
        return self.record.records.get(input_id)

    def on_event(self, event: object) -> None:
        """A run controller listener (never blocks: the snapshots are queued)."""
        kind = getattr(event, "type", None)
        if getattr(event, "source", None) is not None:
            return  # a sub-agent's events: its work is inside the parent's run
        if kind == "run_start":
            self._run_id = getattr(event, "run_id", None)
            self._run_start = None
        elif kind == "bang_start":
            self._warm_fresh = False  # a ``!`` command may change files while the snapshot reads them
        elif kind == "input_taken":
            for taken in getattr(event, "inputs", ()):
                # listed at once (its commit comes with the snapshot: whoever restores waits for it)
                pending = Checkpoint(taken.input_id, taken.text, self._run_id, time.time(), "")
                if not self.off:
                    self.record.records[taken.input_id] = pending
                warming = self._warming
                if self._warm_fresh and warming is not None and warming is self._chain and not warming.done():
                    self._warming = None  # an input's checkpoint now: an exit lets it finish
                    self._then(functools.partial(self._adopt_warm, pending))
                else:
                    self._then(functools.partial(self._take, pending))
                self._warm_fresh = False
        elif kind == "run_end":
            ended = self._closed.pop(getattr(event, "run_id", None) or "", None)
            if ended is None:
                self._then(self._close)
            else:
                ended.set()

    async def settled(self) -> None:
        """Wait for the snapshots queued so far."""
        while self._chain is not None and not self._chain.done():
            await asyncio.wait({self._chain})  # never raises, never cancels it

    async def gate(self, _ctx: object) -> None:
        """A before-tool step: the call waits for the pending checkpoint; never refuses."""
        await self.settled()

    async def close_run(self, run_id: str) -> list[str] | None:
        """The end snapshot of an aborted run begun now, before its ``run_end``, and the files the run
        changed since its first checkpoint, for its receipt. None when the run has no checkpoint or the
        snapshot failed. The answer comes as soon as the listing that starts the snapshot says it (the
        abort's ``run_end`` waits for it); staging and recording go on once that ``run_end`` is out. (A
        run that ends otherwise gets its end snapshot just after its ``run_end``: the answer is not held
        back for it.)"""
        ended = self._closed[run_id] = asyncio.Event()
        done: asyncio.Future[list[str] | None] = asyncio.get_running_loop().create_future()

        async def close() -> None:
            start = self._run_start if self._run_id == run_id else None

            async def listed(since: str, changed: list[str]) -> None:
                if since == start:  # the run took no snapshot after its first: this is the answer
                    self._finish_last_with(since, changed)  # listed with the run_end, as before
                    done.set_result(changed)
                    # Starting a git blocks the event loop for 1-2 ms (the fork): the run_end first.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(ended.wait(), RUN_END_SECONDS)

            try:
                skipped = await self.repo.stage(listed)
                if start is not None and not done.done():
                    done.set_result(await self.repo.staged_changes(start))
                await self._close(skipped)
            finally:
                if not done.done():
                    done.set_result(None)

        self._then(close)
        return await asyncio.shield(done)

    async def changed_outside(self) -> list[str]:
        """Files changed since the end of the last run (or the last restore), that is by someone other
        than ink; none known when there was no such end (a new session, a run cut by a kill)."""
        await self.settled()
        if self._end_commit is None:
            return []
        now = await self.repo.snapshot(f"probe-{time.monotonic_ns()}")
        return await self.repo.changed(self._end_commit, now.commit)

    async def restore(self, input_id: str) -> RestoreReport:
        """The workspace as it was when ``input_id`` was taken. Raises ``KeyError`` for an input without a
        checkpoint, ``ShadowError`` when git fails. The workspace as it was just before is recorded as a
        ``rewind`` checkpoint: rewinding the files to it undoes this restore."""
        await self.settled()
        self._warm_fresh = False
        checkpoint = self.record.records[input_id]
        if not checkpoint.commit:
            raise KeyError(input_id)
        stamp = time.time_ns()
        report = await self.repo.restore(checkpoint.commit, f"undo/{input_id}-{stamp}")
        undo = Checkpoint(
            f"rewind-{stamp}",
            f"before the rewind to: {checkpoint.text}",
            None,
            time.time(),
            report.undo,
            tuple(sorted({*report.written, *report.removed})),
            "rewind",
        )
        self.record.put(undo)
        self.record.put_end(report.after)
        self._end_commit = report.after  # what changes from now on, until a run, is the user's
        return report

    def warm(self) -> None:
        """A snapshot now, before any input: the store gets the workspace's files and the index its stat
        cache while the user types, so the first input's checkpoint is as quick as any later one. An
        input taken while it is still going adopts it as its checkpoint (``_adopt_warm``) instead of
        waiting for it and then taking one more; otherwise it is no checkpoint, and ``aclose`` cancels it
        if still going (a quick exit is not held up)."""
        self._warm_fresh = True

        async def warm() -> None:
            self._warm_commit = (await self.repo.snapshot(f"open/{time.time_ns()}")).commit

        self._then(warm)
        self._warming = self._chain

    async def aclose(self) -> None:
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
        if self._chain is not None:
            _done, pending = await asyncio.wait({self._chain}, timeout=CLOSE_SECONDS)
            if pending:
                log.warning("a workspace checkpoint did not finish in %s s; it is left out", CLOSE_SECONDS)
                return
        self.repo.retire()

    # -- mechanism ----------------------------------------------------------------------------------

    def _then(self, step: Callable[[], Awaitable[object]]) -> None:
        previous = self._chain

        async def chained() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            if self.off:
                return
            try:
                await step()
            except TooManyFiles as exc:
                self.off = True  # every later snapshot would walk the whole tree to refuse again
                for input_id in [i for i, c in self.record.records.items() if not c.commit]:
                    del self.record.records[input_id]  # listed while pending: there will be none
                log.warning("%s", exc)
                if self.notify is not None:
                    self.notify(f"{exc}: rewind cannot restore files")
            except (ShadowError, OSError) as exc:
                log.warning("workspace checkpoint failed: %s", exc)

        self._chain = asyncio.ensure_future(chained())

    async def _take(self, pending: Checkpoint) -> None:
        try:
            snapshot = await self.repo.snapshot(f"input/{pending.input_id}")
        except BaseException:
            self.record.records.pop(pending.input_id, None)  # no checkpoint for it after all
            raise
        await self._keep(pending, snapshot.commit)

    async def _adopt_warm(self, pending: Checkpoint) -> None:
        """The session-open snapshot, taken while the input was typed, as the input's checkpoint: nothing
        of ink's ran since it began (no run, no ``!`` command, no restore), so it holds the workspace as
        the input found it, and the first tool call waits for that one snapshot only."""
        if self._warm_commit is None:  # it failed: a snapshot of the input's own
            await self._take(pending)
        else:
            await self._keep(pending, self._warm_commit)

    async def _keep(self, pending: Checkpoint, commit: str) -> None:
        await self._finish_last(commit)
        checkpoint = replace(pending, commit=commit)
        self.record.put(checkpoint)
        self._last = checkpoint
        if self._run_start is None and pending.run_id == self._run_id:
            self._run_start = commit

    async def _close(self, staged: tuple[str, ...] | None = None) -> str:
        """The end snapshot of a run; ``staged``: its first half is done (``ShadowRepo.stage``)."""
        if staged is None:
            staged = await self.repo.stage()
        snapshot = await self.repo.commit_staged(f"end/{time.monotonic_ns()}", staged)
        await self._finish_last(snapshot.commit)
        self.record.put_end(snapshot.commit)
        self._end_commit = snapshot.commit
        return snapshot.commit

    async def _finish_last(self, commit: str) -> None:
        if self._last is not None:
            self._finish_last_with(self._last.commit, await self.repo.changed(self._last.commit, commit))

    def _finish_last_with(self, since: str, files: list[str]) -> None:
        """The newest checkpoint's files: what changed since it (``since``: its commit) until now."""
        last = self._last
        if last is not None and last.commit == since:
            self._last = None
            self.record.put(replace(last, files=tuple(files)))
