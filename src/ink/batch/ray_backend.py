"""``--ray auto|ADDRESS``: one Ray task per item, results streamed back as each finishes.

Ray is imported here only. ``auto`` joins the cluster this machine belongs to, or starts a local instance
for the batch (and stops it at the end); an address joins that cluster. Each task runs ``execute`` on a
worker, in a scratch directory of the worker's own (the workspace is made there; the diff and the session
come back in the result). ink must be installed on the workers (the same version; for a local instance
it is this interpreter's).

Cancelling (Ctrl+C) sets a flag in a small control actor that every running task watches: each interrupts
its run as a user would and returns its partial result, which is recorded. A task that has not returned
after ``CANCEL_GRACE`` is cancelled by force (its ink process, told to exit with its parent, stops too);
tasks not yet started return at once without running.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.tasks import cancel_and_wait
from ink.batch.execute import INTERRUPT_GRACE, RunOptions, execute_with_retries, ink_command
from ink.batch.tasks import Task
from ink.tools import orphans
from ink.tools.processes import ProcessRegistry

CANCEL_GRACE = INTERRUPT_GRACE + 15.0
_WATCH_SECONDS = 0.2
PROBE_SECONDS = 5.0
_EXIT_CANCELLED = 130


class Control:
    """The batch's cancel flag, as a Ray actor every task can read."""

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def is_cancelled(self) -> bool:
        return self.cancelled


def run_task_on_worker(task: Task, options: RunOptions, control: Any, retries: int) -> dict[str, Any]:
    """The body of one Ray task (a plain function: Ray ships it by reference to ``ink`` on the worker).
    The run starts with the worker's own interpreter."""
    options = replace(options, ink=ink_command())
    orphans.enable()  # the worker, as ink batch, is the subreaper of what its tasks start (R35)
    return asyncio.run(_run_task(task, options, control, retries))


def forwarded_env(environ: Mapping[str, str]) -> dict[str, str]:
    """What a worker needs of this machine's environment to reach the model: keys and base URLs
    (``*_API_KEY``, ``*_BASE_URL``). Settings files stay the worker's own (its ``$INK_HOME``)."""
    return {k: v for k, v in environ.items() if k.endswith(("_API_KEY", "_BASE_URL"))}


async def _run_task(task: Task, options: RunOptions, control: Any, retries: int) -> dict[str, Any]:
    cancel = AbortSignal()
    watcher = asyncio.ensure_future(_watch(control, cancel))
    try:
        with tempfile.TemporaryDirectory(prefix="ink-batch-", ignore_cleanup_errors=True) as scratch:
            result = await execute_with_retries(task, Path(scratch) / task.id, options, cancel, retries)
    finally:
        await cancel_and_wait(watcher)
        await ProcessRegistry().terminate_all()  # orphans no command claimed (a worker runs one task at once)
    result["worker"] = os.uname().nodename
    return result


async def _watch(control: Any, cancel: AbortSignal) -> None:
    while not cancel.aborted:
        if await control.is_cancelled.remote():
            cancel.abort("cancelled")
        await asyncio.sleep(_WATCH_SECONDS)


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be joined; the message says which and what to do."""


class RayBatch(msgspec.Struct):
    """What the driver needs of a batch: its tasks and settings, its cancel flag, and where results and
    progress go (``ink.batch.cli`` fills it; this module never imports the command line)."""

    tasks: list[Task]
    options: RunOptions
    retries: int
    cancel: AbortSignal
    on_start: Callable[[Task], None]
    on_result: Callable[[dict[str, Any]], None]
    on_tick: Callable[[], None]
    on_note: Callable[[str], None]


def run_on_ray(batch: RayBatch, address: str, cpus: float) -> None:
    """Raises ``RayUnavailable`` before any task is sent when Ray or the cluster cannot be used."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'ink-agent[ray]'") from None
    try:
        started_here = _connect(ray, address)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError... for one cause
        raise RayUnavailable(f"cannot join the Ray cluster at {address}: {exc}") from None
    try:
        _Driver(ray, batch, cpus).drive()
    finally:
        if started_here is not None:
            ray.shutdown()
            shutil.rmtree(started_here, ignore_errors=True)


def _connect(ray: Any, address: str) -> Path | None:
    """Join the cluster; the temporary folder of the local instance started for this batch, if one was."""
    quiet = {"log_to_driver": False, "include_dashboard": False, "configure_logging": False}
    if address != "auto" or os.environ.get("RAY_ADDRESS"):
        _probe(address if address != "auto" else os.environ["RAY_ADDRESS"])
        ray.init(address=address, **quiet)
        return None
    try:
        ray.init(address="auto", **quiet)
        return None
    except ConnectionError:
        _private_instance()
        temporary = Path(tempfile.mkdtemp(prefix="ink-ray-"))
        ray.init(_temp_dir=str(temporary), **quiet)
        return temporary


def _private_instance() -> None:
    """The local instance a batch starts is its own: a token of its own (in the environment its
    processes inherit) instead of Ray's default of making or reusing ``~/.ray/auth_token``, which another
    cluster may have left there and which would stay behind for the next one; a temporary folder of its
    own instead of ``/tmp/ray``, where another instance's sessions live."""
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
    import ray._raylet  # Ray read the mode when "auto" looked for a cluster (pinned 2.60): read it again

    ray._raylet.Config.initialize("")  # type: ignore[attr-defined]


def _probe(address: str) -> None:
    """Ray retries an address where nothing listens for ever: find out first, in a bounded time."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not port.isdecimal():
        raise ValueError(f"{address!r} is not HOST:PORT")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=PROBE_SECONDS).close()
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {host}:{port} ({exc.strerror or exc})") from None


class _Driver:
    def __init__(self, ray: Any, batch: RayBatch, cpus: float) -> None:
        self.ray, self.batch = ray, batch
        self.control = ray.remote(num_cpus=0)(Control).remote()
        self.remote = ray.remote(num_cpus=cpus, max_retries=0)(run_task_on_worker)
        self.options = replace(batch.options, env={**forwarded_env(os.environ), **batch.options.env})
        self.pending: dict[Any, Task] = {}
        self.deadline: float | None = None

    def drive(self) -> None:
        for task in self.batch.tasks:
            ref = self.remote.remote(task, self.options, self.control, self.batch.retries)
            self.pending[ref] = task
            self.batch.on_start(task)
        while self.pending:
            try:
                self._collect()
            except KeyboardInterrupt:
                self._interrupt()

    def _collect(self) -> None:
        done, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=1.0)
        for ref in done:
            task = self.pending.pop(ref)
            self.batch.on_result(self._result(ref, task))
        self.batch.on_tick()
        if self.deadline is not None and time.monotonic() > self.deadline:
            self._force_cancel()

    def _result(self, ref: Any, task: Task) -> dict[str, Any]:
        try:
            result: dict[str, Any] = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            cancelled = self.batch.cancel.aborted
            error = "force-cancelled on the cluster" if cancelled else f"the Ray task failed: {exc}"
            return {
                "id": task.id,
                "stopReason": None,
                "verdict": None,
                "error": error[:2000],
                "cancelled": cancelled,
                "crashed": not cancelled,
                "stage": "ray",
            }
        return result

    def _interrupt(self) -> None:
        if self.batch.cancel.aborted:  # the second Ctrl+C: no more waiting
            self._force_cancel()
            os._exit(_EXIT_CANCELLED)
        self.batch.cancel.abort("cancelled")
        self.batch.on_note("cancelling: interrupting the running tasks (Ctrl+C again to stop at once)")
        self.control.cancel.remote()
        self.deadline = time.monotonic() + CANCEL_GRACE

    def _force_cancel(self) -> None:
        for ref in list(self.pending):
            self.ray.cancel(ref, force=True)
        self.deadline = None
