"""A repository's files that are not files (issue 29): a FIFO, a character device, a symlink to
``/dev/zero``, a sparse file of a terabyte. Every reader of a repository's files (commands, agent types,
AGENTS.md, the project config, remembered permissions, .gitignore, ``@`` mentions, the read tool) reads
regular files only, a bounded number of bytes, without blocking: ``ink -p hi`` answers instead of hanging
before its first request or dying of MemoryError.

A character device is made with ``mknod`` where the tests run as root (skipped elsewhere, with the
reason); a symlink to ``/dev/zero`` is the same hazard any repository can ship.
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ink.config.commands import load_commands
from ink.frontends.tui.mentions import attach
from ink.regular_file import FileTooLarge, NotRegularFile, read_regular
from tests.cli.inkproc import INK, ink_env, one_line_error
from tests.fakeserver import FakeModelServer, call, say

MEMORY_CAP = 1 << 30  # address space of the ink under test: /dev/zero read whole fails fast, not at 3 GB
HOSTILE_NAMES = ("fifo", "zero-link", "device", "huge")


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_zero_link(path: Path) -> None:
    path.symlink_to("/dev/zero")


def make_device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's own numbers


def make_huge(path: Path) -> None:
    with open(path, "wb") as file:  # sparse: no disk is used
        file.truncate(1 << 40)


MAKERS: dict[str, Callable[[Path], None]] = {
    "fifo": make_fifo,
    "zero-link": make_zero_link,
    "device": make_device,
    "huge": make_huge,
}


def hostile(path: Path, kind: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    MAKERS[kind](path)
    return path


def capped_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def ink_p(
    server: FakeModelServer, project: Path, tmp_path: Path, *more: str
) -> subprocess.CompletedProcess[str]:
    base = server.base_url("openai")
    argv = [
        *INK,
        "-p",
        "--no-session",
        "--provider",
        "openai",
        "--base-url",
        base,
        "--api-key",
        "k",
        *more,
        "hi",
    ]
    return subprocess.run(
        argv,
        env=ink_env(tmp_path),
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,  # a FIFO read would block for ever: the test fails instead of hanging
        preexec_fn=capped_memory,
    )


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
def test_the_safe_reader_refuses_what_is_not_a_bounded_regular_file(tmp_path: Path, kind: str) -> None:
    path = hostile(tmp_path / "thing.md", kind)
    expected = FileTooLarge if kind == "huge" else NotRegularFile
    with pytest.raises(expected) as caught:
        read_regular(path, 1 << 20)
    assert isinstance(caught.value, OSError) and str(path) in str(caught.value)
    if kind == "huge":  # the head of it, when a reader wants that
        head = read_regular(path, 4096, cut=True)
        assert head.cut and head.data == b"\0" * 4096


def test_the_safe_reader_reads_a_file_and_a_link_to_one_and_says_when_it_cut(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"x" * 100)
    (tmp_path / "link.md").symlink_to("a.md")
    read = read_regular(tmp_path / "link.md", 100)
    target = os.stat(tmp_path / "a.md")  # its atime may be the read's own: the file is compared, not times
    assert (read.data, read.status.st_ino, read.status.st_dev, read.cut) == (
        b"x" * 100,
        target.st_ino,
        target.st_dev,
        False,
    )
    with pytest.raises(FileTooLarge):
        read_regular(tmp_path / "a.md", 99)
    with pytest.raises(OSError):
        read_regular(tmp_path / "link.md", 100, follow_symlinks=False)
    assert read_regular(tmp_path / "a.md", 99, cut=True).cut


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
def test_a_hostile_command_or_agent_file_is_skipped_with_a_warning_and_ink_answers(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, kind: str
) -> None:
    hostile(project / ".ink" / "commands" / "bad.md", kind)
    hostile(project / ".ink" / "agents" / "bad.md", kind)
    (project / ".ink" / "commands" / "good.md").write_text("a good command\n")
    book = load_commands(project, tmp_path / "inkhome")
    assert list(book.commands) == ["good"] and "bad" in book.warnings[0]
    fake_server.script(say("hello"))
    done = ink_p(fake_server, project, tmp_path)
    assert done.returncode == 0 and done.stdout == "hello\n", done.stderr[-2000:]


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
def test_hostile_instructions_permissions_and_ignore_files_leave_ink_answering(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, kind: str
) -> None:
    for name in ("AGENTS.md", ".gitignore", ".ink/permissions.toml"):
        hostile(project / name, kind)
    fake_server.script(call("glob", {"pattern": "*.txt"}), call("ls", {}), say("listed"))
    done = ink_p(fake_server, project, tmp_path)
    assert done.returncode == 0 and done.stdout == "listed\n", done.stderr[-2000:]
    results = [output for _, output in fake_server.requests[-1].tool_results()]
    assert "notes.txt" in results[0]
    if kind == "huge":  # a head of it, said to be cut (the others are no instruction files at all)
        assert "the rest is not shown" in fake_server.requests[0].system


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
def test_a_hostile_config_file_is_one_config_error_or_no_config(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, kind: str
) -> None:
    hostile(project / ".ink" / "config.toml", kind)
    hostile(tmp_path / "inkhome" / "config.toml", kind)
    fake_server.script(say("hello"))
    done = ink_p(fake_server, project, tmp_path)
    error = one_line_error(done.stderr)
    assert done.returncode == 2 and "config.toml: cannot read it" in error, error
    assert ("larger than 1 MiB" in error) == (kind == "huge"), error
    assert not fake_server.requests


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
def test_a_hostile_mention_is_not_attached_and_does_not_block(tmp_path: Path, kind: str) -> None:
    hostile(tmp_path / "thing.txt", kind)
    hostile(tmp_path / "shot.png", kind)
    attached = attach("look at @thing.txt and @shot.png", tmp_path, model="gpt-4.1")
    if kind == "huge":  # a head of it, said to be cut; the image is over the limit
        assert "cut at 64 KB" not in attached.prompt or "thing.txt" in attached.paths
        assert any("over the 5 MB" in problem for problem in attached.problems)
    else:
        assert attached.paths == () and len(attached.problems) == 2, attached


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
def test_the_read_tool_refuses_a_hostile_file_without_blocking(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, kind: str
) -> None:
    hostile(project / "thing.txt", kind)
    fake_server.script(call("read", {"path": "thing.txt"}), say("read"))
    done = ink_p(fake_server, project, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    [(_, output)] = fake_server.requests[-1].tool_results()
    assert ("not a regular file" in output) != (kind == "huge"), output


@pytest.mark.parametrize("kind", HOSTILE_NAMES)
@pytest.mark.parametrize("tool", ["edit", "write"])
def test_edit_and_write_of_a_hostile_file_answer_without_blocking(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, kind: str, tool: str
) -> None:
    thing = hostile(project / "thing.txt", kind)
    args = {"path": "thing.txt"} | (
        {"old_text": "a", "new_text": "b"} if tool == "edit" else {"content": "new\n"}
    )
    fake_server.script(call(tool, args), say("done"))
    done = ink_p(fake_server, project, tmp_path, "--permission-mode", "yolo")
    assert done.returncode == 0, done.stderr[-2000:]
    [(_, output)] = fake_server.requests[-1].tool_results()
    if tool == "edit":
        refusals = ("not a regular file", "larger than", "leads out of the workspace")
        assert any(refusal in output for refusal in refusals), output
    if kind == "zero-link":
        assert thing.is_symlink() and os.readlink(thing) == "/dev/zero"  # never written through
