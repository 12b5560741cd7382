"""Running one command to its end, or to an abort or timeout, without hanging and without orphans.

One path for every process ink starts (the bash tool, grep's ripgrep, the user's ``!cmd`` bang lines):
own session and process group, stdin from /dev/null, stdout and stderr into one pipe that ink owns, the
process registered in the ``ProcessRegistry`` (R35).

The output pipe is read until the *command* exits, not until end-of-file: a background grandchild may
keep the pipe open forever (``sleep 100 &``), and waiting for EOF would hang. After the exit the pipe is
drained for ``DRAIN_SECONDS``; if it is still open then, the processes holding it are stopped and the
pipe is closed.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import msgspec

from ink import lineage
from ink.agent.abort import AbortSignal
from ink.agent.tasks import cancel_and_wait
from ink.sandbox import Confinement, SandboxUnavailable
from ink.tools import orphans
from ink.tools.limits import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES
from ink.tools.output import HeadTailBuffer
from ink.tools.processes import DEFAULT_KILL_DELAY, TOKEN_ENV, ProcessEntry, ProcessRegistry, Survivor

DEFAULT_TIMEOUT = 120.0
DRAIN_SECONDS = 0.25
"""How long output may keep arriving after the command exited before the pipe's holders are stopped."""
SHELL_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
"""No interactive pager or credential prompt: stdin is /dev/null and nobody would answer."""

OutputCallback = Callable[[str], object]


class ShellResult(msgspec.Struct, frozen=True):
    """How a command ended.

    ``exit_code`` is the process's status, negative when a signal ended it (Python's convention), None
    only if it could not be collected. ``interrupted``: stopped by the abort signal; ``timed_out``:
    stopped by the timeout. ``signal_name`` is the strongest signal ink sent (``"SIGTERM"`` or
    ``"SIGKILL"``), None when ink sent none. ``held_open``: the command exited but background processes
    kept its output open and were stopped. ``survivors``: processes that could not be ended.
    """

    output: str
    exit_code: int | None
    interrupted: bool
    timed_out: bool
    signal_name: str | None
    duration: float
    held_open: bool = False
    survivors: tuple[Survivor, ...] = ()
    detached: bool = False  # sent to the background while it ran (``Detach``): it runs on as a job


class _PipeReader(asyncio.Protocol):
    def __init__(self, buffer: HeadTailBuffer, on_output: OutputCallback | None) -> None:
        self.buffer = buffer
        self.closed = asyncio.Event()
        self._on_output = on_output
        self._sink: Callable[[bytes], object] | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")  # \xNN (ink.ai.unicode)

    def redirect(self, sink: Callable[[bytes], object]) -> None:
        """From now on the output goes to ``sink`` alone: the command became a background job."""
        self._sink, self._on_output = sink, None

    def data_received(self, data: bytes) -> None:
        if self._sink is not None:
            self._sink(data)
            return
        self.buffer.feed(data)
        if self._on_output is not None:
            try:
                self._on_output(self._decoder.decode(data))
            except Exception:
                self._on_output = None  # a broken listener must not break the command

    def eof_received(self) -> bool | None:
        self.closed.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set()


class Handover(NamedTuple):
    """What a detached command's new owner takes: the leader, its registry entry (the registry no longer
    holds it), and its output pipe, still being read (``reader.redirect`` it; close ``transport``)."""

    proc: asyncio.subprocess.Process
    entry: ProcessEntry
    transport: asyncio.ReadTransport
    reader: _PipeReader


class Detach:
    """Sends a running command to the background (the TUI's Ctrl+B, R43): once ``request``ed, ``run_process``
    returns at once with the output so far (``ShellResult.detached``), nothing ended, and ``handover``
    holds what the new owner needs. A request after the command ended changes nothing."""

    def __init__(self) -> None:
        self._requested = asyncio.Event()
        self.handover: Handover | None = None

    def request(self) -> None:
        self._requested.set()

    async def wait(self) -> None:
        await self._requested.wait()


async def run_shell(
    command: str,
    cwd: str | os.PathLike[str],
    signal: AbortSignal,
    registry: ProcessRegistry,
    timeout: float = DEFAULT_TIMEOUT,
    output_cap: int = MAX_OUTPUT_BYTES,
    *,
    kill_delay: float = DEFAULT_KILL_DELAY,
    on_output: OutputCallback | None = None,
    confinement: Confinement | None = None,
    detach: Detach | None = None,
) -> ShellResult:
    """Run ``command`` with ``bash -c`` in ``cwd``; see ``run_process`` for the contract."""
    bash = shutil.which("bash") or "/bin/bash"
    return await run_process(
        [bash, "-c", command],
        cwd,
        signal,
        registry,
        timeout,
        output_cap,
        kill_delay=kill_delay,
        on_output=on_output,
        label=command,
        confinement=confinement,
        detach=detach,
    )


async def run_process(
    argv: Sequence[str],
    cwd: str | os.PathLike[str],
    signal: AbortSignal,
    registry: ProcessRegistry,
    timeout: float = DEFAULT_TIMEOUT,
    output_cap: int = MAX_OUTPUT_BYTES,
    *,
    kill_delay: float = DEFAULT_KILL_DELAY,
    on_output: OutputCallback | None = None,
    label: str | None = None,
    env: Mapping[str, str] | None = None,
    keep_tail: bool = True,
    confinement: Confinement | None = None,
    detach: Detach | None = None,
    unset: Callable[[str], bool] | None = None,
) -> ShellResult:
    """Run ``argv`` until it exits, ``signal`` aborts, or ``timeout`` seconds pass.

    On abort or timeout the command's whole tree gets SIGTERM, then SIGKILL after ``kill_delay``, and
    the output so far is returned. ``on_output`` sees output text as it arrives. Output over
    ``output_cap`` bytes keeps its head and tail (only the head with ``keep_tail=False``). Raises ``OSError``
    when the program cannot be started (missing program or ``cwd``); never raises for how it ended.
    If the calling task is cancelled, the tree is sent SIGKILL at once (no waiting) and stays in
    ``registry`` so that ``terminate_all`` can report it. With a ``confinement`` the command and all it
    starts run in the sandbox (``ink.sandbox``); one that cannot be entered raises ``SandboxUnavailable``
    (an ``OSError``) and nothing runs (R39). ``detach``: how the command may be sent to the background
    while it runs (``Detach``). ``unset``: which of ink's own environment variables the command must
    not inherit (ink's own git plumbing drops a user's ``GIT_DIR``).
    """
    if signal.aborted:
        return ShellResult("", None, True, False, None, 0.0)
    buffer = HeadTailBuffer(output_cap, MAX_OUTPUT_LINES, keep_tail)
    token = registry.new_token()
    sandbox_env = confinement.env if confinement is not None else {}
    inherited = {k: v for k, v in os.environ.items() if not unset(k)} if unset is not None else os.environ
    full_env = {**inherited, **SHELL_ENV, **sandbox_env, **(env or {}), TOKEN_ENV: token}
    started = time.monotonic()
    read_fd, write_fd = os.pipe()
    with orphans.starting_child():  # until registered, a child that has ended looks like an orphan
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=cwd,
                env=full_env,
                start_new_session=True,
                # ends with ink, even a SIGKILLed one; confined: the sandbox steps run in the child
                preexec_fn=lineage.leader_preexec(steps=(confinement.preexec(),) if confinement else ()),
            )
        except subprocess.SubprocessError as exc:  # only the sandbox's steps can fail in the child
            os.close(read_fd)
            raise SandboxUnavailable(f"the sandbox could not be entered ({exc})") from None
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        entry = registry.register(proc.pid, label or " ".join(argv), token)
    pipe = os.fdopen(read_fd, "rb", buffering=0)  # the transport owns and closes it
    transport: asyncio.ReadTransport | None = None
    handed_over = False
    try:
        loop = asyncio.get_running_loop()
        transport, reader = await loop.connect_read_pipe(lambda: _PipeReader(buffer, on_output), pipe)
        supervised = _supervise(proc, entry, registry, reader, signal, timeout, kill_delay, started, detach)
        result = await supervised
        if result.detached and detach is not None:
            registry.claim_orphans(entry)  # what escaped to ink so far goes with it
            registry.release(entry)  # the run's reaper must not end it: it is the job's now
            detach.handover = Handover(proc, entry, transport, reader)
            handed_over = True
        return result
    finally:
        if handed_over:
            pass  # its new owner reads, waits for and ends it
        elif transport is not None:
            transport.close()
        else:
            pipe.close()
        if handed_over:
            pass
        elif proc.returncode is None:  # cancelled: no time to wait, so SIGKILL at once
            registry.kill_now([entry])
        else:
            orphans.own_child_done(proc.pid)


async def _supervise(
    proc: asyncio.subprocess.Process,
    entry: ProcessEntry,
    registry: ProcessRegistry,
    reader: _PipeReader,
    signal: AbortSignal,
    timeout: float,
    kill_delay: float,
    started: float,
    detach: Detach | None = None,
) -> ShellResult:
    exited = asyncio.ensure_future(proc.wait())
    aborted = asyncio.ensure_future(signal.wait_aborted())
    moved = asyncio.ensure_future(detach.wait() if detach is not None else asyncio.Event().wait())
    try:
        await asyncio.wait({exited, aborted, moved}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if moved.done() and not exited.done() and not signal.aborted:  # sent to the background
            duration = time.monotonic() - started
            return ShellResult(reader.buffer.render(), None, False, False, None, duration, detached=True)
        registry.claim_orphans(entry)  # its descendants that escaped to ink meanwhile are ended with it
        stopped_by = None if exited.done() else ("abort" if signal.aborted else "timeout")
        termination = None
        if stopped_by is not None:
            registry.snapshot(entry)  # before the leader dies and its children are re-parented
            termination = await registry.terminate([entry], kill_delay)
            await asyncio.wait({exited}, timeout=1.0)
    finally:
        await asyncio.gather(cancel_and_wait(aborted), cancel_and_wait(exited), cancel_and_wait(moved))
    duration = time.monotonic() - started
    held_open = False
    if not await _drained(reader):
        held_open = stopped_by is None
        registry.claim_orphans(entry)
        more = await registry.terminate([entry], kill_delay)
        termination = termination if termination and termination.signal_name else more
        await _drained(reader)
    return ShellResult(
        reader.buffer.render(),
        proc.returncode,
        interrupted=stopped_by == "abort",
        timed_out=stopped_by == "timeout",
        signal_name=termination.signal_name if termination else None,
        duration=duration,
        held_open=held_open,
        survivors=termination.survivors if termination else (),
    )


async def _drained(reader: _PipeReader) -> bool:
    try:
        await asyncio.wait_for(reader.closed.wait(), DRAIN_SECONDS)
    except TimeoutError:
        return False
    return True
