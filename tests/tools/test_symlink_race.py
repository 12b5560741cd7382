"""write and edit open the checked path once, by descriptor: a folder swapped for a symlink between the
permission check and the write cannot carry the write out of the workspace (issue 11). A real process
races the tools, swapping a folder of the workspace with a link to outside as fast as it can."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink.tools.edit import EditTool
from ink.tools.replace import Replacement
from ink.tools.workspace import Workspace
from ink.tools.write import WriteTool
from tests.permissions.helpers import policy
from tests.waiting import wait_for_file

TRIES = 300
SWAPPER = """
import os, shutil, sys
work, outside, stop, ready = sys.argv[1:5]
folder, parked = os.path.join(work, "d"), os.path.join(work, "d.parked")

def insist(step):  # a writer may create a new "d" while the real one is parked: the parked one wins
    while True:
        if os.path.isdir(folder) and not os.path.islink(folder):
            shutil.rmtree(folder, ignore_errors=True)
        try:
            return step()
        except OSError:
            continue

swaps = 0
while not os.path.exists(stop):
    os.rename(folder, parked)                       # the real folder steps aside,
    insist(lambda: os.symlink(outside, folder))     # a link to outside takes its place,
    swaps += 1
    if swaps == 10:
        open(ready, "w").write("swapping")
    os.unlink(folder)
    insist(lambda: os.rename(parked, folder))       # and the folder comes back
open(ready, "w").write(str(swaps))
"""


@pytest.fixture
def racing(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(workspace, outside): ``workspace/d`` is a folder, or for moments a link to ``outside``, until the
    test ends; the swapping has begun when the test starts, and it asserts that it went on throughout
    (by the swapper being alive at the end, not by a swap count, which depends on the machine's load)."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "d").mkdir(parents=True)
    outside.mkdir()
    (work / "d" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("outside\n")
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, *map(str, (work, outside, stop, ready))])
    try:
        assert wait_for_file(ready, timeout=60) == "swapping"
        yield work, outside
        still_swapping = swapper.poll() is None  # it did not die midway, whatever the machine's speed
    finally:
        stop.touch()
        swapper.wait(timeout=30)
    assert still_swapping and swapper.returncode == 0
    assert int(ready.read_text()) > 10  # and it went on swapping after the test began


def test_a_racing_symlink_swap_never_carries_a_write_out(racing: tuple[Path, Path]) -> None:
    work, outside = racing
    workspace = Workspace(work)
    write, edit = WriteTool(workspace), EditTool(workspace)
    checker = policy(work, "accept-edits")
    written = 0
    for attempt in range(TRIES):
        if checker.check("write", {"path": "d/new.txt", "content": ""}).kind != "allow":
            continue  # the check saw the link: it would ask
        out = write.write_sync("d/new.txt", f"attempt {attempt}\n")
        written += not out.is_error
        edit.edit_sync("d/f.txt", [_replace("inside", "inside")])
        edit.edit_sync("d/f.txt", [_replace("outside", "changed")])
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "outside\n"
    assert written > 0  # the race did not starve every write


def test_a_swap_right_after_the_check_fails_the_write_instead_of_escaping(tmp_path: Path) -> None:
    """The race, without the timing: checked while a folder, written while a link."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "d").mkdir(parents=True)
    outside.mkdir()
    assert policy(work, "accept-edits").check("write", {"path": "d/x.txt", "content": ""}).kind == "allow"
    (work / "d").rmdir()
    (work / "d").symlink_to(outside, target_is_directory=True)
    out = WriteTool(Workspace(work)).write_sync("d/x.txt", "escape\n")
    assert out.is_error and "leads out of the workspace" in out.output
    assert list(outside.iterdir()) == []
    (outside / "y.txt").write_text("theirs\n")
    edited = EditTool(Workspace(work)).edit_sync("d/y.txt", [_replace("theirs", "ours")])
    assert edited.is_error and (outside / "y.txt").read_text() == "theirs\n"


def test_links_inside_the_workspace_are_still_followed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "real" / "deep").mkdir(parents=True)
    (work / "alias").symlink_to("real/deep", target_is_directory=True)
    (work / "abs").symlink_to(work / "real", target_is_directory=True)
    (work / "real" / "deep" / "file.txt").write_text("a\n")
    (work / "filelink.txt").symlink_to("real/deep/file.txt")
    write = WriteTool(Workspace(work))
    assert not write.write_sync("alias/new.txt", "via relative link\n").is_error
    assert not write.write_sync("abs/deep/../other.txt", "via absolute link\n").is_error
    assert not write.write_sync("filelink.txt", "through the file link\n").is_error
    assert (work / "real" / "deep" / "new.txt").read_text() == "via relative link\n"
    assert (work / "real" / "other.txt").read_text() == "via absolute link\n"
    assert (work / "filelink.txt").is_symlink()
    assert (work / "real" / "deep" / "file.txt").read_text() == "through the file link\n"


def test_a_path_named_outside_is_written_where_it_points(tmp_path: Path) -> None:
    """Outside the workspace (which asks first), links are followed as before."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    (elsewhere / "real").mkdir(parents=True)
    (elsewhere / "link").symlink_to("real", target_is_directory=True)
    out = WriteTool(Workspace(work)).write_sync(str(elsewhere / "link" / "a.txt"), "ok\n")
    assert not out.is_error and (elsewhere / "real" / "a.txt").read_text() == "ok\n"


def _replace(old: str, new: str) -> Replacement:
    return Replacement(old, new, False)


def test_a_workspace_behind_a_symlink_takes_links_to_its_real_path(tmp_path: Path) -> None:
    real, alias = tmp_path / "real", tmp_path / "alias"
    (real / "sub").mkdir(parents=True)
    alias.symlink_to(real, target_is_directory=True)
    (real / "link").symlink_to(real / "sub", target_is_directory=True)
    out = WriteTool(Workspace(alias)).write_sync("link/a.txt", "x\n")
    assert not out.is_error and (real / "sub" / "a.txt").read_text() == "x\n"


def test_a_link_loop_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    out = WriteTool(Workspace(tmp_path)).write_sync("a/x.txt", "x\n")
    assert out.is_error and "Too many levels of symbolic links" in out.output
