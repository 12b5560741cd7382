"""The pins of what a run left: git's own blob ids, and past the budget fingerprints that only vouch for
files older than a clock step (R42, issue 29)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ink.checkpoints.pins import ABSENT, UNKNOWN, pin, touched
from ink.checkpoints.writeback import EXECUTABLE, REGULAR, SYMLINK


def git_blob(path: Path) -> str:
    done = subprocess.run(["git", "hash-object", "--no-filters", str(path)], capture_output=True, check=True)
    return done.stdout.decode().strip()


def test_content_pins_are_the_ids_git_gives(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"line\r\n\x00\xff")
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "run.sh").chmod(0o755)
    os.symlink("a.txt", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")  # never opened: a FIFO would block the read
    pins = pin(tmp_path, ["a.txt", "run.sh", "link", "fifo", "gone.txt"])
    assert (pins["a.txt"].blob, pins["a.txt"].mode) == (git_blob(tmp_path / "a.txt"), REGULAR)
    assert pins["run.sh"].mode == EXECUTABLE and pins["link"].mode == SYMLINK
    assert pins["fifo"].blob == ABSENT and pins["gone.txt"].blob == ABSENT


def test_past_the_budget_a_recent_file_is_unknown_and_an_old_one_is_fingerprinted(tmp_path: Path) -> None:
    (tmp_path / "new.txt").write_text("just written\n")
    (tmp_path / "old.txt").write_text("written long ago\n")
    os.utime(tmp_path / "old.txt", (1, 1))  # ctime stays now: utime itself changes it
    pins = pin(tmp_path, ["new.txt", "old.txt"], files=0)
    assert pins["new.txt"].blob == UNKNOWN and pins["old.txt"].blob == UNKNOWN  # ctime is recent for both
    assert touched(tmp_path, pins, {}) == ["new.txt", "old.txt"]


def test_touched_names_what_is_not_as_pinned(tmp_path: Path) -> None:
    for name in ("same.txt", "edited.txt", "deleted.txt"):
        (tmp_path / name).write_text(name)
    pins = pin(tmp_path, ["same.txt", "edited.txt", "deleted.txt", "recreated.txt"])
    staged = {
        "same.txt": (REGULAR, pins["same.txt"].blob),
        "edited.txt": (REGULAR, "0" * 40),
        "deleted.txt": None,
        "recreated.txt": (REGULAR, "1" * 40),
        "elsewhere.txt": (REGULAR, "2" * 40),  # staged, never listed by the run
    }
    assert touched(tmp_path, pins, staged) == ["deleted.txt", "edited.txt", "elsewhere.txt", "recreated.txt"]
    # staged as before the run: changed back after it (a file the run deleted, made again)
    back = touched(tmp_path, pins, {"same.txt": staged["same.txt"]})
    assert back == ["deleted.txt", "edited.txt", "recreated.txt"]
