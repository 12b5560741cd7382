"""One task, from a fresh workspace to its verdict: the unit both backends run.

``execute`` never raises for what happens to the task: a failed clone, a failing ``setup``, a provider
error or a crash of the run all become a result (``error`` and the ``stage`` it happened in). The run is
``ink -p --output-format stream-json`` in the workspace, its own process and process group. Its time
limit, or the batch being cancelled, interrupts it as a user would (SIGINT: the run aborts cleanly, R17-R19,
and its ``run_end`` carries the receipt); one that does not end within ``INTERRUPT_GRACE`` has its whole tree
killed (R35). Whatever the run left behind is ended before the result is returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal as signals
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.tasks import cancel_and_wait
from ink.batch.sandboxing import StepSandbox, TaskSandbox
from ink.batch.tasks import Task
from ink.batch.workspace import DEFAULT_COPY_BUDGET, Baseline, Git, WorkspaceError, prepare
from ink.checkpoints import SWITCH_ENV
from ink.lineage import leader_preexec
from ink.tools import orphans
from ink.tools.processes import TOKEN_ENV, ProcessRegistry
from ink.tools.shell import ShellResult, run_process

INTERRUPT_GRACE = 30.0  # the run's own abort: R20's 10 s grace plus kill delays, with room
STEP_TIMEOUT = 600.0  # setup and check
READ_DRAIN_SECONDS = 10.0  # reading the rest of the run's output after it exited
CLEAN_EXITS = {0, 1, 2, 3, 4, 5, 130, 143}  # ink -p's documented statuses; anything else is a crash
_STDERR_TAIL = 4000


class RunOptions(msgspec.Struct, frozen=True):
    """How every task of a batch runs; picklable (the Ray backend ships it to workers)."""

    ink: tuple[str, ...]  # the argv that starts ink, e.g. (sys.executable, "-m", "ink")
    flags: tuple[str, ...] = ()  # settings flags for every run (--model, --allow ...)
    timeout_seconds: float | None = None
    step_timeout: float = STEP_TIMEOUT
    env: Mapping[str, str] = msgspec.field(default_factory=dict)  # added to the environment of every run
    avoid: tuple[str, ...] = ()  # never copied into a workspace: the batch's own output directory
    copy_budget: int = DEFAULT_COPY_BUDGET  # bytes of one workspace copy
    sandbox: StepSandbox = StepSandbox()  # every run's --sandbox, and what set-up and check run in (R41)


class _Run(msgspec.Struct):
    """What the ink process said: its last top-level ``run_end`` and answer, and how it exited."""

    run_end: dict[str, Any] | None = None
    answer: str | None = None
    exit_status: int | None = None
    stderr: str = ""
    killed: bool = False
    interrupted: bool = False  # ink batch interrupted it (time limit, Ctrl+C): it had not ended by itself


async def execute(
    task: Task, root: Path, options: RunOptions, cancel: AbortSignal, attempt: int = 1
) -> dict[str, Any]:
    """Run ``task`` with ``root`` as its scratch directory (workspace, session, baseline store).

    ``cancel`` aborting means the batch is being stopped: a task not yet running returns at once with
    ``started: False``; a running one is interrupted and its partial result returned (``cancelled``).
    """
    started = time.monotonic()
    registry = ProcessRegistry()
    sandbox = TaskSandbox(options.sandbox, root / "workspace")
    stop = AbortSignal()  # this task's own: the batch's cancel, or its time limit
    forward = cancel.on_abort(lambda _reason: stop.abort("cancelled"))
    result: dict[str, Any] = {"id": task.id, "attempt": attempt, "started": not cancel.aborted}
    try:
        if cancel.aborted:
            return result | _outcome(stop_reason=None, stage="not_started", cancelled=True)
        result |= await _stages(task, root, options, stop, cancel, registry, sandbox)
    except Exception as exc:  # a bug or an unforeseen failure costs this task, never the batch
        result |= _outcome(
            stop_reason=None, stage="internal", error=f"internal error: {type(exc).__name__}: {exc}"
        )
    finally:
        forward()
        await registry.terminate_all(with_orphans=False)  # the unclaimed may be another task's: cli sweeps
        sandbox.close()
        result["durationMs"] = round((time.monotonic() - started) * 1000)
    return result


async def _stages(
    task: Task,
    root: Path,
    options: RunOptions,
    stop: AbortSignal,
    cancel: AbortSignal,
    registry: ProcessRegistry,
    sandbox: TaskSandbox,
) -> dict[str, Any]:
    workspace, git = root / "workspace", Git(registry, stop)
    baseline = Baseline(workspace, root / "baseline.git")
    try:
        notes = await prepare(
            task, workspace, git, tuple(Path(p) for p in options.avoid), options.copy_budget
        )
        if task.setup is not None:
            await _step("setup", task.setup, workspace, options, stop, registry, sandbox)
        await baseline.take(git)
    except WorkspaceError as exc:
        return _outcome(stop_reason=None, stage="workspace", error=str(exc), cancelled=stop.aborted)
    run = await _run_ink(task, root, workspace, options, stop, registry)
    outcome = _run_outcome(run, stop) | {"notes": notes}
    try:  # a finished run keeps its diff: a Ctrl+C does not interrupt this (bounded) git
        diff, size = await baseline.diff(Git(registry, AbortSignal()))  # before the check: not the run's work
    except WorkspaceError as exc:
        diff, size, outcome["error"] = b"", 0, outcome.get("error") or str(exc)
    verdict = None
    if task.check is not None:
        verdict = await _verdict(task.check, workspace, options, cancel, registry, sandbox)
        outcome["cancelled"] |= verdict is None  # no verdict: --resume runs the task again
    return outcome | {
        "verdict": verdict,
        "diff": diff,
        "diffSize": size,
        "session": _session_text(root / "session"),
    }


async def _step(
    what: str,
    command: str,
    cwd: Path,
    options: RunOptions,
    stop: AbortSignal,
    registry: ProcessRegistry,
    sandbox: TaskSandbox,
) -> None:
    try:
        result = await _bash(command, what, cwd, stop, registry, options, sandbox)
    except OSError as exc:  # it did not start (the sandbox could not be set up: R39)
        raise WorkspaceError(f"{what} could not start: {exc}") from None
    if result.interrupted:
        raise WorkspaceError(f"{what}: interrupted")
    if result.timed_out or result.exit_code != 0:
        how = "timed out" if result.timed_out else f"exit status {result.exit_code}"
        raise WorkspaceError(
            f"{what} failed ({how}): {_tail(result.output, 600)}{sandbox.refused(result.output)}"
        )


async def _verdict(
    check: str,
    cwd: Path,
    options: RunOptions,
    cancel: AbortSignal,
    registry: ProcessRegistry,
    sandbox: TaskSandbox,
) -> str | None:
    """``pass`` when ``check`` exits 0 in the workspace. It runs even after a time limit (what was done
    may pass), not once the batch is cancelled: None, no verdict (before or while it runs)."""
    result = await _bash(check, "check", cwd, cancel, registry, options, sandbox)
    if result.interrupted:
        return None
    return "pass" if result.exit_code == 0 and not result.timed_out else "fail"


async def _bash(
    command: str,
    label: str,
    cwd: Path,
    signal: AbortSignal,
    registry: ProcessRegistry,
    options: RunOptions,
    sandbox: TaskSandbox,
) -> ShellResult:
    """A task's own command (its setup or check) in its workspace, confined like its run."""
    return await run_process(
        ["bash", "-c", command],
        cwd,
        signal,
        registry,
        options.step_timeout,
        env=dict(options.env),
        label=label,
        confinement=sandbox.confinement(),
    )


def child_argv(task: Task, root: Path, options: RunOptions) -> list[str]:
    o = task.overrides
    flags = [*options.flags, "--session-dir", str(root / "session")]
    for flag, value in (
        ("--model", o.model),
        ("--provider", o.provider),
        ("--permission-mode", o.permission_mode),
    ):
        flags += [flag, value] if value is not None else []
    if o.max_iterations is not None:
        flags += ["--max-iterations", str(o.max_iterations)]
    for flag, amount in (
        ("--max-cost", o.max_cost_usd),
        ("--max-tokens", o.max_tokens),
        ("--max-time", o.max_seconds),
    ):
        flags += [flag, str(amount)] if amount is not None else []  # R45: the task's, after the batch's
    for rule in o.allow:
        flags += ["--allow", rule]
    for rule in o.deny:
        flags += ["--deny", rule]
    flags += ["--sandbox", options.sandbox.mode]  # resolved once for the batch (R41)
    return [*options.ink, "-p", "--output-format", "stream-json", *flags]


async def _run_ink(
    task: Task, root: Path, workspace: Path, options: RunOptions, stop: AbortSignal, registry: ProcessRegistry
) -> _Run:
    token = registry.new_token()
    env = {**os.environ, **options.env, TOKEN_ENV: token, SWITCH_ENV: "off"}  # no task is ever rewound
    with orphans.starting_child():  # until registered, a child that has ended looks like an orphan
        proc = await asyncio.create_subprocess_exec(
            *child_argv(task, root, options),
            cwd=workspace,
            env=env,
            start_new_session=True,
            preexec_fn=leader_preexec(signals.SIGTERM),  # ink batch killed: the run interrupts itself (R35)
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=64 << 20,  # a stream-json line carries a whole message
        )
        entry = registry.register(proc.pid, f"ink -p ({task.id})", token)
    run = _Run()
    limit = (
        options.timeout_seconds if task.overrides.timeout_seconds is None else task.overrides.timeout_seconds
    )
    timer = asyncio.get_running_loop().call_later(limit, stop.abort, "timeout") if limit else None
    readers = asyncio.gather(_read_events(proc.stdout, run), _read_tail(proc.stderr, run))
    try:
        await _feed(proc, task.prompt)
        run.interrupted = await _wait_or_interrupt(proc, stop)
        if proc.returncode is None:  # it did not stop after SIGINT within the grace: end the tree
            registry.snapshot(entry)
            run.killed = True
            await registry.terminate([entry], kill_delay=0.5)
        with contextlib.suppress(TimeoutError):  # output held open past the exit: what was read stands
            await asyncio.wait_for(readers, READ_DRAIN_SECONDS)
    finally:
        if timer is not None:
            timer.cancel()
        if proc.returncode is None:
            registry.kill_now([entry])
        await cancel_and_wait(readers)  # ended once this returns (the killed child closed its pipes)
    run.exit_status = proc.returncode
    return run


async def _feed(proc: asyncio.subprocess.Process, prompt: str) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(prompt.encode("utf-8", "replace"))
        await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # it exited before reading: its exit status says why


async def _wait_or_interrupt(proc: asyncio.subprocess.Process, stop: AbortSignal) -> bool:
    """Wait for the run to end; on ``stop``, interrupt it first. True when it was interrupted."""
    exited = asyncio.ensure_future(proc.wait())
    stopped = asyncio.ensure_future(stop.wait_aborted())
    try:
        await asyncio.wait({exited, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if exited.done():
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signals.SIGINT)  # the run aborts itself cleanly (R17-R19)
        await asyncio.wait({exited}, timeout=INTERRUPT_GRACE)
        return True
    finally:
        await asyncio.gather(cancel_and_wait(stopped), cancel_and_wait(exited))


async def _read_events(stream: asyncio.StreamReader | None, run: _Run) -> None:
    assert stream is not None
    async for raw in stream:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("source") is not None:
            continue  # a sub-agent's events are not the task's answer (R7)
        if event.get("type") == "run_end":
            run.run_end = event
        elif event.get("type") == "message_end":
            message = event.get("message")
            run.answer = _text_of(message) if isinstance(message, dict) else run.answer


async def _read_tail(stream: asyncio.StreamReader | None, run: _Run) -> None:
    assert stream is not None
    while chunk := await stream.read(65536):
        run.stderr = (run.stderr + chunk.decode("utf-8", "replace"))[-_STDERR_TAIL:]


def _text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, list):
        return ""
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def _run_outcome(run: _Run, stop: AbortSignal) -> dict[str, Any]:
    end = run.run_end or {}
    crashed = run.run_end is None or run.exit_status not in CLEAN_EXITS
    stopped = run.interrupted and end.get("stopReason") != "completed"  # one that finished is done
    error = end.get("error")
    if crashed:
        error = f"the run crashed (exit status {run.exit_status}): {_tail(run.stderr, 600) or 'no output'}"
    elif run.exit_status == 2:
        error = _tail(run.stderr, 600)  # bad input (settings, config): ink said why on stderr
    return _outcome(
        stop_reason=end.get("stopReason"),
        stage="run",
        error=error,
        cancelled=stopped and stop.reason == "cancelled",
        timed_out=stopped and stop.reason == "timeout",
        crashed=crashed and not run.killed,
        exit_status=run.exit_status,
        usage=end.get("usage"),
        receipt=end.get("receipt"),
        answer=run.answer,
    )


def _outcome(
    *,
    stop_reason: str | None,
    stage: str,
    error: str | None = None,
    cancelled: bool = False,
    timed_out: bool = False,
    crashed: bool = False,
    exit_status: int | None = None,
    usage: Any = None,
    receipt: Any = None,
    answer: str | None = None,
) -> dict[str, Any]:
    return {
        "stopReason": stop_reason,
        "stage": stage,
        "verdict": None,
        "error": error or None,
        "cancelled": cancelled,
        "timedOut": timed_out,
        "crashed": crashed,
        "exitStatus": exit_status,
        "usage": usage,
        "receipt": receipt,
        "answer": answer,
        "diff": b"",
        "diffSize": 0,
        "notes": [],
        "session": None,
    }


def _session_text(directory: Path) -> str | None:
    files = (
        sorted(directory.glob("**/*.jsonl"), key=lambda p: p.stat().st_mtime) if directory.is_dir() else []
    )
    return files[-1].read_text("utf-8", "replace") if files else None


def _tail(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def ink_command(python: str | None = None) -> tuple[str, ...]:
    """How this machine starts ink: the interpreter running now, so a venv carries over."""
    import sys

    return (python or sys.executable, "-m", "ink")


async def execute_with_retries(
    task: Task, root: Path, options: RunOptions, cancel: AbortSignal, retries: int
) -> dict[str, Any]:
    """``execute``, again up to ``retries`` times while the run crashes (not for a failed run or check)."""
    attempt = 1
    while True:
        result = await execute(task, root, options, cancel, attempt)
        if not result.get("crashed") or attempt > retries or cancel.aborted:
            return result
        attempt += 1
