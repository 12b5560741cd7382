"""A FIFO where git reads its settings (issue 29, R42): a ``.gitignore``, a ``.gitattributes`` (in any
folder) or the ``HEAD`` of a folder that looks like a nested repository, as a named pipe, blocked the
checkpoint's git in ``open()`` until its 300 s timeout, and every file-changing tool call waited for it.
Now git is let past the open (it reads an empty file), the snapshot is whole, a rewind exact, and the FIFO
is named to the user once; a FIFO that a program holds open without writing fails the snapshot at once,
named, instead of after 300 s."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path

import pytest

from ink.checkpoints import shadow_repo_for
from ink.checkpoints.fifos import FifoStall
from ink.checkpoints.git import ShadowError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="found through /proc")
HANG = 120.0  # git waited 300 s on such a FIFO: a failure here, not a hang
PLACES = [".gitignore", "sub/.gitignore", ".gitattributes", "sub/deep/.gitattributes", "nested/.git/HEAD"]


def workspace(root: Path, fifo: str) -> Path:
    files = {"a.txt": "a\n", "sub/b.txt": "b\n", "sub/deep/c.txt": "c\r\n", "nested/d.txt": "d"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, newline="")
    (root / "nested" / ".git" / "objects").mkdir(parents=True)  # what git takes for a repository
    (root / "nested" / ".git" / "refs").mkdir()
    os.mkfifo(root / fifo)
    return root


def contents(root: Path) -> dict[str, bytes | str]:
    """Every file's bytes; a FIFO as such (never opened)."""
    seen: dict[str, bytes | str] = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            kind = path.lstat().st_mode
            seen[path.relative_to(root).as_posix()] = "fifo" if stat.S_ISFIFO(kind) else path.read_bytes()
    return seen


@pytest.mark.parametrize("fifo", PLACES)
async def test_a_fifo_where_git_reads_settings_is_read_as_empty_and_a_rewind_is_exact(
    tmp_path: Path, fifo: str
) -> None:
    work = workspace(tmp_path / "work", fifo)
    before = contents(work)
    shadow = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    checkpoint = await asyncio.wait_for(shadow.snapshot("c1"), HANG)
    assert shadow.fifos.freed == [fifo]
    (work / "a.txt").write_text("changed\n")
    (work / "sub" / "deep" / "c.txt").unlink()
    (work / "sub" / "new.txt").write_text("made by the run\n")
    (work / "nested" / "d.txt").write_text("changed too\n")
    report = await asyncio.wait_for(shadow.restore(checkpoint.commit, "undo"), HANG)
    assert contents(work) == before
    assert report.removed == ("sub/new.txt",) and shadow.fifos.freed == [fifo]  # named once


@pytest.mark.parametrize("fifo", [".gitattributes", "sub/.gitattributes"])
async def test_a_fifo_a_program_holds_open_fails_the_snapshot_at_once_naming_it(
    tmp_path: Path, fifo: str
) -> None:
    """git reads a ``.gitattributes`` to its end: a FIFO held open for writing (here by the test, as a
    background job of the model's could) never ends. That cannot be undone from outside: the snapshot
    fails, named, and the next one, once the holder let go, is whole."""
    work = workspace(tmp_path / "work", fifo)
    holder = os.open(work / fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that never writes
    shadow = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    try:
        with pytest.raises(FifoStall, match=f"^{fifo} is a FIFO"):
            await asyncio.wait_for(shadow.snapshot("c1"), HANG)
    finally:
        os.close(holder)
    before = contents(work)
    snapshot = await asyncio.wait_for(shadow.snapshot("c2"), HANG)
    assert shadow.fifos.freed == [fifo]
    (work / "sub" / "deep" / "c.txt").write_text("changed\n")
    await asyncio.wait_for(shadow.restore(snapshot.commit, "undo"), HANG)
    assert contents(work) == before


async def test_a_huge_gitignore_fails_the_snapshot_at_once_instead_of_costing_a_gigabyte(
    tmp_path: Path,
) -> None:
    """git reads a ``.gitignore`` whole: a sparse one of a gigabyte (no disk used) took 1 GB of memory
    and seconds for each of a snapshot's git commands. Its heap is bounded: the snapshot fails at once,
    saying why; once the file is fixed, the next one is whole."""
    work = workspace(tmp_path / "work", "sub/.gitignore")
    (work / "sub" / ".gitignore").unlink()
    (work / "sub" / ".gitignore").touch()
    os.truncate(work / "sub" / ".gitignore", 0)
    os.truncate(work / "sub" / ".gitignore", 1 << 30)
    shadow = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    with pytest.raises(ShadowError, match="may be huge"):
        await asyncio.wait_for(shadow.snapshot("c1"), HANG)
    (work / "sub" / ".gitignore").write_text("*.log\n")
    before = contents(work)
    snapshot = await asyncio.wait_for(shadow.snapshot("c2"), HANG)
    (work / "a.txt").write_text("changed\n")
    await asyncio.wait_for(shadow.restore(snapshot.commit, "undo"), HANG)
    assert contents(work) == before
