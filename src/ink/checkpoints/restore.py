"""A restore: the workspace made what a snapshot holds, by ink's own writes rather than git's checkout.

git's checkout applies the workspace's attributes and resolves paths by name; here the plan comes from
the two snapshots (``git diff-tree --raw``: what exists now and not then is removed, what differs or is
gone is written back), each file's bytes are the blob's exactly as stored (``git cat-file --batch``,
which applies no filter, no line-ending or keyword conversion), and every change goes through
``WorkspaceTree`` (no symlink followed, no file torn by a kill, no path outside the workspace).

A journal (``restoring-<index>`` in the store) names the files being written and the temporary names
they are written under, from before the first write until the last: after a kill -9, the next snapshot
of any session of that workspace removes whatever temporary file was left (``sweep``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from ink.checkpoints.writeback import EXECUTABLE, REGULAR, SYMLINK, TEMP_PREFIX, Blocked, WorkspaceTree

_WRITABLE = (REGULAR, EXECUTABLE, SYMLINK)  # a nested repository (160000) is never written or removed


class Change(msgspec.Struct, frozen=True, array_like=True):
    path: str
    mode: int  # git's: 100644, 100755, 120000
    blob: str


class Plan(msgspec.Struct, frozen=True):
    """What a restore changes: ``remove`` exists now and did not then; ``write`` differs or was deleted
    (``replace`` False: nothing was there when the plan was made, so nothing may be overwritten)."""

    remove: tuple[str, ...] = ()
    write: tuple[Change, ...] = ()
    new: frozenset[str] = frozenset()  # paths of ``write`` that did not exist now

    def paths(self) -> list[str]:
        return sorted({*self.remove, *(c.path for c in self.write)})


class Applied(msgspec.Struct, frozen=True):
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()  # left as they were: something in the way (``writeback.Blocked``)


def plan(raw_diff: str, left_out: Iterable[str] = ()) -> Plan:
    """The plan from ``git diff-tree -r -z --raw <then> <now>``. ``left_out``: files the snapshot of now
    left out (too large): deleted by the diff's reckoning, present in fact, and never touched."""
    tokens = raw_diff.split("\0")
    skip = set(left_out)
    remove: list[str] = []
    write: list[Change] = []
    new: set[str] = set()
    for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, old_blob, _new_blob, status = meta[1:].split(" ")[:5]
        if status == "A":
            if int(new_mode, 8) in _WRITABLE:
                remove.append(path)
        elif int(old_mode, 8) in _WRITABLE and path not in skip:
            write.append(Change(path, int(old_mode, 8), old_blob))
            if status == "D":
                new.add(path)
    return Plan(tuple(sorted(remove)), tuple(sorted(write, key=lambda c: c.path)), frozenset(new))


def temp_name(token: str, n: int) -> str:
    return f"{TEMP_PREFIX}{token}-{n}"


class Journal:
    """The files a restore is writing and the temporary names it writes them under (see the module)."""

    def __init__(self, git_dir: Path, index_name: str) -> None:
        self.path = git_dir / f"restoring-{index_name}"
        self.token = secrets.token_hex(6)

    def begin(self, writes: Sequence[Change]) -> None:
        record = {"pid": os.getpid(), "token": self.token, "paths": [c.path for c in writes]}
        scratch = self.path.with_name(self.path.name + ".new")
        scratch.write_bytes(json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogateescape"))
        scratch.replace(self.path)

    def end(self) -> None:
        self.path.unlink(missing_ok=True)


def sweep(git_dir: Path, workspace: Path) -> None:
    """Remove the temporary files of restores killed half-way (their journal's process is gone)."""
    for journal in git_dir.glob("restoring-*"):
        if journal.name.endswith(".new"):
            journal.unlink(missing_ok=True)
            continue
        try:
            record = json.loads(journal.read_bytes().decode("utf-8", "surrogateescape"))
            pid, token, paths = int(record["pid"]), str(record["token"]), list(record["paths"])
        except (OSError, ValueError, KeyError, TypeError):
            journal.unlink(missing_ok=True)  # torn: written whole or not at all, so never ours to read
            continue
        if pid != os.getpid() and _alive(pid):
            continue  # another ink restores now
        with WorkspaceTree(workspace) as tree:
            for n, path in enumerate(paths):
                tree.drop(str(path), temp_name(token, n))
        journal.unlink(missing_ok=True)


def apply(plan: Plan, workspace: Path, journal: Journal, blobs: BlobReader) -> Applied:
    """Carry ``plan`` out (in a thread: it reads and writes files). Files created since go first: their
    folders are as the snapshot saw them. Raises ``OSError`` (a full disk) with what was done so far
    undone by nothing: the caller's undo checkpoint holds it all."""
    written: list[str] = []
    removed: list[str] = []
    blocked: list[str] = []
    journal.begin(plan.write)
    with WorkspaceTree(workspace) as tree:
        for path in plan.remove:
            try:
                if tree.remove(path):
                    removed.append(path)
            except Blocked:
                blocked.append(path)
        for n, change in enumerate(plan.write):
            data = blobs.read(change.blob)
            try:
                tree.write(
                    change.path,
                    data,
                    change.mode,
                    temp_name(journal.token, n),
                    replace=change.path not in plan.new,
                )
            except Blocked:
                blocked.append(change.path)
                continue
            written.append(change.path)
    journal.end()
    return Applied(tuple(written), tuple(removed), tuple(blocked))


class BlobReader:
    """``git cat-file --batch`` of the store: the bytes of blob after blob, exactly as stored."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self._proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )

    def read(self, blob: str) -> bytes:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(blob.encode("ascii") + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            said = b" ".join(header).decode(errors="replace")
            raise OSError(f"the checkpoint store has no blob {blob}: {said}")
        size = int(header[2])
        data = stdout.read(size)
        if len(data) != size or stdout.read(1) != b"\n":
            raise OSError(f"git cat-file ended in the middle of blob {blob}")
        return data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
