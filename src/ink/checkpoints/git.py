"""The git commands of the checkpoint store, sealed off from everything but the store and the workspace.

git reads configuration from the system, the user (``~/.gitconfig``, ``$XDG_CONFIG_HOME/git/``), the
environment (``GIT_CONFIG_COUNT`` and its keys, ``GIT_DIR``, ``GIT_OBJECT_DIRECTORY``, ...) and the
repository's attributes: any of them could convert bytes on their way in or out (line endings, filters,
``ident``, encodings), point the store elsewhere or run a hook. None applies here: every ``GIT_*``
variable of ink's environment is dropped, no system or user file is read, and the store's own
``info/attributes`` (``ATTRIBUTES``, written by ``ShadowRepo``) outranks every ``.gitattributes``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

from ink import lineage

GIT_TIMEOUT = 300.0
ALLOC_LIMIT = "256m"  # the largest block one git of the store may allocate or map (GIT_ALLOC_LIMIT)
FIRST_LOOK = 0.05  # a store command still running this long is looked at (``run``'s ``watch``) ...
LAST_LOOK = 0.5  # ... then twice as long each time, up to this
RELOOK = 0.002  # and this soon again after it was let past a FIFO
_HUGE = "a file git reads its settings from (a .gitignore or .gitattributes of the workspace) may be huge"
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,  # the user's settings (autocrlf, filters, hooks) must not apply
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_LITERAL_PATHSPECS": "1",  # a file named "*.py" is that file, not a pattern
    "GIT_AUTHOR_NAME": "ink",
    "GIT_AUTHOR_EMAIL": "ink@localhost",
    "GIT_COMMITTER_NAME": "ink",
    "GIT_COMMITTER_EMAIL": "ink@localhost",
    # git reads each .gitignore whole into one block: a sparse one of a gigabyte (no disk used) took 1 GB
    # of memory and seconds for each of a snapshot's commands. Nothing a snapshot does needs a block
    # this large (files over 5 MB are left out; packs are mapped in windows of 64 MiB): git stops
    # at once, saying so, and the snapshot with it.
    "GIT_ALLOC_LIMIT": ALLOC_LIMIT,
}
_CONFIG = (
    *("-c", "core.hooksPath=/dev/null", "-c", "core.autocrlf=false", "-c", "core.fsmonitor=false"),
    *("-c", "core.looseCompression=1"),  # zlib's fastest level: the first snapshot about twice as fast
    # $XDG_CONFIG_HOME/git/attributes applies without any configuration (the store's own file outranks
    # it anyway); what the file system under $INK_HOME was like when the store was made decides nothing
    *("-c", f"core.attributesFile={os.devnull}", "-c", "core.safecrlf=false"),
    *("-c", "core.symlinks=true", "-c", "core.fileMode=true"),
    *("-c", "core.packedGitWindowSize=64m"),  # under GIT_ALLOC_LIMIT: a pack is mapped a window at a time
)
ATTRIBUTES = b"* -text -eol -crlf -ident -filter -working-tree-encoding\n"
"""The store's ``info/attributes``: for every path, no attribute that converts bytes between the workspace
and the store (``binary``, ``text=auto``, ``eol=crlf``, ``ident``, ``filter=...``,
``working-tree-encoding=...`` in any ``.gitattributes``: this file outranks them all)."""


class ShadowError(Exception):
    """A git command of the shadow store failed; the message has git's words."""


def command(
    git_dir: Path,
    workspace: Path | None,
    index: Path,
    args: tuple[str, ...],
    config: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, str], Path]:
    """The argv, environment and folder of ``git args`` on the store (``workspace``: its work tree, if
    the command needs one) with ``index``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full_env = {**clean, **_ENV, "GIT_INDEX_FILE": str(index), **(env or {})}
    tree = (f"--work-tree={workspace}",) if workspace is not None else ()
    argv = ["git", *_CONFIG, *config, f"--git-dir={git_dir}", *tree, *args]
    return argv, full_env, workspace if workspace is not None else git_dir.parent


async def run(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    stdin: bytes | None = None,
    *,
    long: bool = False,
    watch: Callable[[int], bool] | None = None,
) -> str:
    """Run a git command of ``command``; its output. Raises ``ShadowError``. ``long``: a command that
    may run long with nothing to write (``add``): it gets a parent-death signal (``ink.lineage``; started
    from the event loop's thread), so a kill -9 of ink does not leave it storing a workspace for nobody
    (others end of themselves, or of a broken pipe once ink is gone). The signal costs a fork instead
    of a vfork: a few ms, never on an abort's path. ``watch(pid)`` is called while the command runs
    longer than ``FIRST_LOOK`` (``fifos.Watch.check``: True, it was let past a FIFO; it raises to end
    the command)."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=lineage.leader_preexec() if long else None,
        )
    )
    try:
        proc = await asyncio.shield(starting)
    except asyncio.CancelledError:  # asyncio's own undo of a half-made start races as _ended says
        await _ended(await starting)
        raise
    try:
        out, err = await _communicate(proc, stdin, watch)
    except BaseException:
        await _ended(proc)
        raise
    if proc.returncode != 0:
        verb = next((a for a in argv[1:] if not a.startswith("-") and "=" not in a), "")
        said = err.decode("utf-8", "replace").strip()
        if "over limit" in said or "Out of memory" in said:  # GIT_ALLOC_LIMIT (``_ENV``)
            said = f"it would need a block of memory over {ALLOC_LIMIT}: {_HUGE} ({said[:200]})"
        raise ShadowError(f"git {verb}: {said[:500]}")
    return out.decode("utf-8", "surrogateescape")


async def _communicate(
    proc: asyncio.subprocess.Process, stdin: bytes | None, watch: Callable[[int], bool] | None
) -> tuple[bytes, bytes]:
    """``proc.communicate`` within ``GIT_TIMEOUT``, looking at it with ``watch`` every so often: first
    after ``FIRST_LOOK`` (most commands are done by then), then twice as long each time up to
    ``LAST_LOOK``, and at once again after it was let past a FIFO (git soon opens the next one)."""
    talking = asyncio.ensure_future(proc.communicate(stdin))
    loop = asyncio.get_running_loop()
    deadline, pause = loop.time() + GIT_TIMEOUT, FIRST_LOOK
    try:
        while (left := deadline - loop.time()) > 0:
            done, _ = await asyncio.wait({talking}, timeout=min(pause, left) if watch else left)
            if done:
                return talking.result()
            if watch is not None:
                pause = RELOOK if watch(proc.pid) else min(pause * 2, LAST_LOOK)
        raise ShadowError(f"git gave no answer in {GIT_TIMEOUT:.0f} s")
    finally:
        if not talking.done():
            talking.cancel()


async def _ended(proc: asyncio.subprocess.Process) -> None:
    """Kill ``proc`` (cancelled: an exit, a rewind) and wait for it. ``os.kill``, not ``proc.kill``:
    ``Popen.send_signal`` first polls, and a poll can reap a git that just exited behind the back of
    asyncio's watcher thread, which then logs "Unknown child process" on the user's terminal. Until that
    thread reaps it, the pid stays this child's."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
