"""A fresh workspace per task, and what the run changed in it.

The workspace is a copy of a local directory (uncommitted and untracked files included; regular files,
folders and symlinks only, within a byte budget: ``ink.batch.copying``), or a clone of a git repository
checked out at ``rev``; the original is only ever read. What the run changed is measured against a
baseline taken after ``setup``, in a shadow git store *outside* the workspace (its own ``--git-dir``), so
it works without a repository, honours the workspace's ``.gitignore`` files, and never touches a
repository's index, refs or hooks.

The diff is git's own bytes (``git diff --binary`` written to a file): binary files, CRLF line ends and
text in any encoding come back exactly, so ``git apply`` reproduces the run's changes. The store reads no
user or system configuration and its ``info/attributes`` unsets every attribute that converts bytes
(``text``, ``eol``, ``ident``, filters, ``working-tree-encoding``) whatever the workspace's
``.gitattributes`` say.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from pathlib import Path

from ink.agent.abort import AbortSignal
from ink.batch.copying import CopyError, copy_tree
from ink.batch.tasks import Task, is_remote
from ink.checkpoints.git import ATTRIBUTES  # the store's info/attributes: no byte converted, as there
from ink.tools.processes import ProcessRegistry
from ink.tools.shell import run_process

MAX_DIFF_BYTES = 256 << 20  # of a diff file; a longer one is cut at a line end, and the result says so
DEFAULT_COPY_BUDGET = 10 << 30  # bytes of one workspace copy (--max-copy-bytes)
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
_SEALED_GIT = (
    "-c",
    f"core.attributesFile={os.devnull}",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.symlinks=true",
)
_SEALED_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,  # the user's settings (autocrlf, filters, diff options) must not apply
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_CONFIG_COUNT": "0",
    "GIT_CONFIG_PARAMETERS": "",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
    "GIT_NAMESPACE": "",
}


class WorkspaceError(Exception):
    """The workspace could not be made; the message says which step and why."""


def _users_git(name: str) -> bool:
    """A ``GIT_*`` variable of the user's environment (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``:
    set when ``ink batch`` runs from a git hook) would point the copy's clone and checkout at another
    repository; the checkpoint store drops them the same way (``ink.checkpoints.git``)."""
    return name.startswith("GIT_")


class Git:
    """Runs git in one process registry, so an abort ends it like any tool (R35)."""

    def __init__(self, registry: ProcessRegistry, signal: AbortSignal) -> None:
        self.registry, self.signal = registry, signal

    async def run(
        self,
        *args: str,
        cwd: Path,
        what: str,
        config: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> str:
        result = await run_process(
            ["git", *_QUIET_GIT, *config, *args],
            cwd,
            self.signal,
            self.registry,
            GIT_TIMEOUT,
            env={**_GIT_ENV, **(env or {})},
            unset=_users_git,
            label=f"git {next(a for a in args if not a.startswith('--'))}",
        )
        if result.interrupted:
            raise WorkspaceError(f"{what}: interrupted")
        if result.exit_code != 0:
            detail = result.output.strip().splitlines()[-1:] or [f"exit status {result.exit_code}"]
            raise WorkspaceError(f"{what}: {detail[0][:300]}")
        return result.output


async def prepare(
    task: Task,
    workspace: Path,
    git: Git,
    avoid: tuple[Path, ...] = (),
    budget: int = DEFAULT_COPY_BUDGET,
) -> list[str]:
    """Make ``workspace`` a fresh copy or checkout of the task's repository; returns notes on what a copy
    left out (FIFOs, devices, sockets). A copy leaves out the directories in ``avoid`` (the batch's own
    output, when it lies inside the repository) and the workspace itself, and stops when ``git.signal``
    aborts. Raises ``WorkspaceError``."""
    await asyncio.to_thread(_clear, workspace)
    local = Path(task.repo) if not is_remote(task.repo) else None
    if local is not None and not local.is_dir():
        raise WorkspaceError(f"repo {task.repo}: no such directory")
    if local is not None and task.rev is None:
        avoided = {p.resolve() for p in (*avoid, workspace)}
        return await _copy(local.resolve(), workspace, git.signal, avoided, budget)
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
    return []


async def _copy(
    source: Path, workspace: Path, signal: AbortSignal, avoid: set[Path], budget: int
) -> list[str]:
    stop = threading.Event()
    forget = signal.on_abort(lambda _reason: stop.set())
    if signal.aborted:
        stop.set()
    try:
        return await asyncio.to_thread(
            copy_tree,
            source,
            workspace,
            budget=budget,
            stop=stop,
            skip=avoid.__contains__,  # source resolved
        )
    except CopyError as exc:
        raise WorkspaceError(f"copying {source}: {exc}") from None
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise WorkspaceError(f"copying {source}: {exc.strerror or exc}{where}") from None
    finally:
        forget()


def _clear(workspace: Path) -> None:
    """A retried or resumed task starts from nothing: what an earlier attempt left goes."""
    remove_tree(workspace)
    workspace.parent.mkdir(parents=True, exist_ok=True)


class Baseline:
    """The workspace as it was before the run, in a git store kept beside it (never inside)."""

    def __init__(self, workspace: Path, store: Path) -> None:
        self.workspace, self.store = workspace, store

    async def _git(self, git: Git, *args: str, what: str) -> str:
        env = {
            **_SEALED_ENV,
            "GIT_DIR": str(self.store),
            "GIT_WORK_TREE": str(self.workspace),
            "GIT_INDEX_FILE": str(self.store / "index"),
            "GIT_OBJECT_DIRECTORY": str(self.store / "objects"),
        }
        return await git.run(*args, cwd=self.workspace, what=what, config=_SEALED_GIT, env=env)

    async def take(self, git: Git) -> None:
        await asyncio.to_thread(remove_tree, self.store)
        await git.run(
            f"--git-dir={self.store}",
            "init",
            "--quiet",
            cwd=self.workspace.parent,
            what="recording the baseline",
        )
        (self.store / "info").mkdir(exist_ok=True)
        (self.store / "info" / "attributes").write_bytes(ATTRIBUTES)
        await self._git(git, "add", "--all", what="recording the baseline")
        await self._git(
            git,
            "commit",
            "--quiet",
            "--allow-empty",
            "--no-verify",
            "-m",
            "baseline",
            what="recording the baseline",
        )

    async def diff(self, git: Git) -> tuple[bytes, int]:
        """Everything changed since ``take`` (created, deleted, modified, mode changes, binary files) as
        git's bytes, and their full size: at most ``MAX_DIFF_BYTES``, cut at a line end beyond."""
        await self._git(git, "add", "--all", what="collecting the diff")
        out = self.store.parent / "run.diff"
        await self._git(
            git,
            "diff",
            "--cached",
            "--binary",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            f"--output={out}",
            "HEAD",
            what="collecting the diff",
        )
        return await asyncio.to_thread(_read_cut, out, MAX_DIFF_BYTES)


def _read_cut(path: Path, limit: int) -> tuple[bytes, int]:
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        data = file.read(limit)
    if size > limit:
        data = data[: data.rfind(b"\n") + 1]
    return data, size


def remove_tree(path: Path) -> None:
    """Best effort, and a tree a tool made read-only still goes."""

    def force(func: object, target: str, _info: object) -> None:
        os.chmod(os.path.dirname(target) or ".", 0o700)
        os.chmod(target, 0o700)
        shutil.rmtree(target) if os.path.isdir(target) else os.unlink(target)

    if path.exists():
        shutil.rmtree(path, onerror=force)
