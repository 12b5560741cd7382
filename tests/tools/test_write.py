"""write: parents created, atomic replacement, mode kept, bytes reported, symlinks written through."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink.agent.tool import Tool
from ink.ai.details import FileDiff
from tests.tools.conftest import call, write_bytes


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".ink-tmp")]


async def test_creates_parent_folders_and_reports_bytes(tmp_path: Path, tools: dict[str, Tool]) -> None:
    out = await call(tools["write"], path="a/b/c.txt", content="héllo\nworld")
    assert not out.is_error
    assert out.output == "Created a/b/c.txt (12 bytes, 2 lines)."
    assert (tmp_path / "a/b/c.txt").read_bytes() == "héllo\nworld".encode()


async def test_new_file_gets_the_umask_mode(tmp_path: Path, tools: dict[str, Tool]) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    await call(tools["write"], path="new.txt", content="x")
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask


async def test_overwrite_keeps_mode_and_replaces_atomically(tmp_path: Path, tools: dict[str, Tool]) -> None:
    target = write_bytes(tmp_path / "run.sh", b"#!/bin/sh\necho old\n", mode=0o751)
    old_inode = target.stat().st_ino
    reader = os.open(target, os.O_RDONLY)  # a reader of the old file keeps seeing it whole
    try:
        out = await call(tools["write"], path="run.sh", content="#!/bin/sh\necho new\n")
        assert os.read(reader, 100) == b"#!/bin/sh\necho old\n"
    finally:
        os.close(reader)
    assert out.output == "Overwrote run.sh (19 bytes, 2 lines; it had 19 bytes)."
    assert target.read_bytes() == b"#!/bin/sh\necho new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.stat().st_ino != old_inode  # renamed over, not truncated in place
    assert leftovers(tmp_path) == []


async def test_empty_content_writes_an_empty_file(tmp_path: Path, tools: dict[str, Tool]) -> None:
    out = await call(tools["write"], path="empty", content="")
    assert out.output == "Created empty (0 bytes, 0 lines)."
    assert (tmp_path / "empty").read_bytes() == b""


async def test_symlink_target_is_written_and_link_kept(tmp_path: Path, tools: dict[str, Tool]) -> None:
    real = write_bytes(tmp_path / "real.txt", b"old\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await call(tools["write"], path="link.txt", content="new\n")
    assert (tmp_path / "link.txt").is_symlink()
    assert real.read_bytes() == b"new\n"


async def test_directory_path_is_an_error(tmp_path: Path, tools: dict[str, Tool]) -> None:
    (tmp_path / "d").mkdir()
    out = await call(tools["write"], path="d", content="x")
    assert out.is_error
    assert out.output == "d is a directory; give the path of a file inside it."


async def test_file_in_the_way_of_the_parent_is_an_error(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "f", b"keep")
    out = await call(tools["write"], path="f/child.txt", content="x")
    assert out.is_error
    assert "f/child.txt" in out.output
    assert (tmp_path / "f").read_bytes() == b"keep"
    assert leftovers(tmp_path) == []


async def test_missing_content_called_directly_is_an_error_result(tools: dict[str, Tool]) -> None:
    out = await call(tools["write"], path="x.txt")
    assert out.is_error
    assert out.output == "Invalid arguments for write: content is required."


@pytest.fixture
def locked_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder with the immutable attribute: it refuses new files, even to root; its file stays writable."""
    folder = tmp_path / "locked"
    write_bytes(folder / "conf.txt", b"old content\n", mode=0o640)
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr")
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False).returncode != 0:
        pytest.skip("this file system does not support the immutable attribute")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


async def test_folder_refusing_new_files_falls_back_to_rewriting_in_place(
    locked_folder: Path, tools: dict[str, Tool]
) -> None:
    target = locked_folder / "conf.txt"
    out = await call(tools["write"], path="locked/conf.txt", content="new\n")
    assert out.output == "Overwrote locked/conf.txt (4 bytes, 1 line; it had 12 bytes)."
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    created = await call(tools["write"], path="locked/other.txt", content="x")
    assert created.is_error
    assert created.output == "Cannot write locked/other.txt: Permission denied."


async def test_the_user_gets_the_change_as_a_diff_the_model_never_sees(
    tmp_path: Path, tools: dict[str, Tool]
) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    out = await call(tools["write"], path="f.txt", content="one\nthree\n")
    [diff] = out.details
    assert isinstance(diff, FileDiff) and diff.path == str(tmp_path / "f.txt")
    assert (diff.before, diff.after) == ("one\ntwo\n", "one\nthree\n")
    assert "-two\n+three\n" in diff.unified and "three" not in out.output
    created = await call(tools["write"], path="new.txt", content="x\n")
    assert isinstance(created.details[0], FileDiff) and created.details[0].before is None
