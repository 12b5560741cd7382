"""An aborted run's receipt lists the files it changed from the listing every snapshot makes anyway (one
git command before the abort's ``run_end``, not four): for any change to a workspace it is the same list
as the difference of the two snapshots (R34's receipt, docs/rewind.md)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ink.checkpoints import ShadowRepo
from ink.checkpoints.shadow import MAX_FILE_BYTES

NAMES = ["a.txt", "b.txt", "sub/c.txt", "sub/deep/d.txt", "ignored.log", "e f.txt"]
Change = tuple[str, str]
changes = st.lists(
    st.tuples(
        st.sampled_from(["write", "same", "delete", "chmod", "link", "big", "touch"]), st.sampled_from(NAMES)
    ),
    max_size=8,
)


def apply(root: Path, change: Change) -> None:
    kind, name = change
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "delete":
        if path.is_symlink() or path.exists():
            path.unlink()
        return
    if path.is_symlink():
        path.unlink()
    if kind == "write":
        path.write_text(f"new {name}\n" * (len(name) % 3 + 1))
    elif kind == "same" and path.exists():
        path.write_bytes(path.read_bytes())  # rewritten, same bytes: not a change
    elif kind == "touch" and path.exists():
        os.utime(path, (1, 1))
    elif kind == "chmod" and path.exists():
        path.chmod(path.stat().st_mode ^ 0o100)
    elif kind == "link":
        path.unlink(missing_ok=True)
        path.symlink_to("a.txt")
    elif kind == "big":
        path.write_bytes(b"x" * (MAX_FILE_BYTES + 1))


async def both_ways(
    root: Path, store: Path, before: list[Change], during: list[Change]
) -> tuple[list[str], list[str]]:
    repo = ShadowRepo(store, root, "s")
    for change in before:
        apply(root, change)
    start = (await repo.snapshot("start")).commit
    for change in during:
        apply(root, change)
    told: list[tuple[str, list[str]]] = []

    async def listed(since: str, paths: list[str]) -> None:
        told.append((since, paths))

    await repo.stage(listed)
    [(since, listed)] = told
    assert since == start
    return listed, await repo.staged_changes(start)


@settings(max_examples=40, deadline=None)
@given(before=changes, during=changes)
def test_the_listing_before_staging_is_the_difference_of_the_snapshots(
    before: list[Change], during: list[Change]
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        root, store = Path(scratch, "work"), Path(scratch, "store")
        root.mkdir()
        (root / ".gitignore").write_text("*.log\n")
        listed, diffed = asyncio.run(both_ways(root, store, before, during))
    assert listed == diffed


def test_nothing_is_told_when_the_index_holds_no_snapshot_of_this_repo(tmp_path: Path) -> None:
    """A fresh store object (a seeded index, a new process): the listing is relative to nothing known."""
    (tmp_path / "a.txt").write_text("a\n")
    told: list[object] = []

    async def listed(*args: object) -> None:
        told.append(args)

    asyncio.run(ShadowRepo(tmp_path / "store", tmp_path, "s").stage(listed))
    assert told == []
