"""``ink batch TASKS.jsonl --out DIR``: the command line of the batch runner.

Exit statuses: 0 every task ran to a result (whatever its verdict); 1 some task ended in an error (a
workspace or setup that failed, a failed or crashed run); 2 bad input (flags, the task file, settings);
130 cancelled by Ctrl+C (running tasks interrupted and recorded; ``--resume`` continues). A second Ctrl+C
while the running tasks stop kills them at once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from ink.agent.abort import AbortSignal
from ink.agent.tasks import cancel_and_wait
from ink.batch.copying import parse_size
from ink.batch.execute import RunOptions, ink_command
from ink.batch.progress import Progress
from ink.batch.ray_backend import RayBatch, RayUnavailable, run_on_ray
from ink.batch.results import ResultsFile, status_of, summary
from ink.batch.sandboxing import StepSandbox, batch_sandbox
from ink.batch.tasks import Task, TaskFileError, read_tasks
from ink.batch.workspace import DEFAULT_COPY_BUDGET
from ink.config import Settings
from ink.config.sandbox import SANDBOX_MODES
from ink.sandbox import SandboxRefused

EXIT_OK, EXIT_TASK_ERRORS, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


class _UsageError(Exception):
    pass


SettingsCheck = Callable[[list[str]], "Settings | str"]


def main(args: list[str], check_settings: SettingsCheck) -> int:
    """``check_settings(flags)`` resolves the flags every run gets as ink itself would (config files and
    environment included) and returns the settings, or the problem: a bad model name or a missing key
    then fails once here instead of once per task."""
    try:
        ns = _parser().parse_args(args)
        tasks, options = _prepare(ns, check_settings)
    except (_UsageError, TaskFileError) as exc:
        print(f"ink: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return _Batch(ns, tasks, options).run()


def _parser() -> argparse.ArgumentParser:
    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise _UsageError(f"{message} (see ink batch --help)")

    p = Parser(
        prog="ink batch",
        description="Run many headless ink tasks, locally or on a Ray cluster.",
        epilog="Task lines, results and a worked example: docs/batch.md",
    )
    p.add_argument("tasks", metavar="TASKS.jsonl", type=Path, help="one JSON task per line")
    p.add_argument(
        "--out", metavar="DIR", type=Path, required=True, help="results.jsonl and sessions/ go here"
    )
    p.add_argument("--jobs", metavar="N", type=_positive, default=4, help="runs at once (default 4)")
    p.add_argument("--ray", metavar="auto|ADDRESS", help="run on Ray: auto, or a cluster address")
    p.add_argument("--ray-cpus", metavar="N", type=float, default=1.0, help="CPUs per task on Ray")
    p.add_argument("--resume", action="store_true", help="skip tasks DIR already has a result for")
    p.add_argument("--retries", metavar="N", type=int, default=1, help="retries of a crashed run (default 1)")
    p.add_argument("--timeout", metavar="SECONDS", type=float, help="per-task time limit for the run")
    p.add_argument("--keep-workspaces", action="store_true", help="keep DIR/tasks/ID/workspace")
    p.add_argument(
        "--max-copy-bytes",
        metavar="SIZE",
        type=_size,
        default=DEFAULT_COPY_BUDGET,
        help="most a local repo's copy may hold, e.g. 500M, 20G (default 10G)",
    )
    for flag, meta, text in (
        ("--provider", "NAME", "model service"),
        ("--model", "NAME", "model"),
        ("--base-url", "URL", "service URL"),
        ("--max-iterations", "N", "tool batches per run"),
        ("--max-cost", "USD", "what each task's run may spend (R45; a task's maxCostUsd wins)"),
        ("--max-tokens", "N", "tokens each task's run may use (a task's maxTokens wins)"),
        ("--max-time", "SECONDS", "time each task's run may take, its tools' included (maxSeconds)"),
        ("--permission-mode", "MODE", "ask (default: asks are refused), accept-edits or yolo"),
    ):
        p.add_argument(flag, metavar=meta, help=text)
    p.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        help="what every run and its set-up and check commands may touch (default: workspace-write)",
    )
    p.add_argument("--allow", metavar="RULE", action="append", default=[], help="run unasked")
    p.add_argument("--deny", metavar="RULE", action="append", default=[], help="never run")
    return p


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 500M or 20G") from None


def _positive(text: str) -> int:
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(text)


def _prepare(ns: argparse.Namespace, check_settings: SettingsCheck) -> tuple[list[Task], RunOptions]:
    ns.out = ns.out.resolve()  # every run, git and check works in a directory of its own
    tasks = read_tasks(ns.tasks)
    if ns.timeout is not None and not 0 < ns.timeout < 1e7:
        raise _UsageError("--timeout must be a number of seconds > 0")
    if ns.retries < 0:
        raise _UsageError("--retries must be >= 0")
    results = ResultsFile(ns.out)
    if results.exists() and not ns.resume:
        raise _UsageError(
            f"{results.path} already has results: add --resume to continue it, or pick another --out"
        )
    flags: list[str] = []
    for name in ("provider", "model", "base_url", "max_iterations", "max_cost", "max_tokens", "max_time"):
        value = getattr(ns, name)
        flags += [f"--{name.replace('_', '-')}", str(value)] if value is not None else []
    flags += ["--permission-mode", ns.permission_mode] if ns.permission_mode is not None else []
    flags += [f for rule in ns.allow for f in ("--allow", rule)]
    flags += [f for rule in ns.deny for f in ("--deny", rule)]
    sandbox = _sandbox(check_settings, flags, ns.sandbox)
    avoid = (str(ns.out),)
    options = RunOptions(
        ink=ink_command(),
        flags=tuple(flags),
        timeout_seconds=ns.timeout,
        avoid=avoid,
        copy_budget=ns.max_copy_bytes,
        sandbox=sandbox,
    )
    return tasks, options


def _sandbox(check_settings: SettingsCheck, flags: list[str], asked: str | None) -> StepSandbox:
    """The settings every run gets, checked once, and the sandbox they choose (R41): a mode asked for
    that cannot start here is a usage error; the default falls back to off with one notice."""
    checked = check_settings([*flags, *(["--sandbox", asked] if asked else [])])
    if isinstance(checked, str):
        raise _UsageError(checked)
    try:
        sandbox, notice = batch_sandbox(checked)
    except SandboxRefused as exc:
        raise _UsageError(str(exc)) from None
    if notice is not None:
        print(f"ink: {notice}", file=sys.stderr)
    return sandbox


class _Batch:
    def __init__(self, ns: argparse.Namespace, tasks: list[Task], options: RunOptions) -> None:
        self.ns, self.options = ns, options
        self.results = ResultsFile(ns.out)
        if ns.resume:
            self.results.compact()  # one line per id: each id's last, the one that counts
        done = self.results.done_ids() if ns.resume else set()
        self.todo = [task for task in tasks if task.id not in done]
        self.ids = [task.id for task in tasks]
        self.cancel = AbortSignal()
        self.progress = Progress(
            len(tasks), ns.jobs, sys.stderr, live=sys.stderr.isatty(), already_done=len(done)
        )
        self.errors = 0

    def run(self) -> int:
        started = time.monotonic()
        if len(self.todo) < len(self.ids):
            self.progress.note(
                f"resuming: {len(self.ids) - len(self.todo)} of {len(self.ids)} tasks already done"
            )
        try:
            self._run_backend()
        except RayUnavailable as exc:
            print(f"ink: {exc}", file=sys.stderr)
            return EXIT_USAGE
        finally:
            self.progress.close()
            self.results.compact()  # a resumed task's new line replaces its cancelled one
        order = {task_id: at for at, task_id in enumerate(self.ids)}
        lines = [line for task_id, line in self.results.latest().items() if task_id in order]
        print(summary(sorted(lines, key=lambda line: order[line["id"]]), time.monotonic() - started))
        if self.cancel.aborted:
            print(f"ink batch: cancelled; continue with --resume --out {self.ns.out}", file=sys.stderr)
            return EXIT_CANCELLED
        return EXIT_TASK_ERRORS if self.errors else EXIT_OK

    def _run_backend(self) -> None:
        if self.ns.ray is not None:
            batch = RayBatch(
                self.todo,
                self.options,
                self.ns.retries,
                self.cancel,
                on_start=lambda _task: self.progress.started(),
                on_result=self.record,
                on_tick=self.progress.tick,
                on_note=self.progress.note,
            )
            run_on_ray(batch, self.ns.ray, self.ns.ray_cpus)
        else:
            asyncio.run(self._run_local())

    async def _run_local(self) -> None:
        from ink.batch.local import run_local

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self.interrupt)
        loop.add_signal_handler(signal.SIGTERM, self.interrupt)
        ticker = asyncio.ensure_future(self._tick())
        try:
            await run_local(
                self.todo,
                self.options,
                self.ns.out / "tasks",
                jobs=self.ns.jobs,
                retries=self.ns.retries,
                cancel=self.cancel,
                on_start=lambda _task: self.progress.started(),
                on_result=self.record,
                keep_workspaces=self.ns.keep_workspaces,
            )
        finally:
            await cancel_and_wait(ticker)
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1.0)  # the elapsed time and ETA on the live line
            self.progress.tick()

    def interrupt(self) -> None:
        """First Ctrl+C: interrupt the running tasks and record them; a second: kill them now."""
        if not self.cancel.aborted:
            self.cancel.abort("cancelled")
            self.progress.note("cancelling: interrupting the running tasks (Ctrl+C again to kill them now)")
            return
        kill_descendants()
        os._exit(EXIT_CANCELLED)

    def record(self, result: dict[str, Any]) -> None:
        if not result.get("started", True):
            return
        line = self.results.write(result)
        self.errors += status_of(line) == "error"
        self.progress.finished(line)


def kill_descendants() -> None:
    """SIGKILL every process below this one, at once: the second Ctrl+C's promise."""
    import psutil

    for proc in psutil.Process().children(recursive=True):
        try:
            proc.kill()
        except psutil.Error:
            pass
