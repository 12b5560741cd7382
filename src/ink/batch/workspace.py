"""A fresh workspace per task, and what the run changed in it.

The workspace is a copy of a local directory (uncommitted and untracked files included), or a clone of a
git repository checked out at ``rev``; the original is only ever read. What the run changed is measured
against a baseline taken after ``setup``, in a shadow git store *outside* the workspace (its own
``--git-dir``), so it works without a repository, honours the workspace's ``.gitignore`` files, and never
touches a repository's index, refs or hooks.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from ink.agent.abort import AbortSignal
from ink.batch.tasks import Task, is_remote
from ink.tools.processes import ProcessRegistry
from ink.tools.shell import run_process

MAX_DIFF_CHARS = 2_000_000
GIT_TIMEOUT = 600.0
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # a private repository fails instead of waiting for a password
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "ink batch",
    "GIT_AUTHOR_EMAIL": "ink-batch@localhost",
    "GIT_COMMITTER_NAME": "ink batch",
    "GIT_COMMITTER_EMAIL": "ink-batch@localhost",
}
_QUIET_GIT = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.safecrlf=false",
)


class WorkspaceError(Exception):
    """The workspace could not be made; the message says which step and why."""


class Git:
    """Runs git in one process registry, so an abort ends it like any tool (R35)."""

    def __init__(self, registry: ProcessRegistry, signal: AbortSignal) -> None:
        self.registry, self.signal = registry, signal

    async def run(self, *args: str, cwd: Path, what: str) -> str:
        result = await run_process(
            ["git", *_QUIET_GIT, *args],
            cwd,
            self.signal,
            self.registry,
            GIT_TIMEOUT,
            env=_GIT_ENV,
            label=f"git {args[0]}",
            output_cap=MAX_DIFF_CHARS * 2,
        )
        if result.interrupted:
            raise WorkspaceError(f"{what}: interrupted")
        if result.exit_code != 0:
            detail = result.output.strip().splitlines()[-1:] or [f"exit status {result.exit_code}"]
            raise WorkspaceError(f"{what}: {detail[0][:300]}")
        return result.output


async def prepare(task: Task, workspace: Path, git: Git, avoid: tuple[Path, ...] = ()) -> None:
    """Make ``workspace`` a fresh copy or checkout of the task's repository. A copy leaves out the
    directories in ``avoid`` (the batch's own output, when it lies inside the repository) and the
    workspace itself. Raises ``WorkspaceError``."""
    await asyncio.to_thread(_clear, workspace)
    local = Path(task.repo) if not is_remote(task.repo) else None
    if local is not None and not local.is_dir():
        raise WorkspaceError(f"repo {task.repo}: no such directory")
    if local is not None and task.rev is None:
        try:
            skip = _skipping({p.resolve() for p in (*avoid, workspace)})
            await asyncio.to_thread(shutil.copytree, local, workspace, symlinks=True, ignore=skip)
        except (OSError, shutil.Error, RecursionError) as exc:
            raise WorkspaceError(f"copying {task.repo}: {exc}") from None
        return
    await git.run(
        "clone",
        "--quiet",
        "--no-hardlinks",
        "--",
        task.repo,
        str(workspace),
        cwd=workspace.parent,
        what=f"cloning {task.repo}",
    )
    if task.rev is not None:
        await git.run(
            "checkout", "--quiet", "--detach", task.rev, "--", cwd=workspace, what=f"checking out {task.rev}"
        )


def _clear(workspace: Path) -> None:
    """A retried or resumed task starts from nothing: what an earlier attempt left goes."""
    remove_tree(workspace)
    workspace.parent.mkdir(parents=True, exist_ok=True)


def _skipping(paths: set[Path]) -> Callable[[str, list[str]], set[str]]:
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {name for name in names if (Path(directory) / name).resolve() in paths}

    return ignore


class Baseline:
    """The workspace as it was before the run, in a git store kept beside it (never inside)."""

    def __init__(self, workspace: Path, store: Path) -> None:
        self.workspace, self.store = workspace, store

    def _args(self, *args: str) -> tuple[str, ...]:
        return (f"--git-dir={self.store}", f"--work-tree={self.workspace}", *args)

    async def take(self, git: Git) -> None:
        await asyncio.to_thread(remove_tree, self.store)
        await git.run(
            f"--git-dir={self.store}",
            "init",
            "--quiet",
            cwd=self.workspace.parent,
            what="recording the baseline",
        )
        await git.run(*self._args("add", "--all"), cwd=self.workspace, what="recording the baseline")
        await git.run(
            *self._args("commit", "--quiet", "--allow-empty", "--no-verify", "-m", "baseline"),
            cwd=self.workspace,
            what="recording the baseline",
        )

    async def diff(self, git: Git) -> str:
        """A unified diff of everything changed since ``take`` (created, deleted, modified, mode changes),
        cut at ``MAX_DIFF_CHARS`` with a note."""
        await git.run(*self._args("add", "--all"), cwd=self.workspace, what="collecting the diff")
        text = await git.run(
            *self._args("diff", "--cached", "--no-color", "--no-ext-diff", "HEAD"),
            cwd=self.workspace,
            what="collecting the diff",
        )
        if len(text) > MAX_DIFF_CHARS:
            return text[:MAX_DIFF_CHARS] + f"\n[diff cut at {MAX_DIFF_CHARS} characters of {len(text)}]\n"
        return text


def remove_tree(path: Path) -> None:
    """Best effort, and a tree a tool made read-only still goes."""

    def force(func: object, target: str, _info: object) -> None:
        os.chmod(os.path.dirname(target) or ".", 0o700)
        os.chmod(target, 0o700)
        shutil.rmtree(target) if os.path.isdir(target) else os.unlink(target)

    if path.exists():
        shutil.rmtree(path, onerror=force)
