"""The system prompt: tools, environment, and project instructions found up to the repository root."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from ink.ai.provider import ToolSpec
from ink.system_prompt import Environment, build_system_prompt, find_git_root, instruction_files

TOOLS = [
    ToolSpec("read", "Read a file.\nLong details the prompt does not need.", {}),
    ToolSpec("bash", "Run a shell command.", {}),
]


def env_for(cwd: Path, home: Path | None = None) -> Environment:
    cwd = cwd.resolve()
    return Environment(cwd, "Linux 6.1", dt.date(2025, 3, 4), find_git_root(cwd), home)


def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """outside/AGENTS.md, repo/.git, repo/CLAUDE.md, repo/pkg/AGENTS.md + CLAUDE.md, repo/pkg/sub (cwd)."""
    outside = tmp_path / "outside"
    repo = outside / "repo"
    sub = repo / "pkg" / "sub"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    (outside / "AGENTS.md").write_text("outside rules: must not be read")
    (repo / "CLAUDE.md").write_text("repo rules")
    (repo / "pkg" / "AGENTS.md").write_text("pkg rules")
    (repo / "pkg" / "CLAUDE.md").write_text("pkg claude rules: AGENTS.md wins")
    return outside, repo, sub


def test_instructions_from_cwd_up_to_the_repo_root_outermost_first(tmp_path: Path) -> None:
    _, repo, sub = tree(tmp_path)
    files = instruction_files(env_for(sub))
    assert files == [repo.resolve() / "CLAUDE.md", repo.resolve() / "pkg" / "AGENTS.md"]


def test_the_prompt_names_each_file_and_shows_tools_and_environment(tmp_path: Path) -> None:
    _, repo, sub = tree(tmp_path)
    prompt = build_system_prompt(TOOLS, env_for(sub), extra=["# Mode\nPrint mode: answer once."])
    assert prompt.startswith("You are ink")
    assert "- read: Read a file.\n- bash: Run a shell command." in prompt and "Long details" not in prompt
    assert f"- Working directory: {sub.resolve()}" in prompt
    assert f"- Git repository: yes (repository root: {repo.resolve()})" in prompt
    assert "- Platform: Linux 6.1" in prompt and "- Date: 2025-03-04" in prompt
    assert "# Mode\nPrint mode: answer once." in prompt
    repo_rules = prompt.index(f"## {repo.resolve() / 'CLAUDE.md'}\nrepo rules")
    pkg_rules = prompt.index(f"## {repo.resolve() / 'pkg' / 'AGENTS.md'}\npkg rules")
    assert repo_rules < pkg_rules
    assert "must not be read" not in prompt and "AGENTS.md wins" not in prompt


def test_outside_a_repository_the_search_stops_at_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = home / "work" / "thing"
    work.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("above home")
    (home / "AGENTS.md").write_text("home rules")
    (work / "AGENTS.md").write_text("thing rules")
    env = env_for(work, home=home.resolve())
    assert env.git_root is None
    assert instruction_files(env) == [home.resolve() / "AGENTS.md", work.resolve() / "AGENTS.md"]
    prompt = build_system_prompt([], env)
    assert "- Git repository: no" in prompt and "No tools are available" in prompt


def test_outside_home_and_repository_the_search_goes_to_the_root(tmp_path: Path) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("top")
    env = env_for(work, home=tmp_path / "elsewhere")
    assert tmp_path.resolve() / "AGENTS.md" in instruction_files(env)


def test_without_instruction_files_there_is_no_instructions_section(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    prompt = build_system_prompt(TOOLS, env_for(tmp_path))
    assert "# Project instructions" not in prompt and "- Git repository: yes\n" in prompt


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_named_not_fatal(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    agents = tmp_path / "AGENTS.md"
    agents.write_text("secret")
    agents.chmod(0)
    prompt = build_system_prompt(TOOLS, env_for(tmp_path))
    assert f"## {agents.resolve()}\n(could not be read" in prompt


def test_a_huge_file_is_cut_with_a_note(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("x" * 50_000)
    prompt = build_system_prompt(TOOLS, env_for(tmp_path))
    assert "10000 more characters not shown" in prompt and prompt.count("x") < 41_000


def test_a_git_worktree_file_marks_the_root_too(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /somewhere/else")
    (tmp_path / "src").mkdir()
    assert find_git_root((tmp_path / "src").resolve()) == tmp_path.resolve()
    assert Environment.detect(tmp_path / "src").git_root == tmp_path.resolve()
