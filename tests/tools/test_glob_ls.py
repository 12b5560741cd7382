"""glob and ls: .gitignore-aware (root, nested, negation, parent repo), .git hidden, sorted, capped."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import Tool
from ink.tools import MAX_LIST_ENTRIES, GlobTool, LsTool, Workspace
from ink.tools.ignore import IgnoreRules
from ink.tools.walk import WalkState, expand_braces, glob_regex, split_pattern, walk
from tests.tools.conftest import call, write_bytes


def tree(root: Path) -> None:
    write_bytes(root / ".gitignore", b"*.log\nbuild/\n!keep.log\n")
    write_bytes(root / ".git" / "HEAD", b"ref: refs/heads/main\n")
    write_bytes(root / "README.md", b"")
    write_bytes(root / "app.log", b"")
    write_bytes(root / "keep.log", b"")
    write_bytes(root / "build" / "out.py", b"")
    write_bytes(root / "src" / "main.py", b"")
    write_bytes(root / "src" / "lib" / "util.py", b"")
    write_bytes(root / "src" / "lib" / "gen.py", b"")
    write_bytes(root / "src" / "lib" / ".gitignore", b"gen.py\n")
    write_bytes(root / "src" / "view.tsx", b"")
    write_bytes(root / "src" / "model.ts", b"")
    write_bytes(root / ".github" / "ci.yml", b"")


async def test_glob_recursive_respects_gitignore(tmp_path: Path, tools: dict[str, Tool]) -> None:
    tree(tmp_path)
    out = await call(tools["glob"], pattern="**/*.py")
    assert out.output == "src/lib/util.py\nsrc/main.py"  # build/ and the nested-ignored gen.py are skipped


async def test_glob_top_level_only_and_hint(tmp_path: Path, tools: dict[str, Tool]) -> None:
    tree(tmp_path)
    assert (await call(tools["glob"], pattern="*.log")).output == "keep.log"  # negation re-includes it
    empty = await call(tools["glob"], pattern="*.py")
    assert empty.output == "No files match *.py. To search every folder, try **/*.py."


async def test_glob_braces_prefix_and_folders(tmp_path: Path, tools: dict[str, Tool]) -> None:
    tree(tmp_path)
    assert (await call(tools["glob"], pattern="src/*.{ts,tsx}")).output == "src/model.ts\nsrc/view.tsx"
    assert (await call(tools["glob"], pattern="src/*")).output == (
        "src/lib/\nsrc/main.py\nsrc/model.ts\nsrc/view.tsx"
    )
    assert (await call(tools["glob"], pattern="*.py", path="src/lib")).output == "src/lib/util.py"


async def test_glob_dot_folders_are_searched_but_not_git(tmp_path: Path, tools: dict[str, Tool]) -> None:
    tree(tmp_path)
    assert (await call(tools["glob"], pattern="**/*.yml")).output == ".github/ci.yml"
    assert (await call(tools["glob"], pattern="**/HEAD")).output.startswith("No files match")


async def test_glob_parent_repo_gitignore_applies_in_a_subfolder(
    tmp_path: Path, tools: dict[str, Tool]
) -> None:
    tree(tmp_path)
    write_bytes(tmp_path / "src" / "debug.log", b"")
    sub = GlobTool(Workspace(tmp_path / "src"))
    out = await call(sub, pattern="**/*")
    assert "debug.log" not in out.output and "lib/gen.py" not in out.output
    assert out.output.splitlines()[0] == "lib/"


async def test_glob_outside_the_workspace_shows_absolute_paths(tools: dict[str, Tool]) -> None:
    with tempfile.TemporaryDirectory() as other:
        write_bytes(Path(other) / "x.txt", b"")
        out = await call(tools["glob"], pattern="*.txt", path=other)
        assert out.output == f"{other}/x.txt"


async def test_glob_is_capped(tmp_path: Path, tools: dict[str, Tool]) -> None:
    for i in range(MAX_LIST_ENTRIES + 5):
        write_bytes(tmp_path / "many" / f"f{i:05}.txt", b"")
    out = await call(tools["glob"], pattern="many/*.txt")
    lines = out.output.splitlines()
    assert lines[0] == "many/f00000.txt" and len(lines) == MAX_LIST_ENTRIES + 1
    assert lines[-1] == (
        f"[Showing {MAX_LIST_ENTRIES} of {MAX_LIST_ENTRIES + 5} matches; narrow the pattern or the path.]"
    )


async def test_glob_errors(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "f.txt", b"")
    assert (await call(tools["glob"], pattern="*", path="nope")).output == "nope does not exist."
    assert (await call(tools["glob"], pattern="*", path="f.txt")).output == "f.txt is not a folder."
    assert (await call(tools["glob"], pattern=" ")).is_error


async def test_glob_does_not_follow_symlinked_folders(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "a" / "f.py", b"")
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a")
    out = await call(tools["glob"], pattern="**/*")
    assert out.output == "a/\na/f.py\na/loop/"


async def test_ls_lists_sorted_marks_folders_counts_hidden(tmp_path: Path, tools: dict[str, Tool]) -> None:
    tree(tmp_path)
    out = await call(tools["ls"])
    assert out.output == (
        ".github/\n.gitignore\nREADME.md\nkeep.log\nsrc/\n[2 entries hidden by .gitignore.]"
    )  # app.log and build/ hidden; .git is never listed nor counted


async def test_ls_subfolder_with_nested_gitignore(tmp_path: Path, tools: dict[str, Tool]) -> None:
    tree(tmp_path)
    out = await call(tools["ls"], path="src/lib")
    assert out.output == ".gitignore\nutil.py\n[1 entry hidden by .gitignore.]"


async def test_ls_symlinks_and_empty(tmp_path: Path, tools: dict[str, Tool]) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to("empty")
    assert (await call(tools["ls"])).output == "empty/\nlink/ -> empty"
    assert (await call(tools["ls"], path="empty")).output == "empty is empty."


async def test_ls_errors(tmp_path: Path, ws: Workspace) -> None:
    write_bytes(tmp_path / "f.txt", b"")
    ls = LsTool(ws)
    file_out = await call(ls, path="f.txt")
    assert (
        file_out.is_error and file_out.output == "f.txt is a file, not a folder. Use read to see its content."
    )
    missing = await call(ls, path="nope")
    assert missing.is_error and missing.output == "File not found: nope"


async def test_ls_is_capped(tmp_path: Path, tools: dict[str, Tool]) -> None:
    for i in range(MAX_LIST_ENTRIES + 1):
        write_bytes(tmp_path / f"f{i:05}", b"")
    lines = (await call(tools["ls"])).output.splitlines()
    assert len(lines) == MAX_LIST_ENTRIES + 1
    assert (
        lines[-1]
        == f"[Showing {MAX_LIST_ENTRIES} of {MAX_LIST_ENTRIES + 1} entries; use glob to narrow them down.]"
    )


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("*.py", "x/a.py", False),
        ("src/**", "src/a/b", True),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/deep/er/test_a.py", True),
        ("[!a]*.txt", "b.txt", True),
        ("[!a]*.txt", "a.txt", False),
        ("?.md", "a.md", True),
        ("?.md", "ab.md", False),
        ("*.{js,ts}", "x.ts", True),
        ("a+b(c).txt", "a+b(c).txt", True),
    ],
)
def test_glob_regex(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


def test_pattern_helpers() -> None:
    assert split_pattern("src/lib/**/*.py") == ("src/lib", "**/*.py")
    assert split_pattern("*.py") == ("", "*.py")
    assert split_pattern("/etc/*.conf") == ("/etc", "*.conf")
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]


async def test_glob_stops_when_the_run_is_aborted(tmp_path: Path, tools: dict[str, Tool]) -> None:
    """The walk checks the abort between entries: an abort that already happened stops it at once."""
    tree(tmp_path)
    signal = AbortSignal()
    signal.abort()
    out = await call(tools["glob"], signal, pattern="**/*")
    assert out.interrupted and out.is_error
    assert out.output == "Interrupted by the user; the search was stopped."


def test_walk_honours_its_stop_event(tmp_path: Path) -> None:
    tree(tmp_path)
    rules = IgnoreRules.for_folder(tmp_path, tmp_path)
    running = WalkState(threading.Event())
    assert len(list(walk(tmp_path, rules, running))) == 12
    stopped = WalkState(threading.Event())
    stopped.stop.set()
    assert list(walk(tmp_path, rules, stopped)) == []
