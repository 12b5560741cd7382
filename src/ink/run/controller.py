"""The run controller: one core under every frontend (SEMANTICS R7-R36).

It owns the state (``idle``/``running``, R25), the input ledger and queue (R8, R30, R32), the abort handle
of the current run (R17, R21), settling and flushing (R22-R28) and bang lines (R14). Frontends only call
its methods and render its events; none re-implements any of this.

All methods are called on the event loop's thread. ``submit``, ``abort``, ``interrupt`` and the queue
operations never block; ``wait_idle`` is the one thing to await.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, Protocol

import msgspec
from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.events import MessageEnd, ToolEnd
from ink.agent.history import History
from ink.agent.loop import LoopResult, LoopSetup, PendingInput, run_loop
from ink.agent.pause import PauseGate
from ink.agent.scheduler import CancelTally
from ink.agent.tasks import Tasks
from ink.ai.messages import AssistantMessage, ToolImage, ToolResult, Usage, UserMessage
from ink.run.events import (
    AbortReceipt,
    BangEnd,
    BangStart,
    InputRestored,
    JobInfo,
    QueuedInput,
    QueueUpdate,
    ResumeReason,
    RunEnd,
    RunEvent,
    RunEventListener,
    RunPaused,
    RunResumed,
    RunStart,
    Survivor,
)
from ink.run.hub import EventHub
from ink.run.ledger import InputLedger, LedgerEntry, QueueError
from ink.run.permissions import PermissionBroker
from ink.vocabulary import InputMode, TakeMode, wire_stop

log = logging.getLogger(__name__)

INTERRUPTION_MARKER = "[interrupted by the user]"
INTERNAL_ERROR_TEXT = "Not executed: the run stopped on an internal error of ink before this call finished."
State = Literal["idle", "running"]

__all__ = ["BangOutput", "QueueError", "RunController", "Submitted"]


class BangOutput(msgspec.Struct, frozen=True):
    """What a ``!command`` line printed and how it ended."""

    output: str
    exit_code: int | None
    interrupted: bool = False


BangRunner = Callable[[str, AbortSignal], Awaitable[BangOutput]]


ChangedFiles = Callable[[str], Awaitable[Sequence[str] | None]]  # run id -> the files the run changed
RunningJobs = Callable[[], Sequence[JobInfo]]  # the background jobs running now (R43), for a receipt
SetupSource = Callable[[], LoopSetup]
"""What gives each run its set-up, asked once at the run's start (R13): ``ink.app.setup.RunSetups``."""


class Reaper(Protocol):
    """Terminates every process a run started that is still alive, and names the survivors (R35)."""

    async def reap(self) -> Sequence[Survivor]: ...


class Submitted(msgspec.Struct, frozen=True):
    """A submitted input's id, and whether it was queued behind a running run."""

    input_id: str
    queued: bool


class Modes(msgspec.Struct, frozen=True):
    """How many queued steer and follow-up entries one take removes (R13)."""

    steering: TakeMode = "all"
    follow_up: TakeMode = "one-at-a-time"


class _LedgerInput:
    """One run's ``LoopInput``: takes from the ledger with the modes read at the run's start (R13).
    Once the run is aborted nothing more is taken: what is queued is handed back instead (R22), whatever
    point of the loop asks."""

    def __init__(
        self,
        ledger: InputLedger,
        modes: Modes,
        signal: AbortSignal,
        changed: Callable[[], None],
        hand_back: Callable[[Sequence[str]], None],
    ) -> None:
        self._ledger, self._modes, self._signal, self._changed = ledger, modes, signal, changed
        self.refused = hand_back  # taken inputs a prompt hook held back: to the user again (R30)

    def take_steering(self) -> list[PendingInput]:
        return self._take("steer", self._modes.steering)

    def take_follow_ups(self) -> list[PendingInput]:
        return self._take("follow_up", self._modes.follow_up)

    def committed(self, input_ids: Sequence[str]) -> None:
        self._ledger.commit(input_ids)  # R31: in the history now

    def _take(self, mode: InputMode, how: TakeMode) -> list[PendingInput]:
        if self._signal.aborted:
            return []
        taken = self._ledger.take(mode, how)
        if taken:
            self._changed()
        return [e.pending() for e in taken]


def _exit_now(status: int) -> None:
    os._exit(status)


class RunController:
    def __init__(
        self,
        setup: LoopSetup | SetupSource,
        history: History | None = None,
        *,
        modes: Modes | Callable[[], Modes] = Modes(),
        run_bang: BangRunner | None = None,
        reaper: Reaper | None = None,
        force_exit: Callable[[int], None] = _exit_now,
        permissions: PermissionBroker | None = None,
        tasks: Tasks | None = None,
        changed_files: ChangedFiles | None = None,
        events: EventHub | None = None,
        running_jobs: RunningJobs | None = None,
    ) -> None:
        """``setup``: the set-up of every run, or what gives each run its set-up at its start (a switch of
        model changes the next run's, never a live one, R13). ``permissions``: the broker the permission
        step asks through (made before the controller, it emits through ``events``); by default one of
        its own. ``tasks``: the owner of the task that drives each run (default: ``setup.tasks`` or one of
        its own). ``events``: the app's event stream, which the controller's events join (default: one
        of its own)."""
        self._setups: SetupSource = (lambda: setup) if isinstance(setup, LoopSetup) else setup
        self.history = history if history is not None else History()
        self._modes: Callable[[], Modes] = (lambda: modes) if isinstance(modes, Modes) else modes
        self._run_bang = run_bang
        self._reaper = reaper
        self._force_exit = force_exit
        self._ledger = InputLedger()
        self._ledger.skip_past(_input_ids(self.history))
        self._events = events if events is not None else EventHub()
        self._state: State = "idle"
        self._signal: AbortSignal | None = None  # of the work going on; made before that work is scheduled
        self._interrupted: AbortSignal | None = None  # the signal an interrupt (not any abort) hit
        self._redirect: LedgerEntry | None = None
        self._driver: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._run_ids = itertools.count(1)
        self._sub_agent_usage = Usage()  # of the run going on: added to its own in ``run_end``
        self._pause = PauseGate()  # R44: every run's; paused only while running (``pause``)
        self.permissions = permissions or PermissionBroker(self._emit)  # the policy's hook asks here
        self.tasks = tasks if tasks is not None else setup.tasks if isinstance(setup, LoopSetup) else Tasks()
        # Awaited before every run_end: the workspace checkpoints fix the run's end there (R42), and
        # answer the files an aborted run changed, for its receipt.
        self.changed_files = changed_files
        self.running_jobs = running_jobs  # an abort's receipt names the jobs it left running (R43)

    # -- observing -------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return self._state

    @property
    def paused(self) -> bool:
        """Whether the work going on is paused (R44): nothing new of it starts until ``resume``."""
        return self._pause.paused

    @property
    def held(self) -> bool:
        """Whether the paused run waits at a safe point now (a model call or a tool call not started)."""
        return self._pause.held > 0

    @property
    def setup(self) -> LoopSetup:
        """The set-up the next run starts with (a run going on keeps its own)."""
        return self._setups()

    @property
    def modes(self) -> Modes:
        """How the next run takes queued input (R13: a run reads them once, at its start)."""
        return self._modes()

    @property
    def ledger(self) -> InputLedger:
        return self._ledger

    def subscribe(self, listener: RunEventListener) -> Callable[[], None]:
        """Hear every event of the app's stream (``EventHub.subscribe``)."""
        return self._events.subscribe(listener)

    def emit(self, event: RunEvent) -> None:
        """Announce an event to every listener: for work done on the controller's behalf (a compaction
        run by ``run_command``) that has no loop to emit through."""
        self._emit(event)

    def queue(self) -> tuple[QueuedInput, ...]:
        return self._ledger.snapshot()

    async def wait_idle(self) -> None:
        await self._idle.wait()

    # -- input -----------------------------------------------------------------------------------

    def submit(self, text: str, mode: InputMode = "steer", images: tuple[ToolImage, ...] = ()) -> Submitted:
        """R8: idle starts a run (or a bang line) at once; running queues the input with its mode.
        Input that arrives while an abort settles is queued too, and handed back with the rest (R36).
        ``images``: attached by the user; they enter the history with the text."""
        entry = self._ledger.add(text, mode, images)
        if self._state == "idle":
            self._start(entry)
            return Submitted(entry.input_id, queued=False)
        self._queue_changed()
        return Submitted(entry.input_id, queued=True)

    def interrupt_with(self, text: str, images: tuple[ToolImage, ...] = ()) -> Submitted:
        """R24: abort the current work, then run ``text`` with everything done so far in the history.
        A second redirect before the first started replaces it; the replaced one is handed back."""
        if self._state == "idle":
            return self.submit(text, images=images)
        entry = self._ledger.add(text, "steer", images)
        self._ledger.mark_taken(entry)  # out of the queue: no take may steal it
        replaced, self._redirect = self._redirect, entry
        if replaced is not None:
            self._ledger.restore(replaced)
            self._emit(InputRestored((replaced.public(),)))
        self.abort("redirect")
        return Submitted(entry.input_id, queued=True)

    def edit_queued(self, input_id: str, text: str) -> None:
        self._ledger.edit(input_id, text)
        self._queue_changed()

    def cancel_queued(self, input_id: str) -> None:
        self._ledger.cancel(input_id)
        self._queue_changed()

    def set_queued_mode(self, input_id: str, mode: InputMode) -> None:
        self._ledger.set_mode(input_id, mode)
        self._queue_changed()

    def hand_back(self, input_ids: Sequence[str]) -> None:
        """Inputs taken for the history that a prompt hook refused (the loop says which, through its
        ``LoopInput``): handed back to the user as ``input_restored`` (R30: never dropped silently)."""
        entries = [e for e in map(self._ledger.get, input_ids) if e is not None and e.state == "taken"]
        for entry in entries:
            self._ledger.restore(entry)
        if entries:
            self._emit(InputRestored(tuple(e.public() for e in entries)))

    # -- holding ---------------------------------------------------------------------------------

    def pause(self) -> bool:
        """R44: hold the work going on at its next safe point: what streams or runs finishes, no model
        call and no tool call starts (the run's sub-agents' neither) until ``resume``. The queue stays
        open. A run the flush starts meanwhile holds too. False when already paused. Raises
        ``QueueError`` while idle: there is nothing to hold."""
        if self._state == "idle":
            raise QueueError("nothing is running: pause holds a run at its next safe point")
        if not self._pause.pause():
            return False
        self._emit(RunPaused())
        return True

    def resume(self) -> bool:
        """Lift the pause: what waits goes on exactly as if there had been none (steers queued meanwhile
        are taken before the next model call). False when not paused."""
        return self._lift_pause("resume")

    def _lift_pause(self, reason: ResumeReason) -> bool:
        if not self._pause.resume():
            return False
        self._emit(RunResumed(reason))
        return True

    # -- stopping --------------------------------------------------------------------------------

    def abort(self, reason: str = "user", message: str | None = None) -> bool:
        """Abort the current run or bang line (R17). Idempotent; False when there was nothing to abort.
        ``message``: what the user is told stopped it (a hook's ``stopReason``), kept in the receipt."""
        if self._state == "idle" or self._signal is None:
            return False
        self._signal.abort(reason, message)
        self._lift_pause("abort")  # pause is not a stop: the run ends as always; a redirect runs
        return True

    def interrupt(self) -> None:
        """The user's interrupt key or SIGINT: abort; a second *interrupt* while the abort still settles
        exits the process with status 130 (R21). An abort of another kind (a redirect, the RPC command,
        end of input) does not count as the first."""
        if self._signal is not None and self._signal is self._interrupted and self._state == "running":
            self._force_exit(130)
            return
        if self.abort("user"):
            self._interrupted = self._signal

    async def shutdown(self) -> None:
        """Abort whatever runs, wait until it has settled, and reap leftover processes."""
        self.abort("shutdown")
        await self.wait_idle()
        if self._reaper is not None:
            await self._reaper.reap()

    def new_session(self, history: History) -> None:
        if self._state != "idle":
            raise QueueError("a new session can only start while idle")
        self.history = history
        self._ledger.skip_past(_input_ids(history))

    # -- driving runs ----------------------------------------------------------------------------

    def run_command(self, work: Callable[[AbortSignal], Awaitable[object]]) -> bool:
        """Occupy the controller with ``work`` (``/compact``): it is a run in all but name. Input that
        arrives meanwhile is queued, ``abort`` stops it, and the queue is flushed after it as after a run
        (R25, R26). Returns False, doing nothing, when not idle."""
        if self._state != "idle":
            return False
        self._begin(lambda signal: self._command(work, signal))
        return True

    def _start(self, entry: LedgerEntry) -> None:
        self._ledger.mark_taken(entry)  # out of the queue now: not listed, edited or cancelled (R30)
        self._begin(lambda signal: self._process(entry, signal))

    def _begin(self, first: Callable[[AbortSignal], Awaitable[bool]]) -> None:
        """Go ``running`` now. The work's abort signal exists before the work is even scheduled, so an
        abort or redirect in the same step as the submit is never lost (R17, R24)."""
        self._state = "running"
        self._idle.clear()
        signal = self._signal = AbortSignal()
        self._driver = self.tasks.spawn(self._drive(first, signal), "run driver")  # a failure is observed

    async def _drive(self, first: Callable[[AbortSignal], Awaitable[bool]], signal: AbortSignal) -> None:
        """Do ``first``, then the flush (R26), then a pending redirect (R24); go idle at the end."""
        try:
            completed = await first(signal)
            while (entry := self._next_entry(completed)) is not None:
                signal = self._signal = AbortSignal()
                completed = await self._process(entry, signal)
        finally:
            if self._redirect is not None:  # only reached when a bug ended the drive early
                self._ledger.restore(self._redirect)
                self._emit(InputRestored((self._redirect.public(),)))
                self._redirect = None
            self._lift_pause("end")  # the work ended while paused: nothing is left to hold
            self._state = "idle"
            self._signal = None
            self._idle.set()

    def _next_entry(self, completed: bool) -> LedgerEntry | None:
        """After a normal end the next entry of the flush (R26); after an abort a pending redirect."""
        if not completed:
            entry, self._redirect = self._redirect, None
            return entry
        self._ledger.reserve_all()
        entry = self._ledger.next_reserved()
        if entry is not None:
            self._ledger.mark_taken(entry)
            self._queue_changed()
        return entry

    async def _process(self, entry: LedgerEntry, signal: AbortSignal) -> bool:
        """Run one entry; True when it ended normally so the flush may go on."""
        if entry.is_bang:
            return await self._bang(entry, signal)
        return await self._run(entry, signal)

    async def _run(self, entry: LedgerEntry, signal: AbortSignal) -> bool:
        run_id = f"run-{next(self._run_ids)}"
        self._sub_agent_usage = Usage()
        self._ledger.mark_taken(entry)
        self._emit(RunStart(run_id))
        modes, setup = self._modes(), replace(self._setups(), pause=self._pause)  # R13: read once, here
        try:
            inputs = _LedgerInput(self._ledger, modes, signal, self._queue_changed, self.hand_back)
            result = await run_loop(self.history, [entry.pending()], setup, signal, self._emit, inputs)
        except Exception as exc:  # a bug must not end the process (R27), nor leave the history invalid
            log.exception("run %s failed", run_id)
            self._answer_dangling_calls()
            result = LoopResult.failed(exc, Usage(), 0, CancelTally())
        return await self._settle(run_id, result, signal)

    def _reply_cut(self) -> bool:
        """Whether the run ended on a reply the model's output token limit cut off (``stop_reason`` length):
        it looks complete, so run_end says so (docs/rpc.md)."""
        last = self.history.messages[-1] if len(self.history) else None
        return isinstance(last, AssistantMessage) and last.stop_reason == "length"

    def _answer_dangling_calls(self) -> None:
        """R19 after a bug: every call of the history gets its one result and its ``tool_end``."""
        for call in self.history.unanswered_calls():
            result = ToolResult(call.id, call.name, INTERNAL_ERROR_TEXT, is_error=True)
            self.history.append(result)
            self._emit(ToolEnd(call.id, result))

    async def _settle(self, run_id: str, result: LoopResult, signal: AbortSignal) -> bool:
        """Settle a returned run (R21-R28): mark an abort in the history, hand input back, report. A run
        that failed reports its error even when an abort came too late to matter."""
        stop = "aborted" if signal.aborted and result.error is None else result.stop_reason
        result = replace(result, usage=result.usage + self._sub_agent_usage)
        if stop in ("completed", "max_iterations"):
            await self._changed_files(run_id)  # the run's end fixed before the user can touch its files
            self._emit(RunEnd(run_id, stop, usage=result.usage, truncated=self._reply_cut() or None))
            return True
        receipt = None
        if stop == "aborted":
            self.history.append(UserMessage(INTERRUPTION_MARKER, kind="interruption"))  # R23
            survivors = await self._reap()
        changed = await self._changed_files(run_id)  # once the processes are gone: nothing moves
        restored = self._restore()
        if stop == "aborted":
            receipt = AbortReceipt(
                signal.reason or "user",
                tuple(result.tally.not_started),
                tuple(result.tally.interrupted),
                tuple(result.tally.abandoned),
                tuple(survivors),
                tuple(r.input_id for r in restored),
                changed,
                tuple(self.running_jobs()) if self.running_jobs is not None else (),
                signal.message,
            )
        error = str(result.error) if result.error is not None else None
        refused = stop == "refused" or None
        end = RunEnd(
            run_id,
            wire_stop(stop),
            restored,
            result.usage,
            error=error,
            receipt=receipt,
            refused=refused,
            budget=result.budget if stop == "budget" else None,
        )
        self._emit(end)
        return False

    async def _bang(self, entry: LedgerEntry, signal: AbortSignal) -> bool:
        """R14: a bang line runs in the shell; its output is shown, never sent to the model."""
        self._ledger.mark_taken(entry)
        command = entry.text.lstrip()[1:].strip()
        self._emit(BangStart(command, entry.input_id))
        if self._run_bang is None:
            outcome = BangOutput("bang commands are not available in this mode", None)
        else:
            try:
                outcome = await self._run_bang(command, signal)
            except Exception as exc:
                outcome = BangOutput(f"{type(exc).__name__}: {exc}", None)
        self._ledger.mark_committed(entry)
        self._emit(
            BangEnd(command, outcome.output, outcome.exit_code, entry.input_id, outcome.interrupted or None)
        )
        if not signal.aborted:
            return True
        restored = self._restore()
        if restored:
            self._emit(InputRestored(restored))
        return False

    async def _command(self, work: Callable[[AbortSignal], Awaitable[object]], signal: AbortSignal) -> bool:
        try:
            await work(signal)
        except Exception:
            log.exception("command failed")
        if not signal.aborted:
            return True
        restored = self._restore()
        if restored:
            self._emit(InputRestored(restored))
        return False

    async def _reap(self) -> Sequence[Survivor]:
        if self._reaper is None:
            return ()
        try:
            return await self._reaper.reap()
        except Exception:
            log.exception("reaping processes failed")
            return ()

    async def _changed_files(self, run_id: str) -> tuple[str, ...] | None:
        if self.changed_files is None:
            return None
        try:
            files = await self.changed_files(run_id)
        except Exception:
            log.exception("listing the files the run changed failed")
            return None
        return tuple(files) if files is not None else None

    def _restore(self) -> tuple[QueuedInput, ...]:
        restored = tuple(e.public() for e in self._ledger.restore_all(keep=self._redirect))
        self._queue_changed()
        return restored

    def _queue_changed(self) -> None:
        self._emit(QueueUpdate(self._ledger.snapshot()))

    def _emit(self, event: RunEvent) -> None:
        if isinstance(event, MessageEnd) and event.source is not None:
            self._sub_agent_usage += event.usage  # a sub-agent's model calls roll up into its run's usage
        self._events.emit(event)


def _input_ids(history: History) -> list[str]:
    return [m.input_id for m in history.messages if isinstance(m, UserMessage) and m.input_id is not None]
