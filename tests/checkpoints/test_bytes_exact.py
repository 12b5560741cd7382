"""A rewind gives back the bytes a checkpoint saw, whatever the repository and the user's git set up: no
line-ending, keyword, filter or encoding conversion from any ``.gitattributes``, the user's own git
files or ``GIT_*`` variables (R42, issue 29)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ink.checkpoints import shadow_repo_for
from ink.checkpoints.shadow import MAX_FILE_BYTES
from tests.checkpoints.test_shadow import manifest

LF = b"one\ntwo\n"
CRLF = b"one\r\ntwo\r\n"
MIXED = b"lf\ncrlf\r\nlone cr\r"
KEYWORD = b"$Id$\n$Id: not a hash $\n"
LATIN1 = "caf\u00e9\n".encode("latin-1")  # no UTF-16, no UTF-8
UTF16 = "\ufeffh\u00e9\n".encode("utf-16-le")
CONTENTS = {"lf.txt": LF, "crlf.txt": CRLF, "mixed.txt": MIXED, "id.txt": KEYWORD, "latin1.txt": LATIN1}
CONTENTS |= {"utf16.txt": UTF16, "sub/deep.txt": CRLF, "bin.dat": bytes(range(256))}

ATTRIBUTES = [
    "* text eol=crlf",
    "* text eol=lf",
    "* text=auto",
    "* text=auto eol=crlf",
    "* text",
    "* ident",
    "* working-tree-encoding=UTF-16",
    "*.txt text working-tree-encoding=UTF-16LE",
    "* filter=undefined",
    "* filter=rot13",  # defined in the user's git configuration (below): must not run either
    "* crlf",
    "* binary",
]


def workspace(root: Path, attributes: str) -> Path:
    root.mkdir()
    (root / ".gitattributes").write_text(attributes + "\n")
    (root / "sub").mkdir()
    (root / "sub" / ".gitattributes").write_text(attributes + "\n")  # a nested one too
    for name, data in CONTENTS.items():
        (root / name).write_bytes(data)
    return root


async def round_trip(tmp_path: Path, work: Path) -> None:
    """A checkpoint, every file changed, deleted or added, a restore: the bytes come back exactly, and
    the undo gives back the changed ones exactly too."""
    before = manifest(work)
    shadow = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    checkpoint = await shadow.snapshot("c1")
    (work / "lf.txt").write_bytes(CRLF)  # the other ending
    (work / "crlf.txt").unlink()
    (work / "id.txt").write_bytes(b"$Id$\nedited\n")
    (work / "new.txt").write_bytes(MIXED)
    changed = manifest(work)
    report = await shadow.restore(checkpoint.commit, "undo")
    assert manifest(work) == before
    assert set(report.written) == {"lf.txt", "crlf.txt", "id.txt"} and report.removed == ("new.txt",)
    await shadow.restore(report.undo, "redo")
    assert manifest(work) == changed


@pytest.mark.parametrize("attributes", ATTRIBUTES)
async def test_no_gitattributes_converts_a_byte(tmp_path: Path, attributes: str) -> None:
    await round_trip(tmp_path, workspace(tmp_path / "work", attributes))


HOSTILE_CHILD = """
import asyncio, sys
from pathlib import Path
from tests.checkpoints.test_bytes_exact import round_trip
asyncio.run(round_trip(Path(sys.argv[1]), Path(sys.argv[2])))
"""


def hostile_environment(tmp_path: Path) -> dict[str, str]:
    """A user whose git converts everything it can: ~/.gitconfig, $XDG_CONFIG_HOME/git/config and
    attributes, and GIT_* variables (configuration given in the environment, another object store)."""
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    home.mkdir()
    rot13 = "tr a-zA-Z n-za-mN-ZA-M"
    config = (
        f'[core]\n\tautocrlf = true\n\teol = crlf\n[filter "rot13"]\n\tclean = {rot13}\n\tsmudge = {rot13}\n'
    )
    (home / ".gitconfig").write_text(config)
    (xdg / "git" / "config").write_text(config)
    (xdg / "git" / "attributes").write_text("* text eol=crlf ident filter=rot13\n")
    (tmp_path / "elsewhere").mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(xdg),
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_0": "core.autocrlf",
        "GIT_CONFIG_VALUE_0": "true",
        "GIT_CONFIG_KEY_1": "filter.rot13.clean",
        "GIT_CONFIG_VALUE_1": rot13,
        "GIT_CONFIG_KEY_2": "filter.rot13.smudge",
        "GIT_CONFIG_VALUE_2": rot13,
        "GIT_CONFIG_PARAMETERS": "'core.autocrlf'='input'",
        "GIT_OBJECT_DIRECTORY": str(tmp_path / "elsewhere"),
        "GIT_DIR": str(tmp_path / "elsewhere"),
        "GIT_WORK_TREE": str(tmp_path / "elsewhere"),
    }


@pytest.mark.parametrize("attributes", ["* text=auto", "* filter=rot13", "# nothing of the repository's own"])
def test_the_users_git_configuration_and_environment_convert_nothing(tmp_path: Path, attributes: str) -> None:
    """ink started by a user whose git setup converts line endings, expands keywords and runs a filter
    everywhere: the store is sealed off from it (and keeps its objects to itself)."""
    work = workspace(tmp_path / "work", attributes)
    env = hostile_environment(tmp_path)
    argv = [sys.executable, "-c", HOSTILE_CHILD, str(tmp_path), str(work)]
    done = subprocess.run(argv, env=env, capture_output=True, timeout=120, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert list((tmp_path / "elsewhere").iterdir()) == []


async def test_a_nested_repository_without_a_commit_does_not_stop_checkpoints(tmp_path: Path) -> None:
    """``git init`` in a sub-folder (no commit yet) made every ``git add --all`` of the workspace fail, so
    no checkpoint was taken at all: such a folder is left out, and the rest is kept."""
    work = tmp_path / "work"
    (work / "vendored").mkdir(parents=True)
    (work / "vendored" / ".git").mkdir()  # what ``git init`` leaves before any commit
    for folder in ("objects", "refs"):
        (work / "vendored" / ".git" / folder).mkdir()
    (work / "vendored" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / "vendored" / "own.txt").write_text("the nested repository's\n")
    (work / "a.txt").write_text("one\n")
    shadow = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    checkpoint = await shadow.snapshot("c1")
    (work / "a.txt").write_text("two\n")
    (work / "vendored" / "own.txt").write_text("changed inside the nested repository\n")
    report = await shadow.restore(checkpoint.commit, "undo")
    assert (work / "a.txt").read_text() == "one\n" and report.written == ("a.txt",)
    assert (work / "vendored" / "own.txt").read_text() == "changed inside the nested repository\n"
    assert (work / "vendored" / ".git").is_dir()


async def test_a_file_that_grew_too_large_is_not_overwritten_by_a_restore(tmp_path: Path) -> None:
    """Left out of the snapshot taken just before the restore, it is in no checkpoint: writing the old
    small version over it would lose it for good."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.bin").write_bytes(b"small\n")
    shadow = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    checkpoint = await shadow.snapshot("c1")
    large = os.urandom(1024) * (MAX_FILE_BYTES // 1024 + 1)
    (work / "data.bin").write_bytes(large)
    report = await shadow.restore(checkpoint.commit, "undo")
    assert (work / "data.bin").read_bytes() == large
    assert "data.bin" not in report.written and "data.bin" in report.skipped


def test_the_hostile_set_up_does_convert_for_a_plain_git(tmp_path: Path) -> None:
    """(A guard for the test above: a git run as the user's, in that environment, does convert.)"""
    work = workspace(tmp_path / "work", "# none")
    env = hostile_environment(tmp_path)
    del env["GIT_DIR"], env["GIT_WORK_TREE"], env["GIT_OBJECT_DIRECTORY"]
    subprocess.run(["git", "init", "-q"], cwd=work, env=env, check=True)
    subprocess.run(["git", "add", "lf.txt"], cwd=work, env=env, check=True)
    staged = subprocess.run(
        ["git", "cat-file", "-p", ":lf.txt"], cwd=work, env=env, capture_output=True, check=True
    ).stdout
    assert staged != LF  # the user's filter ran on the way in


async def test_what_stands_in_a_paths_way_is_left_alone_and_named(tmp_path: Path) -> None:
    """A folder of the checkpoint became a file too large for any snapshot: its files cannot come back
    without deleting that file, which no checkpoint holds. It stays; the paths are named as blocked."""
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    (work / "d" / "a.txt").write_text("in the folder\n")
    (work / "b.txt").write_text("one\n")
    shadow = shadow_repo_for(tmp_path / "inkhome", work, "s1")
    checkpoint = await shadow.snapshot("c1")
    (work / "d" / "a.txt").unlink()
    (work / "d").rmdir()
    large = b"x" * (MAX_FILE_BYTES + 1)
    (work / "d").write_bytes(large)
    (work / "b.txt").write_text("two\n")
    report = await shadow.restore(checkpoint.commit, "undo")
    assert report.blocked == ("d/a.txt",) and report.written == ("b.txt",)
    assert (work / "d").read_bytes() == large and (work / "b.txt").read_text() == "one\n"
