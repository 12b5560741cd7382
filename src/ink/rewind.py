"""Rewind: the workspace, the conversation, or both, back to just before an input was taken.

``Rewinder.rewind`` first stops a run that is going on (an abort like any other: R17-R23, so the history
stays valid), then restores what was asked, as a command occupying the controller (input that arrives
meanwhile is queued, as during ``/compact``):

- **files**: the workspace as the input's checkpoint holds it (``ink.checkpoints``): files the runs changed
  written back, deleted ones brought back, created ones removed. Files changed *outside* ink since the
  last run ended are named first and the rewind refuses (``ChangedOutside``) unless ``force``: they would
  be overwritten. The restore itself can be undone: it is recorded as a checkpoint of kind ``rewind``,
  the workspace just before it (``RewindResult.undo``), to which the files can be rewound in turn.
- **conversation**: the history cut just before the input's message; that input and every later one come
  back to the user like restored input (an ``input_restored`` event, in submission order, R30).

``SessionCheckpoints`` is the app's part for them: the checkpoints of whichever session is open (re-opened
on ``/new`` and ``/resume``), the gate of the before-tool chain, the controller's hook for an abort's
receipt, and ``rewind``. Every frontend calls it; none restores anything itself.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.events import Notice
from ink.agent.scheduler import NOT_STARTED
from ink.agent.tasks import Tasks, cancel_and_wait
from ink.agent.tool import Refusal, ToolCallContext, ToolKind, kind_of
from ink.ai.messages import UserMessage
from ink.checkpoints import ShadowError, shadow_repo_for
from ink.checkpoints.keeper import Checkpoint, CheckpointLog, Checkpoints
from ink.config import Settings
from ink.run.controller import RunController
from ink.run.events import InputRestored, QueuedInput, RewindEnd, RunEvent
from ink.store.current import CurrentSession

log = logging.getLogger(__name__)
RECEIPT_SECONDS = 5.0  # an abort's receipt waits this long for the list of files the run changed
START_ATTEMPTS = 3  # a rewind waits for the controller to be idle this many times before giving up


class RewindError(Exception):
    """The rewind cannot be done; nothing was changed."""


class ChangedOutside(RewindError):
    def __init__(self, paths: list[str]) -> None:
        shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
        super().__init__(
            f"{len(paths)} file(s) changed outside ink after a run would be overwritten: {shown}"
            " (rewind again with force to overwrite them)"
        )
        self.paths = paths


class RewindResult(msgspec.Struct, frozen=True):
    input_id: str
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    undo: str | None = None  # the id of the ``rewind`` checkpoint that undoes the file part
    restored_input: tuple[QueuedInput, ...] = ()
    blocked: tuple[str, ...] = ()  # not restored: something else stood in their way during the rewind


class Rewinder:
    def __init__(self, controller: RunController, checkpoints: Checkpoints) -> None:
        self.controller, self.checkpoints = controller, checkpoints

    def check(self, input_id: str, *, files: bool, conversation: bool) -> None:
        """Raises ``RewindError`` for a rewind that cannot be done (asked for nothing, no such checkpoint,
        not in the conversation), before anything is stopped or changed."""
        if not files and not conversation:
            raise RewindError("nothing to rewind: ask for the files, the conversation, or both")
        checkpoint = self.checkpoints.get(input_id)
        if files and checkpoint is None:
            raise RewindError(f"no checkpoint for input {input_id!r} (list_checkpoints names them)")
        if conversation:
            if checkpoint is not None and checkpoint.kind == "rewind":
                raise RewindError("a rewind's checkpoint holds files only: rewind the files alone to it")
            self._cut(input_id)

    async def rewind(
        self, input_id: str, *, files: bool, conversation: bool, force: bool = False
    ) -> RewindResult:
        """Raises ``RewindError`` (``ChangedOutside`` among them) before changing anything."""
        self.check(input_id, files=files, conversation=conversation)
        done: asyncio.Future[RewindResult] = asyncio.get_running_loop().create_future()

        async def work(_signal: AbortSignal) -> None:  # short, and never half done: not abortable
            await _outcome_into(done, self._restore(input_id, files, conversation, force))

        for _ in range(START_ATTEMPTS):
            if self.controller.state == "running":
                self.controller.abort("rewind")
                await self.controller.wait_idle()
            if self.controller.run_command(work):
                return await done
        raise RewindError("ink is busy: new work started each time the rewind waited for it to stop")

    async def _restore(self, input_id: str, files: bool, conversation: bool, force: bool) -> RewindResult:
        cut = self._cut(input_id) if conversation else None  # after the abort: its marker is cut too
        result = RewindResult(input_id)
        if files:
            outside = await self.checkpoints.changed_outside(input_id)
            if outside and not force:
                raise ChangedOutside(outside)
            try:
                report = await self.checkpoints.restore(input_id)
            except KeyError:
                raise RewindError(f"the checkpoint of input {input_id!r} could not be taken") from None
            undo = next((c.input_id for c in self.checkpoints.all() if c.commit == report.undo), None)
            result = RewindResult(input_id, report.written, report.removed, undo, blocked=report.blocked)
        if cut is not None:
            result = msgspec.structs.replace(result, restored_input=self._truncate(cut))
        return result

    def _cut(self, input_id: str) -> int:
        for index, message in enumerate(self.controller.history.messages):
            if isinstance(message, UserMessage) and message.input_id == input_id:
                return index
        raise RewindError(f"input {input_id!r} is not in this conversation")

    def _truncate(self, cut: int) -> tuple[QueuedInput, ...]:
        history = self.controller.history
        undone = [m for m in history.messages[cut:] if isinstance(m, UserMessage) and m.input_id is not None]
        history.replace(history.messages[:cut], "rewind")
        restored = tuple(QueuedInput(m.input_id or "", m.text, "steer") for m in undone)
        if restored:
            self.controller.emit(InputRestored(restored))
        return restored


class CheckpointsHost(Protocol):
    """What the checkpoints need of the app they are a part of, once it is built."""

    @property
    def controller(self) -> RunController: ...

    @property
    def current_session(self) -> CurrentSession: ...


class SessionCheckpoints:
    """The checkpoints of the app's open session, and an app part (``ink.app.service.AppPart``). Built
    before the controller: its ``gate`` is the first step of the before-tool chain and its
    ``changed_files`` the controller's hook. Started with the app: from then on it follows the open
    session (``open`` again on ``/new`` and ``/resume``; the previous session's pending snapshots finish
    in the background) and rewinds through the app's controller. Its background work belongs to
    ``tasks``; ``aclose`` waits for it."""

    name = "the workspace checkpoints"

    def __init__(
        self, emit: Callable[[RunEvent], None], tasks: Tasks, ink_home: Path, workspace: Path
    ) -> None:
        self._emit, self._tasks, self.ink_home, self.workspace = emit, tasks, ink_home, workspace
        self.current: Checkpoints | None = None
        self._controller: RunController | None = None
        self._unfollow: Callable[[], None] = lambda: None
        self._closing: list[asyncio.Task[None]] = []  # earlier sessions' last snapshots
        self._rewind: asyncio.Task[None] | None = None
        self._rewinding = False

    async def prepare(self, settings: Settings) -> Settings:
        return settings

    async def start(self, app: CheckpointsHost) -> None:
        """Open the app's session's checkpoints, follow its switches, and hear its events."""
        self._controller = app.controller
        self.open(app.current_session.id)
        follow = app.current_session.on_switch(lambda handle: self.open(handle.id if handle else None))
        hear = app.controller.subscribe(self.on_event)

        def unfollow() -> None:
            follow()
            hear()

        self._unfollow = unfollow

    def open(self, session_id: str | None) -> None:
        """Checkpoints for ``session_id`` (its earlier ones are read back); no session (``--no-session``):
        kept in memory under a one-off id, for this process only (its index file goes at ``aclose``)."""
        key = session_id or f"unsaved-{uuid.uuid4().hex}"
        record = CheckpointLog.open(self.ink_home, key) if session_id else CheckpointLog(None)
        previous = self.current
        repo = shadow_repo_for(self.ink_home, self.workspace, key, saved=session_id is not None)
        self.current = Checkpoints(repo, record, self._notify)
        if self._controller is not None:  # the inputs to come get ids none of these has
            self._controller.ledger.skip_past(c.input_id for c in self.current.all())
        self.current.warm()
        if previous is not None:
            self._closing = [t for t in self._closing if not t.done()]
            self._closing.append(self._tasks.spawn(previous.aclose(), "checkpoints of a closed session"))

    @property
    def controller(self) -> RunController:
        if self._controller is None:
            raise RewindError("the workspace checkpoints are not started")
        return self._controller

    def _notify(self, text: str) -> None:
        self._emit(Notice(text, "warning"))

    def on_event(self, event: object) -> None:
        if self.current is not None:
            self.current.on_event(event)

    async def gate(self, ctx: ToolCallContext) -> Refusal | None:
        """First step of the before-tool chain: a call that may change files waits for the pending
        checkpoint (the workspace before the input's work), so no tool changes a file before the
        checkpoint that must hold it exists. It refuses only when the run is aborted meanwhile (R17):
        the wait is for a git that may be slow or blocked (a FIFO named ``.gitignore``), never the
        abort's."""
        if self.current is None or kind_of(ctx.tool) in LEAVES_FILES:
            return None
        passing = asyncio.ensure_future(self.current.passing())
        aborted = asyncio.ensure_future(ctx.signal.wait_aborted())
        try:
            await asyncio.wait({passing, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (passing, aborted):  # the snapshot itself goes on: passing only waits for it
                await cancel_and_wait(waiting)
        return Refusal(NOT_STARTED) if ctx.signal.aborted else None

    async def changed_files(self, run_id: str) -> Sequence[str] | None:
        """The controller's hook for an abort's receipt (the run's end snapshot, taken before its
        ``run_end``); None when not known within RECEIPT_SECONDS (the snapshot then finishes later)."""
        if self.current is None:
            return None
        try:
            return await asyncio.wait_for(self.current.close_run(run_id), RECEIPT_SECONDS)
        except TimeoutError:
            return None

    async def settled(self) -> None:
        """Wait for the snapshots queued so far (a run's end snapshot: its files are then known)."""
        if self.current is not None:
            await self.current.settled()

    def checkpoints(self) -> list[Checkpoint]:
        """Oldest first."""
        return self.current.all() if self.current is not None else []

    def check(self, input_id: str, *, files: bool, conversation: bool) -> None:
        """Raises ``RewindError`` now for a rewind that cannot be done (also: another one goes on)."""
        if self._rewinding:
            raise RewindError("a rewind is already going on")
        self._rewinder().check(input_id, files=files, conversation=conversation)

    def start_rewind(
        self, input_id: str, *, files: bool, conversation: bool, force: bool = False
    ) -> asyncio.Future[RewindResult]:
        """Check the rewind (raises ``RewindError`` now), then do it in the background, as a task of the
        app's: see ``Rewinder.rewind``. The future fails with ``RewindError`` (a failing git becomes one
        too); a ``rewind_end`` event tells every frontend how it ended."""
        self.check(input_id, files=files, conversation=conversation)
        self._rewinding = True
        done: asyncio.Future[RewindResult] = asyncio.get_running_loop().create_future()
        done.add_done_callback(_observed)  # its caller may only want the rewind_end
        work = _outcome_into(done, self._rewound(input_id, files, conversation, force))
        self._rewind = self._tasks.spawn(work, "rewind")  # a cancel of the app's tasks cancels it too
        return done

    async def rewind(
        self, input_id: str, *, files: bool, conversation: bool, force: bool = False
    ) -> RewindResult:
        return await self.start_rewind(input_id, files=files, conversation=conversation, force=force)

    async def _rewound(self, input_id: str, files: bool, conversation: bool, force: bool) -> RewindResult:
        end = functools.partial(RewindEnd, input_id, files=files, conversation=conversation)
        try:
            result = await self._rewinder().rewind(
                input_id, files=files, conversation=conversation, force=force
            )
        except ShadowError as exc:
            problem = RewindError(f"the files could not be restored: {exc}")
            self._emit(end(ok=False, error=str(problem)))
            raise problem from exc
        except RewindError as exc:
            outside = tuple(exc.paths) if isinstance(exc, ChangedOutside) else None
            self._emit(end(ok=False, error=str(exc), changed_outside=outside))
            raise
        except Exception as exc:  # a bug: still told, and the process goes on
            log.exception("rewind failed")
            self._emit(end(ok=False, error=f"internal error: {type(exc).__name__}: {exc}"))
            raise RewindError(f"internal error: {exc}") from exc
        finally:
            self._rewinding = False
        if result.blocked:  # R42: what was not restored is told, never skipped silently
            shown = ", ".join(result.blocked[:10]) + (" and more" if len(result.blocked) > 10 else "")
            self._emit(
                Notice(
                    f"{len(result.blocked)} file(s) were left as they were: a folder of their path had become"
                    f" a link or a file, a folder stood in their place, or they may not be written: {shown}",
                    "warning",
                )
            )
        self._emit(end(ok=True, written=result.written, removed=result.removed, undo=result.undo))
        return result

    async def aclose(self) -> None:
        """After the controller's shutdown: a rewind under way ends first, then the pending snapshots,
        then those of the sessions closed before."""
        self._unfollow()
        if self._rewind is not None:
            await asyncio.wait((self._rewind,))
        if self.current is not None:
            await self.current.aclose()
        if self._closing:
            await asyncio.wait(self._closing)

    def _rewinder(self) -> Rewinder:
        if self.current is None:
            raise RewindError("workspace checkpoints are off")
        return Rewinder(self.controller, self.current)


LEAVES_FILES: frozenset[ToolKind] = frozenset({"read", "search", "fetch", "delegate"})
"""Kinds of tool whose calls change no file, so they need not wait for the pending checkpoint: reads,
searches, fetches (an MCP tool counts as one only when its server annotates it read-only), and a task
for a sub-agent, whose own calls pass this gate each. Edits, commands and any other tool wait."""


async def _outcome_into(done: asyncio.Future[RewindResult], work: Awaitable[RewindResult]) -> None:
    """Await ``work`` and give ``done`` its outcome: a result, an exception, or the cancellation (which
    also goes on)."""
    try:
        done.set_result(await work)
    except Exception as exc:
        done.set_exception(exc)
    except BaseException:
        done.cancel()
        raise


def _observed(done: asyncio.Future[RewindResult]) -> None:
    if not done.cancelled():
        done.exception()


def one_line(text: str, width: int = 60) -> str:
    """An input's text on one line of at most ``width`` characters, for the lists of the frontends."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def ago(seconds: float) -> str:
    """How long ago a checkpoint was taken, in a few characters."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)}s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    return f"{int(seconds // 86400)}d ago"
