"""A restore never reaches outside the workspace, however its folders are swapped for symlinks while it
works; a kill -9 in the middle of one tears no file and keeps its undo; a kill -9 of ink ends the git it
left storing a workspace (R42, issue 29)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil

from ink.checkpoints import ShadowRepo, shadow_repo_for
from ink.checkpoints.keeper import CheckpointLog
from ink.checkpoints.shadow import Snapshot, ink_folders
from ink.checkpoints.writeback import TEMP_PREFIX
from tests.checkpoints.test_shadow import manifest
from tests.waiting import poll_until, wait_for_file

FILES = 40


class Swapper(threading.Thread):
    """Swaps ``folder`` for a symlink to ``outside`` and back, as fast as it can, while ``allowed``."""

    def __init__(self, folder: Path, outside: Path) -> None:
        super().__init__(daemon=True)
        self.folder, self.outside, self.aside = folder, outside, folder.with_name(folder.name + ".aside")
        self.allowed, self.stop, self.cycle = threading.Event(), threading.Event(), threading.Lock()
        self.swaps = 0

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.allowed.wait(0.05):
                continue
            with self.cycle:
                if not self.allowed.is_set():  # paused while this waited for the lock
                    continue
                try:
                    os.rename(self.folder, self.aside)
                    os.symlink(self.outside, self.folder)
                    os.unlink(self.folder)
                    os.rename(self.aside, self.folder)
                    self.swaps += 1
                except OSError:  # the restore removed or made the folder meanwhile: put it back
                    self._settle()

    def _settle(self) -> None:
        """One folder again: the link gone, whatever went aside back in it (the restore may have made a
        folder of that name while the real one was aside, or removed it once empty)."""
        if self.folder.is_symlink():
            self.folder.unlink()
        self.folder.mkdir(exist_ok=True)
        if self.aside.exists():
            for entry in self.aside.iterdir():
                os.replace(entry, self.folder / entry.name)
            self.aside.rmdir()

    def pause(self) -> None:
        """Returns once no swap is under way (the folder is a folder again)."""
        self.allowed.clear()
        with self.cycle:
            self._settle()

    def halt(self) -> None:
        self.pause()
        self.stop.set()
        self.join()


class SwappedRepo(ShadowRepo):
    """The real store; the swapper pauses while a snapshot reads the workspace (git's own reads are not
    what this tests, and it refuses a folder that vanishes under it) and swaps during the rest of a
    restore: while it removes and writes files."""

    swapper: Swapper

    async def snapshot(self, ref: str) -> Snapshot:
        self.swapper.pause()
        try:
            return await super().snapshot(ref)
        finally:
            self.swapper.allowed.set()


async def test_folders_swapped_for_symlinks_during_restores_never_lead_outside(tmp_path: Path) -> None:
    """While restores remove the files a run created in ``d/`` and write back the ones it changed, a
    thread keeps swapping ``d`` for a symlink to a folder outside the workspace holding files of the
    same names. Nothing outside is ever deleted, written or added."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for n in range(FILES):
        (outside / f"made{n}.txt").write_text("outside: never to be deleted\n")
        (outside / f"kept{n}.txt").write_text("outside: never to be written\n")
    untouched = manifest(outside)
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    for n in range(FILES):
        (work / "d" / f"kept{n}.txt").write_text(f"checkpoint {n}\n")
    home = tmp_path / "inkhome"
    shadow = SwappedRepo(home / "checkpoints" / "repos" / "w.git", work, "s1", ink_folders(home, work))
    shadow.swapper = Swapper(work / "d", outside)
    shadow.swapper.start()
    try:
        checkpoint = await shadow.snapshot("c1")
        shadow.swapper.pause()
        for attempt in range(25):
            for n in range(FILES):  # what a run did: changed every file, made as many new ones
                (work / "d" / f"kept{n}.txt").write_text(f"run {attempt}\n")
                (work / "d" / f"made{n}.txt").write_text("made by the run\n")
            await shadow.restore(checkpoint.commit, f"undo{attempt}")
            shadow.swapper.pause()
            assert manifest(outside) == untouched, f"attempt {attempt}"
    finally:
        shadow.swapper.halt()
    assert shadow.swapper.swaps > 0


RESTORE_CHILD = """
import asyncio, sys
from pathlib import Path
from ink.agent.events import InputTaken, TakenInput
from ink.checkpoints import shadow_repo_for
from ink.checkpoints.keeper import CheckpointLog, Checkpoints

home, work, files = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])

async def main():
    keeper = Checkpoints(shadow_repo_for(home, work, "s1"), CheckpointLog.open(home, "s1"))
    keeper.on_event(InputTaken("steer", (TakenInput("in-1", "the task"),)))
    await keeper.settled()
    for n in range(files):
        (work / f"f{n:04}.dat").write_bytes(b"N" * 200_000)
    (home.parent / "ready").write_text("ready")
    await keeper.restore("in-1")
    (home.parent / "finished").write_text("finished")

asyncio.run(main())
"""


def test_a_kill_9_in_the_middle_of_a_restore_tears_no_file_and_keeps_its_undo(tmp_path: Path) -> None:
    """ink killed while a restore writes: every file is whole (old bytes or new, never part of either),
    the workspace as it was before the restore is on record as a checkpoint of kind ``rewind``, and
    rewinding to it (or to the input again) gives exact bytes; no temporary file stays."""
    work, home, files = tmp_path / "work", tmp_path / "inkhome", 400
    work.mkdir()
    for n in range(files):
        (work / f"f{n:04}.dat").write_bytes(b"O" * 200_000)
    argv = [sys.executable, "-c", RESTORE_CHILD, str(home), str(work), str(files)]
    child = subprocess.Popen(argv, cwd=Path(__file__).parents[2])
    try:
        wait_for_file(tmp_path / "ready", timeout=120)
        poll_until(lambda: any(_content(work, n) == b"O" for n in range(files)), 120, "the restore to write")
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert not (tmp_path / "finished").exists(), "the restore finished before the kill: make it longer"
    contents = [_content(work, n) for n in range(files)]
    assert set(contents) <= {b"O", b"N"} and b"N" in contents  # whole files, half restored

    record = CheckpointLog.open(home, "s1")
    undo = [c for c in record.records.values() if c.kind == "rewind"]
    assert len(undo) == 1 and undo[0].commit, "the undo checkpoint was not on record before the writes"
    shadow = shadow_repo_for(home, work, "s2")
    asyncio.run(shadow.restore(undo[0].commit, "undo-the-killed-one"))
    assert [_content(work, n) for n in range(files)] == [b"N"] * files
    asyncio.run(shadow.restore(record.records["in-1"].commit, "again"))
    assert [_content(work, n) for n in range(files)] == [b"O"] * files
    assert not [p for p in work.rglob("*") if p.name.startswith(TEMP_PREFIX)]


def _content(work: Path, n: int) -> bytes:
    data = (work / f"f{n:04}.dat").read_bytes()
    return data[:1] if data in (b"O" * 200_000, b"N" * 200_000) else b"torn: " + data[:20]


SNAPSHOT_CHILD = """
import asyncio, sys
from pathlib import Path
from ink.checkpoints import shadow_repo_for
asyncio.run(shadow_repo_for(Path(sys.argv[1]), Path(sys.argv[2]), "s1").snapshot("killed"))
"""


def test_the_git_a_killed_ink_left_storing_the_workspace_is_ended(tmp_path: Path) -> None:
    """A kill -9 of ink while git stores a large workspace: the git goes with it (a parent-death
    signal), instead of storing gigabytes for nobody. Killed, it leaves its index lock behind.

    The git is stopped (SIGSTOP) before ink is killed, so it cannot finish the snapshot in the meantime
    on a fast machine or a slow poll; a parent-death SIGKILL ends a stopped process too. A git that
    ended before it could be stopped is a try that proves nothing: the test starts again."""
    work = tmp_path / "work"
    work.mkdir()
    for n in range(20_000):
        (work / f"m{n}.txt").write_text(f"value = {n}\n" * 10)
    for attempt in range(5):
        home = tmp_path / f"inkhome{attempt}"
        if _kill_ink_while_git_adds(home, work):
            store = home / "checkpoints" / "repos"
            assert list(store.glob("*.git/index-s1.lock")), "git finished the snapshot for a killed ink"
            return
    raise AssertionError("git add ended each time before it could be stopped: the workspace is too small")


def _kill_ink_while_git_adds(home: Path, work: Path) -> bool:
    """Kill -9 a snapshotting ink once its git add is held stopped and wait for that git to end;
    False when the git ended before it could be held (nothing was killed then)."""
    child = subprocess.Popen([sys.executable, "-c", SNAPSHOT_CHILD, str(home), str(work)])
    try:
        poll_until(lambda: _adding(child.pid), 120, "git add to start")
        (git,) = _adding(child.pid)
        if not _stopped(git):
            return False
        child.send_signal(signal.SIGKILL)
        child.wait()
        poll_until(lambda: not _alive(git), 30, "the orphaned git to end")
        return True
    finally:
        child.kill()
        child.wait()


def _stopped(proc: psutil.Process) -> bool:
    """Stop ``proc``; whether it is held stopped now (False: it had ended)."""
    try:
        proc.send_signal(signal.SIGSTOP)
        poll_until(lambda: proc.status() in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE), 30, "git to stop")
        return proc.status() == psutil.STATUS_STOPPED
    except psutil.Error:
        return False


def _adding(pid: int) -> list[psutil.Process]:
    try:
        children = psutil.Process(pid).children()
    except psutil.Error:
        return []
    return [p for p in children if _is_add(p)]


def _is_add(proc: psutil.Process) -> bool:
    try:
        return "add" in proc.cmdline()
    except psutil.Error:
        return False


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
