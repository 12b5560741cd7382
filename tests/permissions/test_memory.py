"""The remembered "always" answers: kept in ``$INK_HOME/projects/…/permissions.toml`` (never in the
project), written atomically, read back exactly, editable by hand, and never written over when a hand edit
cannot be read back (R38: a rule a person can read and edit, no untracked files in their repository)."""

from __future__ import annotations

import hashlib
import json
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink.config.rules import parse_rule
from ink.permissions import PermissionMemory, RuleSet
from ink.permissions.memory import UnreadableMemory
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


def test_rules_are_merged_written_in_ink_home_and_read_back(project: Path, tmp_path: Path) -> None:
    mem = memory(project, tmp_path)
    assert mem.load() == ([], None)
    mem.add(["bash(npm test *)"])
    mem.add(["edit(./notes.md)", "bash(npm test *)"])  # already there: not twice
    rules, warning = memory(project, tmp_path).load()  # a new reader, as in the next process
    assert warning is None
    assert [(r.effect, r.text) for r in rules] == [
        ("allow", "bash(npm test *)"),
        ("allow", "edit(./notes.md)"),
    ]
    assert mem.path.parent.parent == tmp_path / "inkhome" / "projects"
    assert mem.path.parent.name.rsplit("-", 1)[0].endswith("proj")  # named as session folders are
    text = mem.path.read_text()
    assert text.startswith('# The "always allow" answers for the project') and str(project) in text
    assert "[permissions]\nallow = [\n" in text
    assert sorted(p.name for p in mem.path.parent.iterdir()) == [".lock", "permissions.toml"]  # no temp files
    assert stat.S_IMODE(mem.path.stat().st_mode) == 0o600
    assert list(project.iterdir()) == []  # nothing in the project: no untracked file in the repository


def test_another_project_has_its_own_answers(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other" / "proj"  # the same folder name elsewhere
    other.mkdir(parents=True)
    memory(project, tmp_path).add(["bash(make *)"])
    assert memory(other, tmp_path).load() == ([], None)


def test_a_hand_edit_counts(project: Path, tmp_path: Path) -> None:
    """The file is the user's: a rule deleted by hand is gone, one added counts, no digest refuses it."""
    mem = memory(project, tmp_path)
    mem.add(["bash(npm test *)", "bash(make)"])
    mem.path.write_text(mem.path.read_text().replace('  "bash(make)",\n', '  "bash(cargo build *)",\n'))
    rules, warning = mem.load()
    assert warning is None and [r.text for r in rules] == ["bash(npm test *)", "bash(cargo build *)"]
    mem.add(["edit(./x.md)"])
    assert [r.text for r in mem.load()[0]] == ["bash(npm test *)", "bash(cargo build *)", "edit(./x.md)"]


def test_a_broken_hand_edit_allows_nothing_and_is_never_written_over(project: Path, tmp_path: Path) -> None:
    mem = memory(project, tmp_path)
    mem.add(["bash(ls)"])
    broken = '[permissions]\nallow = ["bash(ls)", "bash("]\n# my notes\n'
    mem.path.write_text(broken)
    rules, warning = mem.load()
    assert rules == [] and warning is not None and "not of the form" in warning and str(mem.path) in warning
    with pytest.raises(UnreadableMemory, match="fix or delete it"):
        mem.add(["bash(make)"])
    assert mem.path.read_text() == broken  # the user's text is kept for them to fix
    mem.path.write_text("[permissions]\nallow = [1]\n")
    assert mem.load()[0] == [] and "must be a string" in (mem.load()[1] or "")
    mem.path.write_bytes(b"\xff\xfe")
    assert mem.load()[0] == [] and mem.load()[1] is not None
    mem.path.write_text("[permissions]\nallow = " + "[" * 100_000)  # RecursionError killed ink at start
    assert mem.load()[0] == [] and "nest too deeply" in (mem.load()[1] or "")
    with pytest.raises(UnreadableMemory):
        mem.add(["bash(make)"])


def test_any_command_round_trips_and_matches_only_itself(project: Path, tmp_path: Path) -> None:
    command = 'printf "%s\\n" "a*b" \'c\\d\' && echo $(date) \x7f ü\n  | tee "x y" # done'
    rule = f"bash({escape(command)})"
    memory(project, tmp_path).add([rule])
    [loaded], _ = memory(project, tmp_path).load()
    assert loaded.text == rule
    policy = PermissionPolicy("ask", RuleSet([loaded]), project, builtin_tools(project))
    assert policy.check("bash", {"command": command}).kind == "allow"
    assert policy.check("bash", {"command": command.replace("a*b", "aXXb")}).kind == "ask"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=4))
def test_whatever_command_is_remembered_reads_back_the_same(commands: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "p"
        root.mkdir()
        rules = list(dict.fromkeys(f"bash({escape(c)})" for c in commands if c.strip()))
        if not rules:
            return
        mem = PermissionMemory(root, Path(tmp) / "home")
        mem.add(rules)
        assert [r.text for r in mem.load()[0]] == [parse_rule("allow", r, "x").text for r in rules]


def test_an_earlier_versions_file_in_the_project_is_carried_over_once(project: Path, tmp_path: Path) -> None:
    legacy = project / ".ink" / "permissions.toml"
    legacy.parent.mkdir()
    legacy.write_text('[permissions]\nallow = [\n  "bash(npm test)",\n]\n')
    record = tmp_path / "inkhome" / "trusted-permissions.json"
    record.parent.mkdir()
    record.write_text(json.dumps({str(legacy.resolve()): hashlib.sha256(legacy.read_bytes()).hexdigest()}))
    mem = memory(project, tmp_path)
    rules, warning = mem.load()
    assert [r.text for r in rules] == ["bash(npm test)"]
    assert warning is not None and "moved to" in warning and "can be deleted" in warning
    assert [r.text for r in memory(project, tmp_path).load()[0]] == ["bash(npm test)"]
    assert memory(project, tmp_path).load()[1] is None  # once


def test_a_file_that_came_with_the_project_allows_nothing(project: Path, tmp_path: Path) -> None:
    (project / ".ink").mkdir()
    shipped = project / ".ink" / "permissions.toml"
    shipped.write_text('[permissions]\nallow = ["bash"]\n')
    rules, warning = memory(project, tmp_path).load()
    assert rules == [] and warning is not None and "not read" in warning and str(shipped) in warning
    assert not memory(project, tmp_path).path.exists()


def test_writers_in_two_processes_lose_no_rule(project: Path, tmp_path: Path) -> None:
    """Serialised by a lock: each add reads what the other wrote (threads stand for the processes)."""
    errors: list[BaseException] = []

    def add(n: int) -> None:
        try:
            memory(project, tmp_path).add([f"bash(job {n})"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(r.text for r in memory(project, tmp_path).load()[0]) == sorted(
        f"bash(job {n})" for n in range(12)
    )


def test_a_rule_is_checked_before_it_is_written(project: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="not of the form"):
        memory(project, tmp_path).add(["bash("])
    assert not memory(project, tmp_path).path.exists()
    assert parse_rule("allow", "bash(ls)", "x").text == "bash(ls)"
