"""A repository's folder trees made to overrun a walk (issue 29): nested thousands deep (a path longer than
the system opens), or holding thousands of command files. ``ink -p`` died of RecursionError before its
first request with such a tree under ``.ink/commands`` or ``.claude/commands``, glob failed whole on any
``**`` pattern, and grep threw away every match for one path it could not open."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink.agent.tool import Tool
from ink.config.agents import BUILT_IN, load_agent_types
from ink.config.commands import MAX_DEPTH, MAX_FILES, MAX_FOLDERS, load_commands
from ink.frontends.tui.file_index import walk
from ink.tools import ProcessRegistry, Workspace, default_tools
from ink.tools.grep import PARTIAL_NOTE
from tests.fakeserver import FakeModelServer, say
from tests.hardening.test_hostile_repo_files import ink_p
from tests.tools.conftest import call

DEPTH = 3000  # past Python's recursion limit, and a path ("a/" x 3000) longer than PATH_MAX


MADE: list[Path] = []  # the tops of the chains this test made


@pytest.fixture(autouse=True)
def _flatten_after() -> Iterator[None]:
    """pytest's own clean-up of tmp dirs recurses (shutil.rmtree) and dies on these trees: each chain
    is taken apart here first."""
    yield
    while MADE:
        remove_chain(MADE.pop())


def remove_chain(top: Path) -> None:
    """Remove ``top/a/a/.../a`` and what is at its bottom: ``a/a`` moved up to ``top/b``, ``a`` removed,
    ``b`` renamed ``a``, one level at a time (every path stays short)."""
    while (top / "a").is_dir() and os.listdir(top / "a") == ["a"]:
        os.rename(top / "a" / "a", top / "b")
        os.rmdir(top / "a")
        os.rename(top / "b", top / "a")
    shutil.rmtree(top / "a", ignore_errors=True)


def nested(top: Path, depth: int = DEPTH) -> None:
    """``top/a/a/.../a``, made through folder descriptors (the full path cannot be opened)."""
    top.mkdir(parents=True, exist_ok=True)
    MADE.append(top)
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=fd)
            deeper = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = deeper
        with open(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as file:
            file.write("found at the bottom\n")
    finally:
        os.close(fd)


@pytest.mark.parametrize("folder", [".ink/commands", ".claude/commands", ".claude/agents"])
def test_a_command_tree_nested_thousands_deep_leaves_ink_answering(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, folder: str
) -> None:
    (project / ".git").mkdir()
    nested(project / folder)
    (project / folder / "good.md").write_text("a good one\n")
    fake_server.script(say("hello"))
    done = ink_p(fake_server, project, tmp_path)
    assert done.returncode == 0 and done.stdout == "hello\n", done.stderr[-2000:]
    if folder.endswith("commands"):
        assert f"folders more than {MAX_DEPTH} deep are not read for commands" in done.stderr


def test_commands_are_read_to_a_bound_with_a_warning(project: Path, tmp_path: Path) -> None:
    folder = project / ".ink" / "commands"
    folder.mkdir(parents=True)
    for number in range(MAX_FILES + 1):
        (folder / f"c{number:05}.md").write_text("x\n")
    book = load_commands(project, tmp_path / "inkhome")
    assert len(book.commands) == MAX_FILES and "c00000" in book.commands
    assert book.warnings == (
        f"{folder}: more than {MAX_FILES:,} files of commands, {MAX_FOLDERS:,} folders or 10,000 entries "
        "in a folder; the rest are not read",
    )
    user = tmp_path / "inkhome" / "commands"
    nested(user / "ns", MAX_DEPTH - 1)  # ns:a:...:a:deep is as deep as a command goes
    nested(user / "too", MAX_DEPTH)
    (folder / "c00000.md").unlink()
    book = load_commands(project, tmp_path / "inkhome")
    assert "ns:" + "a:" * (MAX_DEPTH - 1) + "deep" in book.commands and "c00000" not in book.commands
    assert f"{user}: folders more than {MAX_DEPTH} deep are not read for commands" in book.warnings


async def test_glob_and_grep_answer_beside_a_tree_nested_thousands_deep(
    project: Path, tmp_path: Path
) -> None:
    nested(project / "deep")
    (project / "src.py").write_text("needle = 1\n")
    tools: dict[str, Tool] = {
        tool.spec.name: tool for tool in default_tools(Workspace(project), ProcessRegistry(), kill_delay=0.2)
    }
    found = await call(tools["glob"], pattern="**/*.py")
    assert not found.is_error and found.output == "src.py", found.output
    listed = await call(tools["glob"], pattern="deep/**/a")
    assert listed.output.startswith("deep/a/\ndeep/a/a/\n"), listed.output[:200]
    matches = await call(tools["grep"], pattern="needle")
    assert not matches.is_error, matches.output[:300]
    assert matches.output.splitlines()[0] == "src.py:1:needle = 1"
    [note, error] = matches.output.splitlines()[1:]
    assert note == PARTIAL_NOTE and error.startswith("rg: ./deep/a/a/") and "characters cut" in error


def test_a_projects_commands_folder_that_leads_out_of_it_is_not_read(project: Path, tmp_path: Path) -> None:
    """``.ink/commands -> /`` made ink read every markdown file of the machine as commands (10 s of
    start-up); a link that stays in the project is followed; the user's own folders are bounded."""
    (project / ".git").mkdir()
    (project / ".ink").mkdir()
    (project / ".claude").mkdir()
    (project / ".ink" / "commands").symlink_to("/")
    (project / ".ink" / "agents").symlink_to("/usr")
    (project / "shared").mkdir()
    (project / "shared" / "review.md").write_text("review it\n")
    (project / ".claude" / "commands").symlink_to("../shared")
    book = load_commands(project, tmp_path / "inkhome", claude=True, home=tmp_path / "home")
    assert list(book.commands) == ["review"]
    assert f"{project}/.ink/commands: leads out of the project; not read" in book.warnings
    types, warnings = load_agent_types(project, tmp_path / "inkhome")
    assert set(types) == {t.name for t in BUILT_IN}
    assert f"{project}/.ink/agents: leads out of the project; not read" in warnings
    (tmp_path / "inkhome").mkdir()
    (tmp_path / "inkhome" / "commands").symlink_to("/")  # the user's: read, to the bounds
    mine = load_commands(project, tmp_path / "inkhome")
    assert len(mine.commands) <= MAX_FILES
    assert any(f"{MAX_FOLDERS:,} folders" in w for w in mine.warnings), mine.warnings


def test_the_at_index_lists_a_hostile_tree_by_names(project: Path) -> None:
    """The TUI's ``@`` index (file_index.walk) over a tree nested thousands deep, a symlink loop, a FIFO,
    a link to /dev/zero, a name that is not UTF-8 and one holding an escape sequence: every entry is
    listed as a name (nothing opened, no loop followed)."""
    nested(project / "deep")
    (project / "loop").symlink_to(".")
    os.mkfifo(project / "pipe")
    (project / "zero").symlink_to("/dev/zero")
    (project / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    (project / "esc\x1b[2J.txt").write_text("x")
    found, _cut = walk(project, 5000, 60.0, time.monotonic)
    assert max(len(path) for path in found) > 4000  # down the chain until no longer path can be opened
    assert {"loop", "pipe", "zero", os.fsdecode(b"caf\xe9.txt"), "esc\x1b[2J.txt"} <= set(found)
    assert not any(path.startswith("loop/") for path in found)
