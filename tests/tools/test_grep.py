"""grep: ripgrep with .gitignore, options, caps, a clear error without rg, and abort through the registry."""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import Tool
from ink.tools import MAX_OUTPUT_LINES, GrepTool, ProcessRegistry, Workspace, find_rg
from tests.tools.conftest import call, ctx, is_gone, wait_until, write_bytes


def project(root: Path) -> None:
    write_bytes(root / ".gitignore", b"build/\n*.log\n")
    write_bytes(root / "src" / "app.py", b"import os\n\ndef main():\n    return os.getcwd()\n")
    write_bytes(root / "src" / "util.py", b"def helper():\n    return 'MAIN'\n")
    write_bytes(root / "build" / "app.py", b"def main(): pass\n")
    write_bytes(root / "debug.log", b"main crashed\n")
    write_bytes(root / ".hidden" / "conf.py", b"main = 1\n")
    write_bytes(root / ".git" / "config", b"main\n")


def test_rg_is_found_in_inks_environment() -> None:
    rg = find_rg()
    assert rg is not None and os.access(rg, os.X_OK)


async def test_matches_with_relative_paths_gitignore_respected(
    tmp_path: Path, tools: dict[str, Tool]
) -> None:
    project(tmp_path)
    out = await call(tools["grep"], pattern="main")
    assert not out.is_error
    assert out.output == ".hidden/conf.py:1:main = 1\nsrc/app.py:3:def main():"


async def test_gitignore_applies_outside_a_git_repository(tmp_path: Path, tools: dict[str, Tool]) -> None:
    project(tmp_path)
    (tmp_path / ".git" / "config").unlink()
    (tmp_path / ".git").rmdir()
    out = await call(tools["grep"], pattern="main", path="src")
    assert out.output == "src/app.py:3:def main():"
    assert "build/" not in (await call(tools["grep"], pattern="main")).output


async def test_options(tmp_path: Path, tools: dict[str, Tool]) -> None:
    project(tmp_path)
    grep = tools["grep"]
    assert (await call(grep, pattern="MAIN", ignore_case=True, glob="util.py")).output == (
        "src/util.py:2:    return 'MAIN'"
    )
    assert (
        await call(grep, pattern="os.getcwd()", literal=True)
    ).output == "src/app.py:4:    return os.getcwd()"
    assert (await call(grep, pattern="def", files_only=True)).output == "src/app.py\nsrc/util.py"
    assert (await call(grep, pattern="def main", context=1, path="src/app.py")).output == (
        "src/app.py-2-\nsrc/app.py:3:def main():\nsrc/app.py-4-    return os.getcwd()"
    )


async def test_no_match_is_not_an_error(tmp_path: Path, tools: dict[str, Tool]) -> None:
    project(tmp_path)
    out = await call(tools["grep"], pattern="zebra")
    assert not out.is_error
    assert out.output == "No matches for 'zebra' in the working directory."
    in_src = await call(tools["grep"], pattern="zebra", path="src")
    assert in_src.output == "No matches for 'zebra' in src."


async def test_bad_regex_shows_riggreps_message(tmp_path: Path, tools: dict[str, Tool]) -> None:
    out = await call(tools["grep"], pattern="(unclosed")
    assert out.is_error
    assert out.output.startswith("ripgrep failed (exit code 2):") and "unclosed group" in out.output


async def test_missing_path_is_an_error(tools: dict[str, Tool]) -> None:
    out = await call(tools["grep"], pattern="x", path="nope")
    assert out.is_error and out.output == "nope does not exist."


async def test_path_outside_the_workspace_is_shown_absolute(tools: dict[str, Tool]) -> None:
    with tempfile.TemporaryDirectory() as other:
        write_bytes(Path(other) / "f.txt", b"needle\n")
        out = await call(tools["grep"], pattern="needle", path=other)
        assert out.output == f"{other}/f.txt:1:needle"


async def test_a_home_relative_path_is_expanded_as_the_other_tools_do(
    tmp_path: Path, tools: dict[str, Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: rg got ``~/notes`` verbatim (and found nothing) while read expanded it."""
    home = Path(tempfile.mkdtemp())
    monkeypatch.setenv("HOME", str(home))
    write_bytes(home / "notes" / "f.txt", b"needle\n")
    out = await call(tools["grep"], pattern="needle", path="~/notes")
    assert not out.is_error, out.output
    assert out.output == f"{home}/notes/f.txt:1:needle"
    assert "needle" in (await call(tools["read"], path="~/notes/f.txt")).output


async def test_output_is_capped_at_the_head(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "many.txt", b"hit\n" * (MAX_OUTPUT_LINES + 100))
    out = await call(tools["grep"], pattern="hit")
    lines = out.output.splitlines()
    assert lines[0] == "many.txt:1:hit"
    assert lines[MAX_OUTPUT_LINES - 1] == f"many.txt:{MAX_OUTPUT_LINES}:hit"
    assert lines[-1].startswith("[... 100 more lines (")


async def test_long_lines_are_cut_by_ripgrep(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "min.js", b"x" * 5000 + b"needle\n")
    out = await call(tools["grep"], pattern="x")
    assert len(out.output) < 700 and "[... omitted end of long line]" in out.output


async def test_missing_ripgrep_is_a_clear_error(ws: Workspace, registry: ProcessRegistry) -> None:
    tool = GrepTool(ws, registry, rg="/nonexistent/bin/rg")
    out = await tool.run({"pattern": "x"}, ctx())
    assert out.is_error
    assert "grep needs ripgrep" in out.output and "ripgrep==14.1.0" in out.output


async def test_abort_kills_ripgrep(tmp_path: Path, ws: Workspace, registry: ProcessRegistry) -> None:
    """rg reading a terabyte (sparse: no disk used) runs for hours: only the abort can end it."""
    os.truncate(write_bytes(tmp_path / "stuck", b""), 1 << 40)
    signal = AbortSignal()
    task = asyncio.ensure_future(GrepTool(ws, registry).run({"pattern": "x", "path": "stuck"}, ctx(signal)))
    await wait_until(lambda: bool(registry.alive()))
    rg = registry.entries[-1].pid
    signal.abort()
    out = await task
    assert out.interrupted and out.is_error
    assert out.output.startswith("Interrupted by the user; the search was stopped.")
    assert is_gone(rg)


@pytest.mark.parametrize("kind", ["fifo", "zero-link", "device"])
async def test_a_fifo_or_device_named_as_the_path_is_refused_at_once(
    tmp_path: Path, tools: dict[str, Tool], kind: str
) -> None:
    # issue 29: rg opened a FIFO named as its path and waited for a writer until the run was aborted
    project(tmp_path)
    target = tmp_path / "src" / "thing"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "zero-link":
        target.symlink_to("/dev/zero")
    elif os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    else:
        os.mknod(target, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    out = await asyncio.wait_for(call(tools["grep"], pattern="main", path="src/thing"), 30)
    assert out.is_error and "not a regular file" in out.output, out.output
    walked = await asyncio.wait_for(call(tools["grep"], pattern="main", path="src"), 30)
    assert walked.output == "src/app.py:3:def main():"  # a folder holding one is searched as usual
