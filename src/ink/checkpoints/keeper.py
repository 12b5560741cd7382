"""Which checkpoint belongs to which input, taken as each input enters the history.

``Checkpoints`` listens to a run controller's events: on ``input_taken`` (the input that starts a run, a
steer, a follow-up, a flushed queue entry: R31) it snapshots the workspace as it is *before* the work the
input asks for; at each run's end it snapshots it again, which gives each checkpoint the files changed
until the next one and tells later whether a file was changed outside ink. Snapshots run one after
another in the background while the model is called; ``before_tool`` makes every tool call wait for the
pending one, so no tool can change a file before the checkpoint that must hold it was taken.

The end of a run is fixed before its ``run_end`` goes out (``close_run``, the controller's hook): the
files it changed are listed and pinned (``ink.checkpoints.pins``), and whatever the end snapshot, staged
just after, holds otherwise was changed by someone else after the run ended: it is recorded with the end
(``touched``) and named by ``changed_outside``, however soon after ``run_end`` it was saved (R42).

The records go to ``$INK_HOME/checkpoints/sessions/<session id>.jsonl`` (one JSON object per line,
appended), so a resumed session can still rewind. A failed snapshot (git missing, a full disk, a file git
cannot read) leaves that input without a checkpoint and is announced (``notify``: a notice in every
frontend, R42); it never fails a run.

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
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from ink.checkpoints import pins as pinning
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
    after_end: str = ""  # the end of the run before it (a commit), when this is the first checkpoint since
    outside: tuple[str, ...] = ()  # changed by someone else right after that end (its ``touched``)

    def since_end(self) -> tuple[str, str] | None:
        """The snapshots between which someone other than ink changed files, if this checkpoint is the
        first after a run's end: (that end, this checkpoint)."""
        return (self.after_end, self.commit) if self.after_end and self.commit else None

    def to_json(self) -> dict[str, Any]:
        return {
            "inputId": self.input_id,
            "text": self.text,
            "runId": self.run_id,
            "time": self.time,
            "commit": self.commit,
            "files": list(self.files),
            "kind": self.kind,
            "afterEnd": self.after_end,
            "outside": list(self.outside),
        }


class CheckpointLog(msgspec.Struct):
    """The append-only record of one session's checkpoints; a later line for an input updates it."""

    path: Path | None  # None: kept in memory only (a session that is not saved)
    records: dict[str, Checkpoint] = msgspec.field(default_factory=dict)
    end: str | None = None  # the workspace when the last run ended; None when a later input has no end
    touched: tuple[str, ...] = ()  # files the end snapshot may hold as someone else left them after the run

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
                    self.touched = tuple(str(p) for p in data.get("touched", ()))
                    continue
                checkpoint = Checkpoint(
                    data["inputId"],
                    data["text"],
                    data.get("runId"),
                    float(data["time"]),
                    data["commit"],
                    tuple(data.get("files", ())),
                    "rewind" if data.get("kind") == "rewind" else "input",
                    str(data.get("afterEnd", "")),
                    tuple(str(p) for p in data.get("outside", ())),
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

    def put_end(self, commit: str, touched: tuple[str, ...] = ()) -> None:
        self.end, self.touched = commit, touched
        line: dict[str, Any] = {"end": commit, "time": time.time()}
        if touched:
            line["touched"] = list(touched)
        self._append(line)

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
    big to keep, that one could not be taken); the app makes it a ``notice`` event, which every frontend
    shows."""

    def __init__(
        self, repo: ShadowRepo, record: CheckpointLog, notify: Callable[[str], None] | None = None
    ) -> None:
        self.repo, self.record, self.notify = repo, record, notify
        self._run_id: str | None = None
        self._run_start: str | None = None  # the first checkpoint of the current run
        self._run_latest: str | None = None  # and its newest
        self._closed: dict[str, asyncio.Event] = {}  # run -> its run_end seen; its end snapshot began early
        self._last: Checkpoint | None = None  # the newest checkpoint, whose files are not known yet
        self._end_commit: str | None = record.end  # the workspace at the end of the last run
        self._touched: tuple[str, ...] = record.touched  # of that end: changed after the run, by another
        self._gap_from: str | None = record.end  # an end no checkpoint followed yet (``outside``)
        self._may_change = False  # a call that may change files passed the gate since the last end
        self._chain: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None  # the session-open snapshot, while cancellable
        self._warm_commit: str | None = None
        self._warm_fresh = False  # nothing of ink's ran since the session-open snapshot began
        self.off = False  # the workspace is too big to keep (shadow.MAX_NEW_FILES, MAX_NEW_BYTES)
        self._fifos_named = 0

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
            self._run_start = self._run_latest = None
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
            if ended is None:  # no close_run: nothing was fixed before the run_end, so nothing is sure
                self._may_change = False
                self._then(functools.partial(self._close, None, None, unsure=True))  # fail closed
            else:
                ended.set()

    async def settled(self) -> None:
        """Wait for the snapshots queued so far."""
        while self._chain is not None and not self._chain.done():
            await asyncio.wait({self._chain})  # never raises, never cancels it

    async def gate(self, _ctx: object) -> None:
        """A before-tool step: the call waits for the pending checkpoint; never refuses."""
        await self.passing()

    async def passing(self) -> None:
        """A call that may change files is about to run: it waits for the pending checkpoint, and the end
        of its run is then listed and pinned (``close_run``)."""
        self._may_change = True
        await self.settled()

    async def close_run(self, run_id: str) -> list[str] | None:
        """Fix the end of a run begun now, before its ``run_end`` (the controller's hook, at every run's
        end), and answer the files the run changed since its first checkpoint, for an abort's receipt
        (None when the run has no checkpoint or the snapshot failed).

        A run that made no call that may change files ends where its newest checkpoint is: the answer
        comes at once. Otherwise the files that differ from the last snapshot are listed and pinned
        (``pins``: what the run left in them) before the answer, and the end snapshot is staged and
        recorded once the ``run_end`` is out (starting a git blocks the event loop for a moment);
        whatever it holds that is not as pinned was changed after the run ended: ``touched``."""
        ended = self._closed[run_id] = asyncio.Event()
        if not self._may_change:
            self._then(functools.partial(self._close_unchanged, run_id))
            return []
        self._may_change = False
        done: asyncio.Future[list[str] | None] = asyncio.get_running_loop().create_future()
        self._then(functools.partial(self._close_changed, run_id, ended, done))
        assert self._chain is not None
        self._chain.add_done_callback(functools.partial(_unanswered, done))  # off: the step never ran
        return await asyncio.shield(done)

    async def changed_outside(self, input_id: str | None = None) -> list[str]:
        """Files changed by someone other than ink since the checkpoint of ``input_id`` (by default: since
        the end of the last run or restore): after each run's end, and right after it too (``touched``),
        until now. None known before the first run's end of a session (a new session, a run cut by a
        kill). A rewind to that checkpoint would overwrite them."""
        await self.settled()
        target = self.record.records.get(input_id) if input_id is not None else None
        found: set[str] = set(self._touched)
        if target is not None:  # the gaps between runs since then
            for later in self.record.records.values():
                gap = later.since_end() if later.time > target.time and later.kind == "input" else None
                if gap is not None:
                    found.update(later.outside, await self.repo.changed(*gap))
        if self._end_commit is not None:
            now = await self.repo.snapshot(f"probe-{time.monotonic_ns()}")
            found.update(await self.repo.changed(self._end_commit, now.commit))
        return sorted(found)

    async def restore(self, input_id: str) -> RestoreReport:
        """The workspace as it was when ``input_id`` was taken. Raises ``KeyError`` for an input without a
        checkpoint, ``ShadowError`` when git fails. The workspace as it was just before is recorded as a
        ``rewind`` checkpoint, before anything is written: rewinding the files to it undoes this restore,
        also one a kill -9 cut half-way."""
        await self.settled()
        self._warm_fresh = False
        checkpoint = self.record.records[input_id]
        if not checkpoint.commit:
            raise KeyError(input_id)
        stamp = time.time_ns()
        undo_id = f"rewind-{stamp}"

        async def before_writing(undo_commit: str, paths: list[str]) -> None:
            text = f"before the rewind to: {checkpoint.text}"
            self.record.put(Checkpoint(undo_id, text, None, time.time(), undo_commit, tuple(paths), "rewind"))
            self._ended_at(undo_commit)  # a restore cut by a kill: what it wrote counts as changed

        report = await self.repo.restore(checkpoint.commit, f"undo/{input_id}-{stamp}", before_writing)
        undo = self.record.records[undo_id]
        self.record.put(replace(undo, files=tuple(sorted({*report.written, *report.removed}))))
        self._ended_at(report.after)  # what changes from now on, until a run, is the user's
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

        self._then(warm, announce=False)
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

    def _then(self, step: Callable[[], Awaitable[object]], *, announce: bool = True) -> None:
        """Queue ``step`` after the snapshots queued so far. ``announce``: a failure is told to the user
        (the session-open snapshot's is not: the first input takes one of its own, and tells)."""
        previous = self._chain

        async def chained() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            if self.off:
                return
            try:
                await step()
                self._name_fifos()
            except TooManyFiles as exc:
                self._turn_off(exc)
            except (ShadowError, OSError) as exc:
                if isinstance(exc, FileNotFoundError) and shutil.which("git") is None:
                    self._turn_off(exc, "git is not installed")  # every later snapshot would fail so
                elif announce and self.notify is not None:  # R42: never skipped silently
                    log.debug("workspace checkpoint failed: %s", exc)  # the notice says it on stderr too
                    self.notify(f"a workspace checkpoint could not be taken ({exc}): rewind cannot use it")
                else:
                    log.warning("workspace checkpoint failed: %s", exc)

        self._chain = asyncio.ensure_future(chained())

    def _name_fifos(self) -> None:
        """FIFOs git waited to open (``ink.checkpoints.fifos``), named once each: the snapshot read them as
        empty files, and the user's own git would wait on them for ever."""
        fresh = self.repo.fifos.freed[self._fifos_named :]
        self._fifos_named += len(fresh)
        if fresh and self.notify is not None:
            names = ", ".join(fresh[:3]) + (f" and {len(fresh) - 3} more" if len(fresh) > 3 else "")
            self.notify(
                f"{names}: a FIFO (named pipe) where git reads its settings; the workspace checkpoint "
                "read it as an empty file (git itself waits on it until something writes to it)"
            )

    def _turn_off(self, exc: Exception, reason: str | None = None) -> None:
        self.off = True  # every later snapshot would walk the whole tree to refuse again
        for input_id in [i for i, c in self.record.records.items() if not c.commit]:
            del self.record.records[input_id]  # listed while pending: there will be none
        if self.notify is None:
            log.warning("%s", exc)
            return
        said = f"{reason}: checkpoints are off for this session" if reason else str(exc)
        self.notify(f"{said}: rewind cannot restore files")

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
        after_end, outside = self._gap_from or "", self._touched if self._gap_from else ()
        self._gap_from = None  # the first checkpoint after an end: what others did meanwhile is known
        checkpoint = replace(pending, commit=commit, after_end=after_end, outside=outside)
        self.record.put(checkpoint)
        self._last = checkpoint
        if pending.run_id == self._run_id:
            self._run_start = self._run_start or commit
            self._run_latest = commit

    async def _close_unchanged(self, run_id: str) -> None:
        """The end of a run that changed nothing: where its newest checkpoint is."""
        latest = self._run_latest if self._run_id == run_id else None
        if latest is None:  # its checkpoint failed: an end snapshot now, whose every change is another's
            await self._close(None, None, unsure=True)
            return
        self._finish_last_with(latest, [])
        self._ended_at(latest)

    async def _close_changed(
        self, run_id: str, ended: asyncio.Event, done: asyncio.Future[list[str] | None]
    ) -> None:
        start = self._run_start if self._run_id == run_id else None
        pins: dict[str, pinning.Pin] | None = None
        base: str | None = None

        async def listed(since: str, changed: list[str]) -> None:
            nonlocal pins, base
            late = ended.is_set()  # the run_end went out first (a listing slower than the receipt waits)
            base, pins = since, await self._pin(changed, sha256=len(since) == 64)
            if late:
                pins = {path: pinning.Pin(pinning.UNKNOWN) for path in pins}
            if since == start:  # the run took no snapshot after its first: this is the answer
                self._finish_last_with(since, changed)
                done.set_result(changed)
            elif start is not None:
                done.set_result(sorted({*await self.repo.changed(start, since), *changed}))
            else:
                done.set_result(None)
            # Starting a git blocks the event loop for 1-2 ms (the fork): the run_end first.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), RUN_END_SECONDS)

        try:
            skipped = await self.repo.stage(listed, only_listed=True)
            unsure = pins is None and ended.is_set()  # staged whole, and not all before the run_end
            if start is not None and not done.done():  # staged before the run_end: all of it the run's
                done.set_result(await self.repo.staged_changes(start))
            await self._close(skipped, pins, base=base or self._run_latest, unsure=unsure)
        finally:
            if not done.done():
                done.set_result(None)

    async def _pin(self, changed: list[str], *, sha256: bool) -> dict[str, pinning.Pin]:
        root = self.repo.workspace
        if len(changed) <= pinning.FEW_FILES:  # a few small reads cost less than a hop to a thread
            return pinning.pin(root, changed, sha256=sha256)
        return await asyncio.to_thread(pinning.pin, root, changed, sha256=sha256)

    async def _close(
        self,
        staged: tuple[str, ...] | None,
        pins: dict[str, pinning.Pin] | None,
        *,
        base: str | None = None,
        unsure: bool = False,
    ) -> str:
        """The end snapshot of a run; ``staged``: its first half is done (``ShadowRepo.stage``); ``pins``:
        what the run left in the files it changed since ``base`` (then whatever else differs from
        ``base`` is ``touched``). ``unsure``: nothing was fixed before the run ended: every change since
        ``base`` (by default the snapshot the index held) may be someone else's."""
        base = base or self.repo.index_commit or self._run_latest
        if staged is None:
            staged = await self.repo.stage()
        snapshot = await self.repo.commit_staged(f"end/{time.monotonic_ns()}", staged)
        touched: list[str] = []
        if base is not None and (pins is not None or unsure):
            changes = await self.repo.staged_entries(base, snapshot.commit)
            touched = sorted(changes) if unsure else pinning.touched(self.repo.workspace, pins or {}, changes)
        await self._finish_last(snapshot.commit)
        self._ended_at(snapshot.commit, tuple(touched))
        return snapshot.commit

    def _ended_at(self, commit: str, touched: tuple[str, ...] = ()) -> None:
        self.record.put_end(commit, touched)
        self._end_commit = self._gap_from = commit
        self._touched = touched

    async def _finish_last(self, commit: str) -> None:
        if self._last is not None:
            self._finish_last_with(self._last.commit, await self.repo.changed(self._last.commit, commit))

    def _finish_last_with(self, since: str, files: list[str]) -> None:
        """The newest checkpoint's files: what changed since it (``since``: its commit) until now."""
        last = self._last
        if last is not None and last.commit == since:
            self._last = None
            self.record.put(replace(last, files=tuple(files)))


def _unanswered(done: asyncio.Future[list[str] | None], _chain: object) -> None:
    if not done.done():
        done.set_result(None)
