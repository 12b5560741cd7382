"""Print mode: ``ink -p "task"`` runs one task to its end and prints the answer.

stdout carries only the result: the final assistant text (``text``), or every run event as one JSON
object per line, flushed as it happens (``stream-json``). Everything else goes to stderr.

Exit statuses:
    0    the run completed
    1    the run failed (the provider's message on stderr, no traceback)
    2    bad input (no prompt)
    3    the run stopped at --max-iterations: not a failure, but not a finished answer either
    4    the answer was cut off by the model's output token limit (``run_end.truncated``): printed, but
         not whole
    5    the run stopped at a budget limit (--max-cost, --max-tokens, --max-time, [limits]; R45): what the
         model wrote last is printed, but the task was not finished
    130  interrupted (SIGINT); a second SIGINT while the abort settles exits 130 at once (R21)
    141  stdout was closed by the reader (a pipe into ``head``): the run is aborted
    143  terminated (SIGTERM): aborted cleanly like an interrupt
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable
from typing import NoReturn, TextIO

from ink.agent.events import MessageEnd, Notice, RetryEvent, ToolCancelling
from ink.ai.printable import printable
from ink.ai.unicode import decode_bytes, sendable_text
from ink.config import Invocation, Settings
from ink.run.events import BangEnd, BudgetWarning, RunEnd, RunEvent, event_to_json
from ink.wiring import NEW_SESSION, SessionChoice

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_MAX_ITERATIONS, EXIT_TRUNCATED, EXIT_BUDGET = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED, EXIT_PIPE_CLOSED, EXIT_TERMINATED = 130, 141, 143
TERMINATED = "terminated"  # the abort reason SIGTERM gives


def main(settings: Settings, invocation: Invocation) -> int:
    """Entry point called by the command line after the settings were checked."""
    prompt = combine_prompt(invocation.prompt, _read_stdin())
    if prompt is None or not prompt.strip():
        return _usage('print mode needs a prompt: ink -p "your task", or pipe it: echo task | ink -p')
    choice = SessionChoice(invocation.continue_session, invocation.resume_id)
    status = asyncio.run(run_print(settings, prompt, invocation.output_format, session=choice))
    leave_now(status)


def leave_now(status: int) -> NoReturn:
    """End the process without the interpreter's teardown. Freeing every module and object takes longer
    than the whole abort (bench/results/run-control.md: SIGINT -> exit), and nothing is left to do:
    the run has settled, its processes are ended, the session file is closed, the provider's
    connection too; the log and stdout/stderr are flushed here."""
    import logging
    import os

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that left (exit 141), or a closed stream
            pass
    os._exit(status)


async def run_print(
    settings: Settings,
    prompt: str,
    output_format: str,
    out: TextIO | None = None,
    err: TextIO | None = None,
    *,
    session: SessionChoice = NEW_SESSION,
) -> int:
    """Run ``prompt`` to its end; return the exit status. Installs SIGINT/SIGTERM handlers for the
    duration of the run and removes them before returning."""
    from ink.wiring import open_app

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    # nobody answers permission questions. Checkpoints when the session is saved: nothing here rewinds,
    # but the session can be resumed in the TUI (or over RPC) and rewound there (docs/rewind.md)
    checkpoints = not settings.no_session and _checkpoints_wanted()
    async with open_app(settings, session=session, can_ask=False, checkpoints=checkpoints) as app:
        printer = _Printer(
            out, err, json_lines=output_format == "stream-json", on_pipe_closed=app.controller.abort
        )
        unsubscribe = app.controller.subscribe(printer.on_event)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, app.controller.interrupt)
        loop.add_signal_handler(signal.SIGTERM, app.controller.abort, TERMINATED)
        try:
            app.submit(prompt)  # a custom command's /name is expanded
            await app.controller.wait_idle()
        finally:
            await app.aclose()  # here, while a signal still reaches the controller (R21)
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
            unsubscribe()
    return printer.finish()


def _checkpoints_wanted() -> bool:
    import os

    from ink.checkpoints import SWITCH_ENV

    return os.environ.get(SWITCH_ENV, "").strip().lower() != "off"


class _Printer:
    """Renders the events of one print-mode run and decides the exit status."""

    def __init__(
        self, out: TextIO, err: TextIO, *, json_lines: bool, on_pipe_closed: Callable[[str], object]
    ) -> None:
        self.out, self.err = out, err
        self.json_lines = json_lines
        self._on_pipe_closed = on_pipe_closed
        self.pipe_closed = False
        self.answer: str | None = None
        self.end: RunEnd | None = None
        self.bang: BangEnd | None = None

    def on_event(self, event: RunEvent) -> None:
        if event.source is not None:  # a sub-agent's events are not the answer (R7)
            self._write_json(event)
            return
        match event:
            case MessageEnd(message=message):
                self.answer = message.text
            case RunEnd():
                self.end = event
                if event.error:
                    self._note(event.error)
            case BangEnd():
                self.bang = event
            case ToolCancelling(tool_call_id=call_id, grace_seconds=grace):
                self._note(f"waiting up to {grace:g} s for tool call {call_id} to stop")
            case RetryEvent(attempt=attempt, delay_seconds=delay, error=error) if not self.json_lines:
                self._note(f"retrying in {delay:.1f} s (attempt {attempt + 1}) after: {error}")
            case Notice(text=note, level="warning") if not self.json_lines:
                self._note(f"warning: {note}")
            case BudgetWarning() if not self.json_lines:
                from ink.run.budget import warning_text  # the budget's code only for a run that has one

                self._note(f"warning: {warning_text(event)}")
        self._write_json(event)

    def _write_json(self, event: RunEvent) -> None:
        if not self.json_lines or self.pipe_closed:
            return
        line = json.dumps(event_to_json(event), ensure_ascii=False, separators=(",", ":"))
        self._write(line + "\n")

    def _write(self, text: str) -> None:
        try:
            self.out.write(sendable_text(text))  # stdout is strict UTF-8: no event may break it
            self.out.flush()
        except BrokenPipeError:
            self.pipe_closed = True
            _silence(self.out)
            self._on_pipe_closed("stdout closed")

    def _note(self, text: str) -> None:
        try:
            print(f"ink: {text}", file=self.err, flush=True)
        except OSError:
            pass

    def finish(self) -> int:
        """Print the answer (text mode) and any receipt notes; return the exit status."""
        if self.pipe_closed:
            return EXIT_PIPE_CLOSED
        end = self.end
        if end is None:
            return self._finish_bang()
        if end.stop_reason == "completed":
            if not self.json_lines and self.answer:
                self._write(self.answer if self.answer.endswith("\n") else self.answer + "\n")
            if self.pipe_closed:
                return EXIT_PIPE_CLOSED
            if end.truncated:
                self._note(
                    "warning: the answer was cut off at the model's output token limit (max_tokens); "
                    "raise max_tokens in the config, or --continue and ask for the rest"
                )
                return EXIT_TRUNCATED
            return EXIT_OK
        if end.stop_reason == "max_iterations":
            self._note(
                "stopped at the limit of tool batches (max_iterations) before the task was finished; "
                "raise it with --max-iterations N (0: no limit)"
            )
            return EXIT_MAX_ITERATIONS
        if end.stop_reason == "budget":
            if not self.json_lines and self.answer:  # the model's last words, not a finished answer
                self._write(self.answer if self.answer.endswith("\n") else self.answer + "\n")
            self._note(f"stopped at a budget limit before the task was finished: {end.budget}")
            return EXIT_BUDGET
        if end.stop_reason == "aborted":
            self._report_abort(end)
            terminated = end.receipt is not None and end.receipt.reason == TERMINATED
            return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
        return EXIT_ERROR

    def _finish_bang(self) -> int:
        """``ink -p '!cmd'`` runs a shell command (R14): its output is the answer, its status ours."""
        bang = self.bang
        if bang is None:
            self._note("the run ended without a result")
            return EXIT_ERROR
        if not self.json_lines and bang.output:
            self._write(bang.output if bang.output.endswith("\n") else bang.output + "\n")
        if bang.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_OK if bang.exit_code == 0 else EXIT_ERROR

    def _report_abort(self, end: RunEnd) -> None:
        receipt = end.receipt
        by_hook = receipt is not None and receipt.reason == "hook"
        said = f": {printable(receipt.message)}" if receipt is not None and receipt.message else ""
        self._note(("stopped by a hook" if by_hook else "interrupted") + said)
        if receipt is None:
            return
        for survivor in receipt.survivors:
            self._note(f"warning: process {survivor.pid} ({survivor.command}) is still running")
        if receipt.abandoned:
            self._note(f"warning: abandoned {len(receipt.abandoned)} tool call(s) that did not stop in time")


def combine_prompt(given: str | None, piped: str | None) -> str | None:
    """``cmd | ink -p "review this"``: the prompt, a blank line, then the piped text (as other agents do).
    Either alone is the prompt; piped text that is only whitespace adds nothing."""
    if piped is None or not piped.strip():
        return given if given is not None else piped
    if given is None or not given.strip():
        return piped
    return f"{given}\n\n{piped}"


def _read_stdin() -> str | None:
    """The piped prompt; bytes that are not UTF-8 (a latin-1 ``git diff``) become ``\\xNN`` escapes."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return decode_bytes(sys.stdin.buffer.read())


def _silence(stream: TextIO) -> None:
    """After EPIPE, point the stream's descriptor at /dev/null so the interpreter's final flush is quiet."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _usage(message: str) -> int:
    print(f"ink: {message}", file=sys.stderr)
    return EXIT_USAGE
