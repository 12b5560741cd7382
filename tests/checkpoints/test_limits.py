"""A workspace too heavy to keep turns checkpoints off with a notice (a byte budget per snapshot, beside
the file count); a checkpoint that cannot be taken is announced, never skipped silently (R42, issue 29)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from ink.agent.events import InputTaken, TakenInput
from ink.checkpoints import shadow, shadow_repo_for
from ink.checkpoints.keeper import CheckpointLog, Checkpoints
from ink.checkpoints.shadow import MAX_FILE_BYTES, TooManyFiles


def heavy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace of 40 files of 64 KiB (2.5 MiB), one file over the per-file limit (left out, so not
    counted), with the budget lowered to 2 MiB: a data folder, not a project."""
    monkeypatch.setattr(shadow, "MAX_NEW_BYTES", 2 * 1024 * 1024)
    work = tmp_path / "work"
    work.mkdir()
    for n in range(40):
        (work / f"part{n}.bin").write_bytes(os.urandom(64 * 1024))
    (work / "huge.bin").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    return work


async def test_a_snapshot_over_the_byte_budget_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = heavy(tmp_path, monkeypatch)
    repo = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    with pytest.raises(
        TooManyFiles, match=r"2\.5 MiB of files .* new to the checkpoint store .*2\.0 MiB per snapshot"
    ):
        await repo.snapshot("refused")
    assert not list(repo.git_dir.glob("refs/ink/*"))
    assert not list((repo.git_dir / "objects").glob("??/*"))  # not one file read into the store
    (work / "huge.bin").unlink()
    for n in range(20):
        (work / f"part{n}.bin").unlink()
    await repo.snapshot("fits")  # 1.25 MiB: a project again


def keeper(tmp_path: Path, work: Path, told: list[str]) -> Checkpoints:
    home = tmp_path / "inkhome"
    return Checkpoints(shadow_repo_for(home, work, "s1"), CheckpointLog.open(home, "s1"), told.append)


async def test_a_checkpoint_that_cannot_be_taken_is_announced(tmp_path: Path) -> None:
    """The store cannot be made (here: a file stands where the folder of stores goes): each input's
    checkpoint fails, and each failure is told; the input is left without one, and the run goes on."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    told: list[str] = []
    checkpoints = keeper(tmp_path, work, told)
    checkpoints.repo.git_dir.parent.parent.mkdir(parents=True)
    checkpoints.repo.git_dir.parent.write_text("not a folder\n")
    checkpoints.warm()
    for n in (1, 2):
        checkpoints.on_event(InputTaken("steer", (TakenInput(f"in-{n}", "hello"),)))
    await checkpoints.settled()
    assert len(told) == 2 and all("could not be taken" in t for t in told)
    assert checkpoints.all() == []
    await checkpoints.aclose()


async def test_no_git_turns_checkpoints_off_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    told: list[str] = []
    checkpoints = keeper(tmp_path, work, told)
    checkpoints.warm()
    for n in (1, 2):
        checkpoints.on_event(InputTaken("steer", (TakenInput(f"in-{n}", "hello"),)))
    await checkpoints.settled()
    assert checkpoints.off and len(told) == 1 and "git is not installed" in told[0]
    await checkpoints.aclose()


async def test_sessions_opening_a_new_workspace_at_once_all_get_their_snapshots(tmp_path: Path) -> None:
    """Each ran ``git init`` in the same folder: the loser failed, and the half-made store it left (no
    config) failed every later snapshot of that workspace, silently."""
    for attempt in range(10):
        work = tmp_path / f"work{attempt}"
        work.mkdir()
        (work / "a.txt").write_text("one\n")
        repos = [shadow_repo_for(tmp_path / "inkhome", work, f"s{n}") for n in range(3)]
        await asyncio.gather(*(repo.snapshot("first") for repo in repos))
        await asyncio.gather(*(repo.snapshot("again") for repo in repos))


async def test_a_store_left_half_made_is_put_aside_and_made_again(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    repo = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    repo.git_dir.mkdir(parents=True)
    (repo.git_dir / "HEAD").write_text("ref: refs/heads/master\n")  # what a lost race left: no config
    checkpoint = await repo.snapshot("c1")
    (work / "a.txt").write_text("two\n")
    await repo.restore(checkpoint.commit, "undo")
    assert (work / "a.txt").read_text() == "one\n"
    assert len(list(repo.git_dir.parent.glob("*.broken-*"))) == 1
