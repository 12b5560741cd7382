"""The shadow store: a snapshot and a restore give back the tree byte for byte, whatever changed it, in any
directory, without touching the user's repository (issue 14)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from ink.checkpoints import ShadowRepo, shadow_repo_for
from ink.checkpoints import shadow as shadow_module
from ink.checkpoints.shadow import MAX_FILE_BYTES
from tests.waiting import wait_for_file


def manifest(root: Path) -> dict[str, tuple[str, bytes | str, bool]]:
    """Every entry under ``root`` but .git: kind, content or link target, executable bit."""
    seen: dict[str, tuple[str, bytes | str, bool]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                seen[rel] = ("link", os.readlink(path), False)
            else:
                seen[rel] = ("file", path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))
    return seen


def project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('one')\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "doomed.txt").write_text("delete me\n")
    (root / "bin.dat").write_bytes(bytes(range(256)) * 4)
    os.symlink("src/app.py", root / "link.py")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("ignored\n")
    return root


def bash(root: Path, script: str) -> None:
    subprocess.run(["bash", "-c", script], cwd=root, check=True)


def repo(tmp_path: Path, workspace: Path, session: str = "s1") -> ShadowRepo:
    return shadow_repo_for(tmp_path / "inkhome", workspace, session)


async def test_a_restore_undoes_edits_creations_deletions_and_mode_changes_made_by_bash(
    tmp_path: Path,
) -> None:
    work = project(tmp_path / "work")
    shadow = repo(tmp_path, work)
    before = manifest(work)
    checkpoint = await shadow.snapshot("c1")
    bash(
        work,
        "echo two >> src/app.py; rm doomed.txt; mkdir -p new/deep; echo x > new/deep/file.txt; "
        "chmod -x run.sh; printf '\\x00\\x01' > bin.dat; ln -sf run.sh link.py; echo b > build/more.o",
    )
    report = await shadow.restore(checkpoint.commit, "undo1")
    after = manifest(work)
    assert {k: v for k, v in after.items() if not k.startswith("build/")} == {
        k: v for k, v in before.items() if not k.startswith("build/")
    }
    assert not (work / "new").exists()  # created directories go with their files
    assert set(report.removed) == {"new/deep/file.txt"}
    assert set(report.written) == {"src/app.py", "doomed.txt", "run.sh", "bin.dat", "link.py"}
    assert (work / "build" / "more.o").exists()  # ignored files are not the checkpoint's business


async def test_a_restore_can_itself_be_undone(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    shadow = repo(tmp_path, work)
    checkpoint = await shadow.snapshot("c1")
    bash(work, "echo changed > src/app.py; echo new > fresh.txt")
    changed = manifest(work)
    report = await shadow.restore(checkpoint.commit, "undo1")
    await shadow.restore(report.undo, "undo2")
    assert manifest(work) == changed


async def test_a_later_session_starts_from_an_earlier_ones_index_and_still_sees_every_change(
    tmp_path: Path,
) -> None:
    """Its first snapshot need not read every file again (the stat cache), yet is exact."""
    work = project(tmp_path / "work")
    first = await repo(tmp_path, work, "s1").snapshot("one")
    bash(work, "echo changed > src/app.py; rm doomed.txt; echo new > fresh.txt; chmod -x run.sh")
    later = repo(tmp_path, work, "s2")
    assert not later.index.exists()
    second = await later.snapshot("two")
    assert later.index.exists()
    assert await later.changed(first.commit, second.commit) == [
        "doomed.txt",
        "fresh.txt",
        "run.sh",
        "src/app.py",
    ]
    expected = manifest(work)
    bash(work, "echo again > src/app.py")
    await later.restore(second.commit, "undo")
    assert manifest(work) == expected


def user_repository(work: Path) -> None:
    """A repository with a commit, a stash, a staged change and an untracked file."""
    ident = "-c user.name=u -c user.email=u@u"
    bash(
        work,
        f"git init -q -b main && git add src run.sh && git {ident} commit -qm one"
        f" && echo stash-me >> run.sh && git {ident} stash -q"
        " && echo staged >> src/app.py && git add src/app.py && echo untracked > notes.txt",
    )


async def test_the_users_repository_is_untouched(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    user_repository(work)
    quiet = {"cwd": work, "check": True, "capture_output": True}

    def state() -> tuple[bytes, ...]:
        dotgit = work / ".git"
        index = (dotgit / "index").read_bytes()
        head = (dotgit / "HEAD").read_bytes()
        refs = subprocess.run(["git", "show-ref"], **quiet).stdout
        stash = subprocess.run(["git", "stash", "list"], **quiet).stdout
        status = subprocess.run(["git", "status", "--porcelain"], **quiet).stdout
        hooks = b"".join(sorted(p.name.encode() for p in (dotgit / "hooks").iterdir()))
        return index, head, refs, stash, status, hooks

    before = state()
    shadow = repo(tmp_path, work)
    checkpoint = await shadow.snapshot("c1")
    bash(work, "echo later > notes.txt")
    await shadow.restore(checkpoint.commit, "undo1")
    assert state() == before
    assert (work / "notes.txt").read_text() == "untracked\n"


async def test_files_over_the_size_limit_are_left_out_and_named(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    (work / "huge.bin").write_bytes(b"\0" * (MAX_FILE_BYTES + 1))
    shadow = repo(tmp_path, work)
    first = await shadow.snapshot("c1")
    assert first.skipped == ("huge.bin",)
    (work / "src" / "app.py").write_bytes(b"x" * (MAX_FILE_BYTES + 1))  # a tracked file grows too large
    second = await shadow.snapshot("c2")
    assert second.skipped == ("huge.bin", "src/app.py")
    assert "src/app.py" in await shadow.changed(first.commit, second.commit)


@pytest.mark.parametrize("name", ["latin-\udce9.bin", "new\nline.bin"])  # \udce9: the name's byte \xe9
async def test_a_file_over_the_limit_with_an_awkward_name_is_left_out_too(tmp_path: Path, name: str) -> None:
    work = project(tmp_path / "work")
    (work / name).write_bytes(b"\0" * (MAX_FILE_BYTES + 1))
    shadow = repo(tmp_path, work)
    first = await shadow.snapshot("c1")
    assert first.skipped == (name,)
    assert name not in await shadow.changed(first.commit, (await shadow.snapshot("c2")).commit)
    listed = await shadow._git("ls-tree", "-r", "--name-only", "-z", first.commit)
    assert name not in listed.split("\0") and "src/app.py" in listed


async def test_ink_own_directory_and_a_non_git_workspace(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    (work / ".ink").mkdir()
    (work / ".ink" / "permissions.toml").write_text("allow = []\n")
    shadow = repo(tmp_path, work)
    checkpoint = await shadow.snapshot("c1")
    (work / ".ink" / "permissions.toml").write_text("allow = ['bash(*)']\n")
    await shadow.restore(checkpoint.commit, "undo1")
    assert "bash(*)" in (work / ".ink" / "permissions.toml").read_text()  # never rewound
    assert not (work / ".git").exists()


async def test_ink_home_inside_the_workspace_is_left_out(tmp_path: Path) -> None:
    """ink started in the home folder: $INK_HOME (sessions, this very store) is inside the workspace. A
    snapshot must not store it, see it change, or bring it back on a rewind."""
    work = project(tmp_path / "home")
    ink_home = work / ".config [ink]"  # pattern characters in the name are taken literally
    shadow = shadow_repo_for(ink_home, work, "s1")
    (ink_home / "sessions").mkdir(parents=True)
    (ink_home / "sessions" / "s1.jsonl").write_text("one\n")
    first = await shadow.snapshot("c1")
    (ink_home / "sessions" / "s1.jsonl").write_text("one\ntwo\n")
    (work / "src" / "app.py").write_text("print('two')\n")
    second = await shadow.snapshot("c2")
    assert await shadow.changed(first.commit, second.commit) == ["src/app.py"]
    await shadow.restore(first.commit, "undo1")
    assert (work / "src" / "app.py").read_text() == "print('one')\n"
    assert (ink_home / "sessions" / "s1.jsonl").read_text() == "one\ntwo\n"  # ink's own: never rewound
    assert (ink_home / "checkpoints" / "repos").is_dir()


SNAPSHOT_IN_A_CHILD = """
import asyncio, os, sys
from pathlib import Path
from ink.checkpoints import shadow_repo_for
Path(sys.argv[3]).write_text(str(os.getpid()))
asyncio.run(shadow_repo_for(Path(sys.argv[1]), Path(sys.argv[2]), "s1").snapshot("killed"))
"""


def kill_matching(needle: str) -> None:
    for proc in psutil.process_iter(["cmdline"]):
        if needle in " ".join(proc.info["cmdline"] or []):
            with contextlib.suppress(psutil.Error):
                proc.kill()


def start_snapshot_child(tmp_path: Path, work: Path, pid_file: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", SNAPSHOT_IN_A_CHILD, str(tmp_path / "inkhome"), str(work), str(pid_file)]
    return subprocess.Popen(argv)


async def test_kill_9_during_a_snapshot_leaves_nothing_broken(tmp_path: Path) -> None:
    work = project(tmp_path / "work")
    for n in range(3000):
        (work / "src" / f"m{n}.py").write_text(f"value = {n}\n" * 20)
    pid_file = tmp_path / "child.pid"
    child = start_snapshot_child(tmp_path, work, pid_file)
    wait_for_file(pid_file)
    shadow = repo(tmp_path, work)
    lock = shadow.index.with_name(shadow.index.name + ".lock")
    while child.poll() is None and not lock.exists():
        pass  # the moment git holds the index: the worst moment to die
    child.kill()
    child.wait()
    kill_matching(f"--git-dir={shadow.git_dir}")  # its git, orphaned mid-write
    checkpoint = await shadow.snapshot("after")
    bash(work, "rm src/m1.py; echo changed > src/m2.py")
    report = await shadow.restore(checkpoint.commit, "undo")
    assert set(report.written) == {"src/m1.py", "src/m2.py"}
    assert (work / "src" / "m2.py").read_text() == "value = 2\n" * 20


@pytest.mark.parametrize(
    ("before", "since"),
    [
        ("ln -s ../outside d", "rm d; mkdir d; echo made > d/keep"),  # a folder where a link to outside was
        ("mkdir d; echo old > d/keep", "rm -r d; ln -s ../outside d"),  # a link to outside where a folder was
        ("echo old > d", "rm d; mkdir d; echo made > d/keep"),  # a folder where a file was
    ],
)
async def test_a_restore_swaps_files_folders_and_links_and_touches_nothing_outside(
    tmp_path: Path, before: str, since: str
) -> None:
    """What a checkpoint had at a path that is now a folder (or the reverse) comes back, and a file in a
    folder the restore replaces by a symlink is never looked for through that link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("precious\n")
    work = tmp_path / "work"
    work.mkdir()
    bash(work, before)
    shadow = repo(tmp_path, work)
    checkpoint = await shadow.snapshot("c1")
    bash(work, since)
    await shadow.restore(checkpoint.commit, "undo1")
    assert (outside / "keep").read_text() == "precious\n"
    assert manifest(work) == manifest_of(before, tmp_path / "again")
    assert (work / "d").is_symlink() == before.startswith("ln")


def manifest_of(script: str, root: Path) -> dict[str, tuple[str, bytes | str, bool]]:
    root.mkdir()
    bash(root, script)
    return manifest(root)


@pytest.mark.parametrize("name", ["sp ace.txt", "star*.txt", "new\nline.txt", "latin-\udce9.txt"])
async def test_awkward_file_names_round_trip(tmp_path: Path, name: str) -> None:
    work = project(tmp_path / "work")
    (work / name).write_text("keep\n")
    shadow = repo(tmp_path, work)
    checkpoint = await shadow.snapshot("c1")
    (work / name).unlink()
    await shadow.restore(checkpoint.commit, "undo1")
    assert (work / name).read_text() == "keep\n"


async def test_git_cancelled_at_any_moment_is_waited_for_by_asyncio_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An exit cancels the session-open snapshot wherever its git is: being started, running, just ended.
    However the cancel falls, the git is ended and reaped by asyncio's own watcher only: a reap behind its
    back (a ``poll`` in ``Popen.send_signal``, asyncio's undo of a half-made start) makes the watcher log
    "Unknown child process" on the user's terminal. The cancels are spread over the loop iterations a git
    takes, many times, so the moment a git has just exited but is not reaped yet is hit too."""
    shadow = repo(tmp_path, project(tmp_path / "work"))
    await shadow.snapshot("ready")  # the store exists: each call below is one short git
    caplog.set_level(logging.WARNING, logger="asyncio")
    before = {p.pid for p in psutil.Process().children()}
    for attempt in range(300):
        task = asyncio.ensure_future(shadow._git("rev-parse", "--git-dir", work_tree=False))
        for _ in range(attempt % 30):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert [r.getMessage() for r in caplog.records if "child process" in r.getMessage()] == []
    assert [p for p in psutil.Process().children() if p.pid not in before] == []  # every git reaped


async def test_many_new_files_go_into_one_pack_and_come_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot that reads many files streams them into one pack (no loose object file each); what it
    keeps restores as any other. A pack a killed git left unfinished is removed once old."""
    monkeypatch.setattr(shadow_module, "BULK_FILES", 3)
    work = project(tmp_path / "work")
    before = manifest(work)
    shadow = repo(tmp_path, work)
    first = await shadow.snapshot("c1")
    packs = shadow.git_dir / "objects" / "pack"
    assert len(list(packs.glob("pack-*.pack"))) == 1
    blob = (await shadow._git("rev-parse", f"{first.commit}:src/app.py")).strip()
    assert not (shadow.git_dir / "objects" / blob[:2] / blob[2:]).exists()  # in the pack, not loose
    bash(work, "echo changed > src/app.py; chmod -x run.sh; rm doomed.txt; echo new > new.txt")
    stale = packs / "tmp_pack_killed"
    stale.write_bytes(b"PACK")
    os.utime(stale, (0, 0))
    await shadow.restore(first.commit, "undo")
    assert manifest(work) == before
    assert not stale.exists()


async def test_a_failed_bulk_add_is_tried_once_more_the_plain_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(git ends a bulk add whole when a file shrinks while it streams it; here a setting it refuses
    stands in for that.) The snapshot is still taken, and holds every file."""
    monkeypatch.setattr(shadow_module, "BULK_FILES", 3)
    monkeypatch.setattr(shadow_module, "_BULK", ("-c", "core.bigFileThreshold=not-a-size"))
    work = project(tmp_path / "work")
    before = manifest(work)
    shadow = repo(tmp_path, work)
    first = await shadow.snapshot("c1")
    bash(work, "echo changed > src/app.py; rm doomed.txt")
    await shadow.restore(first.commit, "undo")
    assert manifest(work) == before
