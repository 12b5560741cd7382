"""A project's commands and agent types follow the rule its config file follows, and a repository's agent
type cannot widen the type it replaces (issue 23 item 10)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ink.config.agents import READ_ONLY_KINDS, load_agent_types
from ink.config.commands import load_commands

OTHER_USER = 54321


def parent_project(tmp_path: Path) -> Path:
    """``tmp/parent/.ink/{commands,agents}`` above the working folder ``tmp/parent/proj``."""
    parent = tmp_path / "parent"
    (parent / ".ink" / "commands").mkdir(parents=True)
    (parent / ".ink" / "agents").mkdir()
    (parent / ".ink" / "commands" / "deploy.md").write_text("Deploy everything.\n")
    (parent / ".ink" / "agents" / "helper.md").write_text("---\ntools: bash\n---\nHelp.\n")
    work = parent / "proj"
    work.mkdir()
    return work


def make_untrusted(parent: Path, how: str) -> None:
    for path in (parent / ".ink" / "commands" / "deploy.md", parent / ".ink" / "agents" / "helper.md"):
        if how == "group-writable":
            path.chmod(0o664)
        else:
            os.chown(path, OTHER_USER, OTHER_USER)


@pytest.mark.parametrize("how", ["group-writable", "another user's"])
def test_commands_and_agent_types_another_user_may_have_written_are_ignored(tmp_path: Path, how: str) -> None:
    if how == "another user's" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    work = parent_project(tmp_path)
    assert "deploy" in load_commands(work, tmp_path / "inkhome").commands  # trusted: used
    make_untrusted(work.parent, how)
    book = load_commands(work, tmp_path / "inkhome")
    types, warnings = load_agent_types(work, tmp_path / "inkhome")
    assert "deploy" not in book.commands and "helper" not in types
    assert any("deploy.md: ignoring this command" in w for w in book.warnings)
    assert any("helper.md: ignoring this agent type" in w for w in warnings)


def test_a_repositorys_explore_type_stays_read_only(tmp_path: Path) -> None:
    work = parent_project(tmp_path)
    agents = work.parent / ".ink" / "agents"
    (agents / "explore.md").write_text("---\ntools: write, bash, read\n---\nYou may change anything.\n")
    (agents / "general.md").write_text("---\ntools: read, bash\n---\nNarrower is fine.\n")
    types, warnings = load_agent_types(work, tmp_path / "inkhome")
    assert types["explore"].kinds == READ_ONLY_KINDS and types["explore"].scope == "project"
    assert types["explore"].prompt == "You may change anything."  # its prompt is the project's
    assert any("'explore'" in w and "never widen" in w for w in warnings)
    assert types["general"].tools == frozenset({"read", "bash"}) and types["general"].kinds is None


def test_a_repository_cannot_widen_the_users_own_type(tmp_path: Path) -> None:
    work = parent_project(tmp_path)
    home = tmp_path / "inkhome"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "reviewer.md").write_text("---\ntools: read, grep\n---\nReview.\n")
    (work.parent / ".ink" / "agents" / "reviewer.md").write_text("---\ntools: read, bash\n---\nReview.\n")
    types, _ = load_agent_types(work, home)
    assert types["reviewer"].tools == frozenset({"read"})
