"""A shadow git store: snapshots of a workspace in a repository of ink's own, never the user's.

The store lives under ``$INK_HOME/checkpoints/repos/`` (one per workspace directory) and is driven with
``--git-dir`` and ``--work-tree``, so it works in a directory that is no repository, and a repository's own
index, HEAD, refs, stash and hooks are never read or written (``.git`` itself is never part of a snapshot:
git refuses to add it). What a snapshot leaves out: what the workspace's ``.gitignore`` files ignore,
ink's own ``.ink/`` directory, and files over ``MAX_FILE_BYTES`` (named in the snapshot's report). git keeps
a file's content, whether it is executable, and symlinks; other mode bits are not restored.

Each snapshot is a commit under a ref of its own (``refs/ink/<key>``), so ``git gc`` keeps it. Each session
has its own index file (the stat cache that makes a later snapshot of an unchanged tree cheap). A kill -9
in the middle of a snapshot leaves at worst a stale ``index-*.lock``, removed by the next snapshot of
the same session (a session is only ever open in one ink process), and an unreferenced object or two.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import signal
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import msgspec

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_NEW_FILES = 100_000  # more files new to the store in one snapshot: not a project (ink started in ~?)
FEW_PATHS = 64  # sizes of this many changed files are read in the event loop (an abort's receipt waits)
BULK_FILES = 200  # this many new or changed files in one snapshot go into one pack, not a file each
GIT_TIMEOUT = 300.0
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,  # the user's settings (autocrlf, filters, hooks) must not apply
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_LITERAL_PATHSPECS": "1",  # a file named "*.py" is that file, not a pattern
    "GIT_AUTHOR_NAME": "ink",
    "GIT_AUTHOR_EMAIL": "ink@localhost",
    "GIT_COMMITTER_NAME": "ink",
    "GIT_COMMITTER_EMAIL": "ink@localhost",
}
_CONFIG = (
    *("-c", "core.hooksPath=/dev/null", "-c", "core.autocrlf=false", "-c", "core.fsmonitor=false"),
    *("-c", "core.looseCompression=1"),  # zlib's fastest level: the first snapshot about twice as fast
)
# git add streams every file over core.bigFileThreshold into one pack for the whole command instead of
# writing a loose object file each (a create, a write, a link, an unlink): for the first snapshot of a
# 10,000-file workspace 2-3x faster, much more on a busy disk. Only for many files: each such add makes a
# pack, and a store with many small packs looks objects up more slowly.
_BULK = ("-c", "core.bigFileThreshold=1", "-c", "pack.compression=1")
STALE_PACK_SECONDS = 2 * 300.0  # an unfinished pack this old was left by a killed git (GIT_TIMEOUT ends any)
ALWAYS_EXCLUDED = (".ink/",)
Listed = Callable[[str, list[str]], Awaitable[None]]  # (the snapshot the index held, paths that differ)


class ShadowError(Exception):
    """A git command of the shadow store failed; the message has git's words."""


class TooManyFiles(ShadowError):
    """The workspace has more new files than one snapshot takes (``MAX_NEW_FILES``); nothing was stored."""


class Snapshot(msgspec.Struct, frozen=True):
    commit: str
    skipped: tuple[str, ...] = ()  # files over MAX_FILE_BYTES, left out


class RestoreReport(msgspec.Struct, frozen=True):
    """What a restore did, relative to the workspace root, and the snapshot that undoes it."""

    written: tuple[str, ...] = ()  # changed back, or brought back after a deletion
    removed: tuple[str, ...] = ()  # created since the checkpoint, so removed
    undo: str = ""  # the commit of the workspace as it was just before the restore
    skipped: tuple[str, ...] = ()
    after: str = ""  # the commit of the workspace as the restore left it


def shadow_repo_for(ink_home: Path, workspace: Path, session_id: str, *, saved: bool = True) -> ShadowRepo:
    """``saved``: the session is kept, and so is its index; otherwise ``retire`` drops it at the end."""
    workspace = workspace.resolve()
    digest = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:24]
    git_dir = ink_home / "checkpoints" / "repos" / f"{digest}.git"
    return ShadowRepo(git_dir, workspace, session_id, excluded=ink_folders(ink_home, workspace), saved=saved)


def ink_folders(ink_home: Path, workspace: Path) -> tuple[str, ...]:
    """What snapshots leave out as ink's own: the project's ``.ink/``, and ``$INK_HOME`` when it lies inside
    the workspace (ink started in the home folder): its sessions, and this very store, change while a
    snapshot reads them, and a rewind must never put them back."""
    home = ink_home.resolve()
    if home == workspace or not home.is_relative_to(workspace):
        return ALWAYS_EXCLUDED
    inside = re.sub(r"([\\*?\[\]!# ])", r"\\\1", home.relative_to(workspace).as_posix())
    return (*ALWAYS_EXCLUDED, f"/{inside}/")


class ShadowRepo:
    def __init__(
        self,
        git_dir: Path,
        workspace: Path,
        session_id: str,
        excluded: tuple[str, ...] = ALWAYS_EXCLUDED,
        *,
        saved: bool = True,
    ) -> None:
        self.git_dir, self.workspace, self.excluded, self.saved = git_dir, workspace, excluded, saved
        self.index = git_dir / f"index-{session_id}"
        self._index_commit: str | None = None  # the snapshot the index holds, while nothing staged since
        self._swept = False

    async def snapshot(self, ref: str) -> Snapshot:
        """Record the workspace as it is now under ``refs/ink/<ref>``. Raises ``ShadowError``."""
        return await self.commit_staged(ref, await self.stage())

    async def stage(self, listed: Listed | None = None) -> tuple[str, ...]:
        """The first half of a snapshot: this session's index made the workspace as it is now (what
        ``staged_changes`` compares and ``commit_staged`` records). Returns the files left out as too
        large. Raises ``ShadowError``.

        ``listed(commit, paths)`` is awaited, before anything is staged, the paths that differ from
        ``commit`` (created, modified, deleted; too large ones left out) when the index still holds the
        last snapshot this object recorded: the listing every snapshot makes anyway says it, with no git
        command more."""
        await self._ready()
        since, self._index_commit = self._index_commit, None  # from here on the index moves
        skipped, pending, changed = await self._exclude_large_files()
        if listed is not None and since is not None:
            await listed(since, changed)
        if pending >= BULK_FILES or not self._swept:  # a few files (an abort's receipt) skip the sweep
            await asyncio.to_thread(self._drop_stale_packs)
            self._swept = True
        # a large file whose name holds a newline cannot be a line of the exclude file: left out by a
        # pathspec, whose magic GIT_LITERAL_PATHSPECS would switch off ("." and ``literal`` need none)
        every = (".", *(f":(top,exclude,literal){p}" for p in skipped if "\n" in p))
        magic = {"GIT_LITERAL_PATHSPECS": "0"} if len(every) > 1 else {}
        try:
            await self._git(
                *("add", "--all", "--ignore-errors", "--", *every),
                config=_BULK if pending >= BULK_FILES else (),
                env=magic,
            )
        except ShadowError:
            if pending < BULK_FILES:
                raise
            # git dies, --ignore-errors notwithstanding, when a file shrinks while it reads it (a short read
            # into the pack; a loose add would die too, of SIGBUS on its mmap): once more, the plain way
            await self._git("add", "--all", "--ignore-errors", "--", *every, env=magic)
        return skipped

    async def staged_changes(self, old: str) -> list[str]:
        """``changed(old, <the staged workspace>)`` before it is committed: one git command, not four."""
        out = await self._git("diff-index", "--cached", "--name-only", "--no-renames", "-z", old)
        return sorted(p for p in out.split("\0") if p)

    async def commit_staged(self, ref: str, skipped: tuple[str, ...]) -> Snapshot:
        """The second half of a snapshot: what ``stage`` put in the index, recorded under ``ref``."""
        tree = (await self._git("write-tree")).strip()
        commit = (await self._git("commit-tree", tree, "-m", f"ink checkpoint {ref}")).strip()
        await self._git("update-ref", f"refs/ink/{ref}", commit)
        self._index_commit = commit
        return Snapshot(commit, skipped)

    async def changed(self, old: str, new: str) -> list[str]:
        """Paths that differ between two snapshots (created, deleted, modified, mode changed)."""
        out = await self._git("diff-tree", "-r", "--name-only", "--no-renames", "-z", old, new)
        return sorted(p for p in out.split("\0") if p)

    async def restore(self, commit: str, undo_ref: str) -> RestoreReport:
        """Make the workspace what it was at ``commit``: changed files written back, deleted ones brought
        back, files created since removed. First records the workspace as it is (``undo_ref``), so the
        restore itself can be undone. Files the snapshots left out (ignored, too large) are not touched."""
        now = await self.snapshot(undo_ref)
        created = await self._names("--diff-filter=A", commit, now.commit)  # exist now, not then
        written = await self._names("--diff-filter=DMT", commit, now.commit)
        # created files go first: their folders are as the snapshot saw them. Written first, a folder could
        # have become a file or a symlink (to outside the workspace: its files would be removed there)
        await asyncio.to_thread(self._remove, created)
        scratch = self.git_dir / f"restore-{os.getpid()}.index"
        try:  # only what differs is written: unchanged files keep their times (no needless rebuilds)
            await self._git("read-tree", commit, index=scratch)
            await self._git("checkout-index", "--force", "-z", "--stdin", index=scratch, stdin=_z(written))
        finally:
            scratch.unlink(missing_ok=True)
        done = await self.snapshot(f"{undo_ref}-done")  # the session's index now matches the restored tree
        return RestoreReport(tuple(written), tuple(created), now.commit, now.skipped, done.commit)

    def retire(self) -> None:
        """The end of a session that is not saved (``--no-session``), its snapshots all done: its index
        file becomes the store's one ``index-unsaved`` (a later session's seed, and no file left behind
        per process), and its list of large files goes."""
        if self.saved:
            return
        (self.git_dir / f"large-{self.index.name}").unlink(missing_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.index.replace(self.git_dir / "index-unsaved")

    # -- mechanism ----------------------------------------------------------------------------------

    async def _names(self, status_filter: str, old: str, new: str) -> list[str]:
        out = await self._git("diff-tree", "-r", "--name-only", "--no-renames", "-z", status_filter, old, new)
        return sorted(p for p in out.split("\0") if p)

    def _remove(self, paths: list[str]) -> None:
        root = self.workspace
        for rel in paths:
            target = root / rel
            if root not in target.parents:  # git names paths inside the tree; never trust more than that
                continue
            try:
                target.unlink()
            except FileNotFoundError:
                continue
            parent = target.parent
            while parent != root and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent

    async def _ready(self) -> None:
        if not (self.git_dir / "HEAD").exists():
            private_dirs(self.git_dir.parent)  # $INK_HOME too, when ink made none yet
            await self._git("init", "--quiet", "--bare", work_tree=False)
        exclude = self.git_dir / "info" / "exclude"
        wanted = _lines(self.excluded)  # $INK_HOME's name may be no UTF-8
        if not exclude.exists() or exclude.read_bytes() != wanted:  # $INK_HOME may have moved since
            exclude.parent.mkdir(exist_ok=True)
            exclude.write_bytes(wanted)
        lock = self.index.with_name(self.index.name + ".lock")
        lock.unlink(missing_ok=True)  # left by a kill -9 of this session's own snapshot
        if not self.index.exists():
            await asyncio.to_thread(self._seed_index)

    def _drop_stale_packs(self) -> None:
        """A kill -9 during a bulk add leaves its unfinished pack (``tmp_pack_*``), which git never reads:
        removed once old enough that no other session's git can still be writing it (sessions in the
        same workspace share the store)."""
        now = time.time()
        for unfinished in (self.git_dir / "objects" / "pack").glob("tmp_*"):
            with contextlib.suppress(OSError):
                if now - unfinished.stat().st_mtime > STALE_PACK_SECONDS:
                    unfinished.unlink()

    def _seed_index(self) -> None:
        """A new session starts from the newest index of an earlier one: its stat cache is as good for
        this session (``git add --all`` corrects whatever changed since), so the first snapshot of a
        workspace seen before does not read every file again."""
        earlier = [p for p in self.git_dir.glob("index-*") if not p.name.endswith(".lock")]
        if not earlier:
            return
        newest = max(earlier, key=lambda p: p.stat().st_mtime)
        scratch = self.index.with_name(f"{self.index.name}.seed-{os.getpid()}")
        try:
            shutil.copyfile(newest, scratch)
            scratch.replace(self.index)  # whole or not at all: a kill in the copy leaves no torn index
        except OSError:
            scratch.unlink(missing_ok=True)  # a slower first snapshot, nothing worse

    async def _exclude_large_files(self) -> tuple[tuple[str, ...], int, list[str]]:
        """Leave out files over the size limit: named in this session's exclude file for the snapshot,
        and dropped from its index if an earlier snapshot had them while they were small. Returns them,
        how many files the snapshot has to read (new to the index, or changed since), and every path that
        differs from the index (those, and the deleted ones), the new large ones left out (a file that
        grew too large leaves the snapshot: it differs)."""
        large = self.git_dir / f"large-{self.index.name}"
        large.unlink(missing_ok=True)  # listed afresh: a file may have shrunk
        listing = await self._git(
            "ls-files", "-z", "-t", "--others", "--modified", "--deleted", "--exclude-standard"
        )
        tagged = [(entry[:1], entry[2:]) for entry in listing.split("\0") if entry]
        paths = list(dict.fromkeys(path for tag, path in tagged if tag in ("?", "C")))  # "R": deleted
        if len(paths) > MAX_NEW_FILES:
            raise TooManyFiles(
                f"{len(paths):,} files in {self.workspace} are new to the checkpoint store (the limit is "
                f"{MAX_NEW_FILES:,}): checkpoints are off for this session"
            )
        few = len(paths) <= FEW_PATHS  # a handful of lstat calls cost less than a hop to a thread
        big = self._large(paths) if few else await asyncio.to_thread(self._large, paths)
        # bytes: a name git gave that is not UTF-8 holds surrogates (``_git``), which only fsencode writes
        large.write_bytes(_lines(f"/{_glob_escape(p)}" for p in big if "\n" not in p))
        if big:
            await self._git(
                "rm",
                "--cached",
                "--force",  # our index only: nothing to lose
                "--quiet",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                stdin=_z(big),
            )
        new_and_large = {path for tag, path in tagged if tag == "?"} & set(big)  # never in a snapshot
        changed = sorted({path for _tag, path in tagged} - new_and_large)
        return tuple(big), len(paths) - len(big), changed

    def _large(self, paths: list[str]) -> list[str]:
        big = []
        for rel in paths:
            try:
                if (self.workspace / rel).lstat().st_size > MAX_FILE_BYTES:
                    big.append(rel)
            except OSError:
                continue
        return big

    async def _git(
        self,
        *args: str,
        work_tree: bool = True,
        index: Path | None = None,
        stdin: bytes | None = None,
        config: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> str:
        env = {**os.environ, **_ENV, "GIT_INDEX_FILE": str(index or self.index), **(env or {})}
        large = self.git_dir / f"large-{self.index.name}"
        config = (*_CONFIG, *config, *(("-c", f"core.excludesFile={large}") if large.exists() else ()))
        tree = (f"--work-tree={self.workspace}",) if work_tree else ()
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                "git",
                *config,
                f"--git-dir={self.git_dir}",
                *tree,
                *args,
                cwd=self.workspace if work_tree else self.git_dir.parent,
                env=env,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        )
        try:
            proc = await asyncio.shield(starting)
        except asyncio.CancelledError:  # asyncio's own undo of a half-made start races as _ended says
            await _ended(await starting)
            raise
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), GIT_TIMEOUT)
        except BaseException:
            await _ended(proc)
            raise
        if proc.returncode != 0:
            raise ShadowError(f"git {args[0]}: {err.decode('utf-8', 'replace').strip()[:500]}")
        return out.decode("utf-8", "surrogateescape")


async def _ended(proc: asyncio.subprocess.Process) -> None:
    """Kill ``proc`` (cancelled: an exit, a rewind) and wait for it. ``os.kill``, not ``proc.kill``:
    ``Popen.send_signal`` first polls, and a poll can reap a git that just exited behind the back of
    asyncio's watcher thread, which then logs "Unknown child process" on the user's terminal. Until that
    thread reaps it, the pid stays this child's."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()


def private_dirs(path: Path) -> None:
    """``path`` and each missing parent with mode 0700, as the session store makes ``$INK_HOME`` (it holds
    transcripts): ``mkdir(parents=True, mode=...)`` gives the mode to the last folder only, and the umask
    filters it. Folders that exist are left as they are."""
    if path.exists() or path.parent == path:
        return
    private_dirs(path.parent)
    with contextlib.suppress(FileExistsError):  # made meanwhile by another ink process
        path.mkdir(mode=0o700)
        os.chmod(path, 0o700)


def _lines(patterns: Iterable[str]) -> bytes:
    """An exclude file of ``patterns``, each as the bytes of the name it came from."""
    return b"".join(os.fsencode(p) + b"\n" for p in patterns)


def _z(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _glob_escape(path: str) -> str:
    return "".join(f"\\{c}" if c in "*?[\\!# " else c for c in path)
