"""A shadow git store: snapshots of a workspace in a repository of ink's own, never the user's.

The store lives under ``$INK_HOME/checkpoints/repos/`` (one per workspace directory) and is driven with
``--git-dir`` and ``--work-tree``, so it works in a directory that is no repository, and a repository's own
index, HEAD, refs, stash and hooks are never read or written (``.git`` itself is never part of a snapshot:
git refuses to add it). What a snapshot leaves out: what the workspace's ``.gitignore`` files ignore,
ink's own ``.ink/`` directory, and files over ``MAX_FILE_BYTES`` (named in the snapshot's report). git keeps
a file's content, whether it is executable, and symlinks; other mode bits are not restored.

Bytes are kept as they are: the store's own ``info/attributes`` unsets, for every path, each attribute
that converts content (line endings, ``ident``, filters, ``working-tree-encoding``), and it overrides
every ``.gitattributes`` of the workspace; git runs with no user, system or environment configuration.
A restore is ink's own writing (``ink.checkpoints.restore``), never git's checkout.

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
import stat
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ink.checkpoints import fifos
from ink.checkpoints import git as store_git
from ink.checkpoints.git import ATTRIBUTES, ShadowError

if TYPE_CHECKING:  # imported where a restore is made: a snapshot never needs it (nor secrets and random)
    from ink.checkpoints import restore as restoring

__all__ = ["RestoreReport", "ShadowError", "ShadowRepo", "Snapshot", "TooManyFiles", "shadow_repo_for"]
from ink.checkpoints.writeback import TEMP_PREFIX

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_NEW_FILES = 100_000  # more files new to the store in one snapshot: not a project (ink started in ~?)
MAX_NEW_BYTES = 512 * 1024 * 1024  # more bytes to read in one snapshot: not a project either (a data folder)
FEW_PATHS = 64  # sizes of this many changed files are read in the event loop (an abort's receipt waits)
BULK_FILES = 200  # this many new or changed files in one snapshot go into one pack, not a file each
LONG_ADD_BYTES = 32 * 1024 * 1024  # an add reading this much (or BULK_FILES files) must not outlive ink
# git add streams every file over core.bigFileThreshold into one pack for the whole command instead of
# writing a loose object file each (a create, a write, a link, an unlink): for the first snapshot of a
# 10,000-file workspace 2-3x faster, much more on a busy disk. Only for many files: each such add makes a
# pack, and a store with many small packs looks objects up more slowly.
_BULK = ("-c", "core.bigFileThreshold=1", "-c", "pack.compression=1")
STALE_PACK_SECONDS = 2 * 300.0  # an unfinished pack this old was left by a killed git (GIT_TIMEOUT ends any)
ALWAYS_EXCLUDED = (".ink/", f"{TEMP_PREFIX}*")  # ink's own folder; a restore's temporary files
Listed = Callable[[str, list[str]], Awaitable[None]]  # (the snapshot the index held, paths that differ)


class TooManyFiles(ShadowError):
    """The workspace has more new files (``MAX_NEW_FILES``) or bytes (``MAX_NEW_BYTES``) than one
    snapshot takes; nothing was stored."""


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
    blocked: tuple[str, ...] = ()  # not restored: something else stood in the way (writeback.Blocked)


BeforeWriting = Callable[[str, list[str]], Awaitable[None]]  # (the undo commit, the paths to change)


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
        self.fifos = fifos.Watch(workspace)  # FIFOs git waited to open: let past, named in ``fifos.freed``

    async def snapshot(self, ref: str) -> Snapshot:
        """Record the workspace as it is now under ``refs/ink/<ref>``. Raises ``ShadowError``."""
        return await self.commit_staged(ref, await self.stage())

    async def stage(self, listed: Listed | None = None, *, only_listed: bool = False) -> tuple[str, ...]:
        """The first half of a snapshot: this session's index made the workspace as it is now (what
        ``staged_changes`` compares and ``commit_staged`` records). Returns the files left out as too
        large. Raises ``ShadowError``.

        ``listed(commit, paths)`` is awaited, before anything is staged, the paths that differ from
        ``commit`` (created, modified, deleted; too large ones left out) when the index still holds the
        last snapshot this object recorded: the listing every snapshot makes anyway says it, with no git
        command more. ``only_listed``: then only those paths are staged (whatever changed elsewhere
        after the listing is not taken in), or all, if git refuses one of them."""
        await self._ready()
        since, self._index_commit = self._index_commit, None  # from here on the index moves
        skipped, pending, changed, size = await self._exclude_large_files()
        long = pending >= BULK_FILES or size >= LONG_ADD_BYTES
        if listed is not None and since is not None:
            await listed(since, changed)
            if only_listed:
                left_out = set(skipped)
                try:
                    await self._add(pending, long, stdin=_z([p for p in changed if p not in left_out]))
                    return skipped
                except fifos.FifoStall:
                    raise
                except ShadowError:  # a path beyond a symlink now, gone meanwhile: all, the plain way
                    pass
        if pending >= BULK_FILES or not self._swept:  # a few files (an abort's receipt) skip the sweep
            await asyncio.to_thread(self._drop_stale_packs)
            self._swept = True
        # a large file whose name holds a newline cannot be a line of the exclude file: left out by a
        # pathspec, whose magic GIT_LITERAL_PATHSPECS would switch off ("." and ``literal`` need none)
        every = (".", *(f":(top,exclude,literal){p}" for p in skipped if "\n" in p))
        await self._add(pending, long, every=every)
        return skipped

    async def _add(
        self, pending: int, long: bool, *, every: tuple[str, ...] = (), stdin: bytes | None = None
    ) -> None:
        """``git add --all`` of the pathspecs ``every``, or those NUL-separated in ``stdin``. ``long``: it
        reads many files or bytes, and must not outlive ink (``store_git.run``)."""
        if stdin is not None:
            if not stdin:
                return
            specs: tuple[str, ...] = ("--pathspec-from-file=-", "--pathspec-file-nul")
        else:
            specs = ("--", *every)
        magic = {"GIT_LITERAL_PATHSPECS": "0"} if len(every) > 1 else {}
        add = ("add", "--all", "--ignore-errors", *specs)
        bulk = _BULK if pending >= BULK_FILES else ()
        try:
            await self._git(*add, config=bulk, env=magic, stdin=stdin, long=long)
        except fifos.FifoStall:
            raise  # the same FIFO would stall it again
        except ShadowError:
            # git dies, --ignore-errors notwithstanding, when a file shrinks while it reads it (a short read
            # into the pack; a loose add dies too, of SIGBUS on its mmap) or a file or folder it listed
            # is gone when it looks at it ("unable to stat"): a build at work. Once more, the plain way
            await self._git(*add, env=magic, stdin=stdin, long=long)

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

    @property
    def index_commit(self) -> str | None:
        """The snapshot this session's index holds, while nothing was staged since (None: not known)."""
        return self._index_commit

    async def staged_entries(self, old: str, new: str) -> dict[str, tuple[int, str] | None]:
        """Every path that differs between two snapshots, with its (mode, blob) in ``new`` (None: gone)."""
        raw = await self._git("diff-tree", "-r", "-z", "--raw", "--no-renames", old, new, work_tree=False)
        tokens = raw.split("\0")
        entries: dict[str, tuple[int, str] | None] = {}
        for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
            if meta.startswith(":"):
                _old_mode, mode, _old_blob, blob, status = meta[1:].split(" ")[:5]
                entries[path] = None if status == "D" else (int(mode, 8), blob)
        return entries

    async def changed(self, old: str, new: str) -> list[str]:
        """Paths that differ between two snapshots (created, deleted, modified, mode changed)."""
        out = await self._git("diff-tree", "-r", "--name-only", "--no-renames", "-z", old, new)
        return sorted(p for p in out.split("\0") if p)

    async def restore(
        self, commit: str, undo_ref: str, before_writing: BeforeWriting | None = None
    ) -> RestoreReport:
        """Make the workspace what it was at ``commit``: changed files written back, deleted ones brought
        back, files created since removed, each byte as stored. First records the workspace as it is
        (``undo_ref``), so the restore itself can be undone, and awaits ``before_writing(undo commit,
        paths)`` before the first change (a kill -9 later still leaves the undo on record). Files the
        snapshots left out (ignored, too large) are not touched."""
        now = await self.snapshot(undo_ref)
        raw = await self._git("diff-tree", "-r", "-z", "--raw", "--no-renames", commit, now.commit)
        from ink.checkpoints import restore as restoring

        plan = restoring.plan(raw, now.skipped)
        if before_writing is not None:
            await before_writing(now.commit, plan.paths())
        journal = restoring.Journal(self.git_dir, self.index.name)
        git = self._command(("cat-file", "--batch"), work_tree=False)
        try:
            applied = await asyncio.to_thread(self._apply, plan, journal, git)
        except OSError as exc:
            raise ShadowError(f"the restore stopped half-way: {exc}") from exc
        finally:
            self._index_commit = None  # files changed under the index: its next listing says which
        done = await self.snapshot(f"{undo_ref}-done")  # the session's index now matches the restored tree
        return RestoreReport(
            applied.written, applied.removed, now.commit, now.skipped, done.commit, applied.blocked
        )

    def _apply(
        self, plan: restoring.Plan, journal: restoring.Journal, git: tuple[list[str], dict[str, str], Path]
    ) -> restoring.Applied:
        from ink.checkpoints import restore as restoring

        blobs = restoring.BlobReader(*git)
        try:
            return restoring.apply(plan, self.workspace, journal, blobs)
        finally:
            blobs.close()

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

    async def _ready(self) -> None:
        if not self._whole():
            await self._create()
        info = self.git_dir / "info"
        # $INK_HOME's name may be no UTF-8; it may have moved since; a store made by an older ink has no
        # attributes file of its own
        for name, wanted in (("exclude", _lines(self.excluded)), ("attributes", ATTRIBUTES)):
            if not (info / name).exists() or (info / name).read_bytes() != wanted:
                info.mkdir(exist_ok=True)
                scratch = info / f"{name}.{os.getpid()}-{time.monotonic_ns()}"
                scratch.write_bytes(wanted)
                scratch.replace(info / name)  # whole: another session's git may be reading it
        lock = self.index.with_name(self.index.name + ".lock")
        lock.unlink(missing_ok=True)  # left by a kill -9 of this session's own snapshot
        if not self.index.exists():
            await asyncio.to_thread(self._seed_index)
        if any(self.git_dir.glob("restoring-*")):  # a restore was killed half-way: its temporary file
            from ink.checkpoints import restore as restoring

            await asyncio.to_thread(restoring.sweep, self.git_dir, self.workspace)

    def _whole(self) -> bool:
        return all((self.git_dir / part).exists() for part in ("HEAD", "config", "objects"))

    async def _create(self) -> None:
        """The store, made whole under another name and renamed into place: two sessions (or two inks)
        opening a new workspace at once ran ``git init`` in the same folder, and the loser's half-made
        repository (no config) failed every later snapshot. One left broken so is put aside."""
        private_dirs(self.git_dir.parent)  # $INK_HOME too, when ink made none yet
        if self._whole():
            return  # made meanwhile (renamed into place whole) by another session
        if self.git_dir.exists():
            with contextlib.suppress(FileNotFoundError):  # put aside meanwhile by another session
                self.git_dir.rename(self.git_dir.with_name(f"{self.git_dir.name}.broken-{time.time_ns()}"))
        scratch = self.git_dir.with_name(f"{self.git_dir.name}.new-{os.getpid()}-{time.monotonic_ns()}")
        try:
            argv, env, cwd = store_git.command(
                scratch, None, self.index, ("init", "--quiet", "--bare", "--template=")
            )
            await store_git.run(argv, env, cwd)
            with contextlib.suppress(FileExistsError, OSError):  # ENOTEMPTY: another one was first
                scratch.rename(self.git_dir)
        finally:
            if scratch.exists():
                await asyncio.to_thread(shutil.rmtree, scratch, True)

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

    async def _exclude_large_files(self) -> tuple[tuple[str, ...], int, list[str], int]:
        """Leave out files over the size limit, and repositories nested in the workspace (a folder
        with its own ``.git``: git would store a link to its commit, or fail on one without any): named in
        this session's exclude file for the snapshot, and dropped from its index if an earlier snapshot
        had them. Returns the large files, how many files the snapshot has to read (new to the index, or
        changed since), every path that differs from the index (those, and the deleted ones), the new
        large ones left out (a file that grew too large leaves the snapshot: it differs), and how many
        bytes the snapshot reads. Raises
        ``TooManyFiles`` past ``MAX_NEW_FILES`` or ``MAX_NEW_BYTES``."""
        large = self.git_dir / f"large-{self.index.name}"
        large.unlink(missing_ok=True)  # listed afresh: a file may have shrunk
        listing = await self._git(
            "ls-files", "-z", "-t", "--others", "--modified", "--deleted", "--exclude-standard"
        )
        tagged = [(entry[:1], entry[2:]) for entry in listing.split("\0") if entry]
        nested = [path.rstrip("/") for tag, path in tagged if path.endswith("/")]
        tagged = [(tag, path) for tag, path in tagged if not path.endswith("/")]
        paths = list(dict.fromkeys(path for tag, path in tagged if tag in ("?", "C")))  # "R": deleted
        if len(paths) > MAX_NEW_FILES:
            raise TooManyFiles(
                f"{len(paths):,} files in {self.workspace} are new to the checkpoint store (the limit is "
                f"{MAX_NEW_FILES:,}): checkpoints are off for this session"
            )
        few = len(paths) <= FEW_PATHS  # a handful of lstat calls cost less than a hop to a thread
        big, size = self._large(paths) if few else await asyncio.to_thread(self._large, paths)
        if size > MAX_NEW_BYTES:
            raise TooManyFiles(
                f"{_mib(size)} of files in {self.workspace} are new to the checkpoint store (the limit is "
                f"{_mib(MAX_NEW_BYTES)} per snapshot): checkpoints are off for this session"
            )
        # bytes: a name git gave that is not UTF-8 holds surrogates (``_git``), which only fsencode writes
        patterns = [f"/{_glob_escape(p)}" for p in big if "\n" not in p]
        large.write_bytes(_lines([*patterns, *(f"/{_glob_escape(p)}/" for p in nested if "\n" not in p)]))
        if big or nested:
            await self._git(
                "rm",
                "--cached",
                "-r",  # a nested repository an older snapshot held
                "--force",  # our index only: nothing to lose
                "--quiet",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                stdin=_z([*big, *nested]),
            )
        new_and_large = {path for tag, path in tagged if tag == "?"} & set(big)  # never in a snapshot
        changed = sorted({path for _tag, path in tagged} - new_and_large)
        return tuple(big), len(paths) - len(big), changed, size

    def _large(self, paths: list[str]) -> tuple[list[str], int]:
        """The files to leave out, over ``MAX_FILE_BYTES`` or unreadable (git's add would fail whole on
        one: a root-owned leftover of a ``sudo`` command would stop every checkpoint of the workspace),
        and the bytes of the others."""
        big = []
        size = 0
        for rel in paths:
            try:
                info = (self.workspace / rel).lstat()
            except OSError:
                continue
            if info.st_size > MAX_FILE_BYTES or (
                stat.S_ISREG(info.st_mode) and not os.access(self.workspace / rel, os.R_OK)
            ):
                big.append(rel)
            else:
                size += info.st_size
        return big, size

    def _command(
        self,
        args: tuple[str, ...],
        *,
        work_tree: bool = True,
        index: Path | None = None,
        config: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> tuple[list[str], dict[str, str], Path]:
        large = self.git_dir / f"large-{self.index.name}"
        # never the default $XDG_CONFIG_HOME/git/ignore: the user's own ignores would leave files out of
        # the listing that ``add`` then stores
        config = (*config, "-c", f"core.excludesFile={large if large.exists() else os.devnull}")
        return store_git.command(
            self.git_dir, self.workspace if work_tree else None, index or self.index, args, config, env
        )

    async def _git(
        self,
        *args: str,
        work_tree: bool = True,
        index: Path | None = None,
        stdin: bytes | None = None,
        config: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        long: bool = False,
    ) -> str:
        """``long``: see ``store_git.run``."""
        argv, full_env, cwd = self._command(args, work_tree=work_tree, index=index, config=config, env=env)
        watch = self.fifos.check if work_tree else None
        return await store_git.run(argv, full_env, cwd, stdin, long=long, watch=watch)


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


def _mib(size: int) -> str:
    mib = size / (1024 * 1024)
    return f"{mib:,.1f} MiB" if mib < 10 else f"{mib:,.0f} MiB"


def _glob_escape(path: str) -> str:
    return "".join(f"\\{c}" if c in "*?[\\!# " else c for c in path)
