"""``--jobs N``: the tasks on this machine, at most N at once, each its own ink process and group."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ink.agent.abort import AbortSignal
from ink.batch.execute import RunOptions, execute_with_retries
from ink.batch.tasks import Task
from ink.batch.workspace import remove_tree
from ink.tools.processes import ProcessRegistry


async def run_local(
    tasks: list[Task],
    options: RunOptions,
    scratch: Path,
    *,
    jobs: int,
    retries: int,
    cancel: AbortSignal,
    on_start: Callable[[Task], None],
    on_result: Callable[[dict[str, Any]], None],
    keep_workspaces: bool = False,
) -> None:
    """Run ``tasks``; ``on_result`` gets each started task's result as it ends. Returns when every task
    has ended or, once ``cancel`` aborts, when the running ones have been interrupted (the rest never
    start)."""
    slots = asyncio.Semaphore(jobs)

    async def one(task: Task) -> None:
        async with slots:
            if cancel.aborted:
                return
            on_start(task)
            root = scratch / task.id
            result = await execute_with_retries(task, root, options, cancel, retries)
            if not keep_workspaces:
                await asyncio.to_thread(remove_tree, root)
            on_result(result)

    try:
        await asyncio.gather(*(one(task) for task in tasks))
    finally:  # escaped orphans no task claimed (each task ends only its own): ink batch is their subreaper
        await ProcessRegistry().terminate_all()
