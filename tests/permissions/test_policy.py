"""The policy's verdicts: each mode, each rule kind, and the places that ask in every mode but yolo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.permissions.helpers import bash, kind, policy

MODES = ("ask", "accept-edits", "yolo")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    (work / "src").mkdir(parents=True)
    return work


@pytest.mark.parametrize(
    ("mode", "read", "edit", "bash_verdict", "other"),
    [
        ("ask", "allow", "ask", "ask", "ask"),
        ("accept-edits", "allow", "allow", "ask", "ask"),
        ("yolo", "allow", "allow", "allow", "allow"),
    ],
)
def test_each_mode_without_rules(
    root: Path, mode: str, read: str, edit: str, bash_verdict: str, other: str
) -> None:
    p = policy(root, mode)  # type: ignore[arg-type]
    assert kind(p, "read", path="src/a.py") == read
    assert kind(p, "grep", pattern="x") == read
    assert kind(p, "glob", pattern="*.py") == read
    assert kind(p, "ls") == read
    assert kind(p, "write", path="src/a.py", content="x") == edit
    assert kind(p, "edit", path="src/a.py", old_string="a", new_string="b") == edit
    assert bash(p, "ls") == bash_verdict
    assert kind(p, "mcp_search", query="x") == other


def test_ask_mode_says_why_and_what_always_would_remember(root: Path) -> None:
    p = policy(root)
    write = p.check("write", {"path": "notes.md", "content": ""})
    assert (write.kind, write.remember, write.mode) == ("ask", "edit(./notes.md)", "accept-edits")
    assert "notes.md" in write.what and "'ask' mode" in write.why
    nested = p.check("edit", {"path": "src/a*b.py"})
    assert nested.remember == "edit(src/a\\*b.py)"  # escaped: it names exactly that file
    command = p.check("bash", {"command": "  npm test  "})
    assert (command.kind, command.remember, command.mode) == (
        "ask",
        "bash(npm test *)",
        "yolo",
    )  # a readable prefix
    assert "no allow rule covers `npm test`" in command.why


def test_bash_allow_rules_by_exact_command_and_by_prefix(root: Path) -> None:
    p = policy(root, allow=("bash(npm test)", "bash(git status*)", "bash(git log *)", "bash(make:*)"))
    assert bash(p, "npm test") == "allow"
    assert bash(p, "npm   test") == "allow"  # the parser's words, not the spacing
    assert bash(p, "npm test --watch") == "ask"  # exact: nothing more
    assert bash(p, "git status") == bash(p, "git status -s") == "allow"
    assert bash(p, "git log") == bash(p, "git log --oneline -5") == "allow"
    assert bash(p, "git logs") == "ask"  # "git log *" is git log and its arguments, not a longer word
    assert bash(p, "make") == bash(p, "make test") == "allow"  # Claude Code's `:*` spelling
    assert bash(p, "FOO=1 npm test") == "ask"  # an assignment changes what runs
    assert bash(p, "'npm' \"test\"") == "allow"  # quotes are compared as the shell removes them


def test_a_compound_command_needs_every_part_allowed(root: Path) -> None:
    p = policy(root, allow=("bash(git status*)", "bash(npm test)"))
    assert bash(p, "git status && rm -rf x") == "ask"
    verdict = p.check("bash", {"command": "git status && rm -rf x"})
    assert "rm -rf x" in verdict.why
    for joined in ("git status; rm -rf x", "git status || rm -rf x", "git status | rm -rf x",
                   "git status & rm -rf x", "git status\nrm -rf x"):  # fmt: skip
        assert bash(p, joined) == "ask", joined
    assert bash(p, "git status && npm test") == "allow"
    assert bash(p, "git status | npm test; npm test") == "allow"
    assert bash(p, 'git status "&& rm -rf x"') == "allow"  # quoted: one argument of git, not a command
    assert bash(p, "PATH=/tmp/evil; npm test") == "ask"  # an assignment on its own line is a command too


@pytest.mark.parametrize(
    "command",
    [
        "echo $(rm -rf x)",
        "echo `rm -rf x`",
        "cat <(rm -rf x)",
        "echo hi > >(rm -rf x)",
        "(echo hi)",
        "{ echo hi; }",
        "for f in a b; do echo $f; done",
        "if true; then echo hi; fi",
        "f() { echo hi; }; f",
        "$CMD hi",
        "echo hi > $TARGET",
        "[[ -f x ]] && echo hi",
        'echo "${x:-$(rm y)}"',
        "cat <<EOF\n$(rm y)\nEOF",
    ],
)
def test_what_cannot_be_judged_from_its_parts_asks_even_when_every_word_is_allowed(
    root: Path, command: str
) -> None:
    p = policy(root, mode="accept-edits", allow=("bash(echo *)", "bash(cat *)", "bash(f)", "bash(rm *)"))
    verdict = p.check("bash", {"command": command})
    assert verdict.kind == "ask", command
    assert verdict.why


def test_an_always_rule_names_the_whole_command_line_even_an_uncheckable_one(root: Path) -> None:
    command = "echo $(date) && ls *.py"
    p = policy(root, allow=(f"bash({command.replace('*', chr(92) + '*')})",))
    assert bash(p, command) == "allow"
    assert bash(p, "echo $(date) && ls *.py; rm x") == "ask"  # exact means exact


def test_deny_beats_allow_and_applies_in_every_mode(root: Path) -> None:
    for mode in MODES:
        p = policy(root, mode, allow=("bash", "edit(src/**)"), deny=("bash(rm *)", "edit(src/secret.py)"))  # type: ignore[arg-type]
        assert bash(p, "rm -rf build") == "deny"
        assert bash(p, "rm") == "deny"  # "rm *" also matches rm alone
        assert bash(p, "git status && rm -rf build") == "deny"  # any part
        assert bash(p, "ls") == "allow"
        assert kind(p, "write", path="src/secret.py", content="") == "deny"
        assert kind(p, "write", path="src/other.py", content="") == "allow"


@pytest.mark.parametrize(
    "command",
    ["sudo rm -rf x", "env A=1 rm -rf x", "timeout 5 rm -rf x", "xargs rm -rf", "echo $(rm -rf x)",
     "(cd sub && rm -rf x)", "bash -c 'ls; rm -rf x'", "eval 'rm -rf x'", "find . -exec rm {} ;",
     "A=1 rm -rf x", "/bin/ls && \\rm -rf x"],
)  # fmt: skip
def test_a_deny_rule_sees_commands_inside_wrappers_substitutions_and_subshells(
    root: Path, command: str
) -> None:
    p = policy(root, "yolo", deny=("bash(rm *)",))
    verdict = p.check("bash", {"command": command})
    assert verdict.kind == "deny", command
    assert "bash(rm *)" in verdict.why


def test_bare_rules_cover_every_call_of_a_tool(root: Path) -> None:
    p = policy(root, allow=("bash", "mcp_search"), deny=("read",))
    assert bash(p, "echo $(whoami) > /dev/null; (ls)") == "allow"
    assert kind(p, "mcp_search", query="x") == "allow"
    for reader in ("read", "grep", "glob", "ls"):  # read names the whole group of readers
        assert kind(p, reader, path="src", pattern="x") == "deny"
    assert bash(policy(root, "yolo", deny=("bash",)), "ls") == "deny"


def test_edit_and_write_rules_are_one_group_with_path_globs(root: Path) -> None:
    p = policy(root, allow=("edit(src/**)", "write(*.md)", "edit(./setup.py)"))
    assert kind(p, "write", path="src/deep/new.py", content="") == "allow"
    assert kind(p, "edit", path="src/a.py") == "allow"
    assert kind(p, "edit", path="docs/guide/intro.md") == "allow"  # no slash: the name at any depth
    assert kind(p, "write", path="setup.py", content="") == "allow"
    assert kind(p, "write", path="pkg/setup.py", content="") == "ask"  # ./ anchors at the root
    assert kind(p, "write", path="srcx/a.py", content="") == "ask"
    assert kind(p, "write", path="src", content="") == "ask"


def test_read_deny_rules_follow_symlinks(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("key")
    (root / "innocent.txt").symlink_to(secret)
    p = policy(root, deny=(f"read({secret.parent}/**)", "read(.env)"))
    assert kind(p, "read", path=str(secret)) == "deny"
    assert kind(p, "read", path="innocent.txt") == "deny"
    assert kind(p, "read", path="src/.env") == "deny"
    assert kind(p, "read", path="src/a.py") == "allow"


def test_writes_outside_the_workspace_ask_even_in_accept_edits(root: Path, tmp_path: Path) -> None:
    p = policy(root, "accept-edits")
    outside = p.check("write", {"path": str(tmp_path / "elsewhere.txt"), "content": ""})
    assert outside.kind == "ask" and "outside the workspace" in outside.why
    assert outside.remember == f"edit({tmp_path / 'elsewhere.txt'})"
    assert kind(p, "write", path="../sibling.txt", content="") == "ask"
    assert kind(p, "write", path="~/.bashrc", content="") == "ask"
    assert kind(policy(root, "yolo"), "write", path="../sibling.txt", content="") == "allow"
    explicit = policy(root, "accept-edits", allow=(f"edit({tmp_path}/**)",))
    assert kind(explicit, "write", path="../sibling.txt", content="") == "allow"  # a rule opens it


def test_git_and_ink_folders_ask_even_in_accept_edits(root: Path) -> None:
    p = policy(root, "accept-edits", allow=("edit(src/**)",))
    for path in (
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git/HEAD",
        ".ink/permissions.toml",
        ".ink/config.toml",
    ):
        verdict = p.check("edit", {"path": path})
        assert verdict.kind == "ask", path
        assert "inside .git/" in verdict.why or "inside .ink/" in verdict.why
    assert kind(p, "edit", path=".gitignore") == "allow"


def test_a_symlink_escaping_the_workspace_is_a_write_outside_it(root: Path, tmp_path: Path) -> None:
    target = tmp_path / "outside" / "victim.txt"
    target.parent.mkdir()
    target.write_text("precious")
    (root / "src" / "link.txt").symlink_to(target)
    (root / "linkdir").symlink_to(target.parent, target_is_directory=True)
    (root / "gitlink").symlink_to(root / ".git", target_is_directory=True)
    p = policy(root, "accept-edits", allow=("edit(src/**)",))
    verdict = p.check("write", {"path": "src/link.txt", "content": "x"})
    assert verdict.kind == "ask" and str(target) in verdict.why
    assert kind(p, "write", path="linkdir/new.txt", content="") == "ask"
    assert kind(p, "write", path="gitlink/config", content="") == "ask"  # lands in .git/
    assert bash(policy(root, "accept-edits", allow=("bash(echo *)",)), "echo x > src/link.txt") == "ask"


def test_redirections_are_file_changes(root: Path, tmp_path: Path) -> None:
    allow = ("bash(echo *)", "bash(cd *)")
    ask_mode, edits = policy(root, "ask", allow=allow), policy(root, "accept-edits", allow=allow)
    assert bash(ask_mode, "echo hi > /dev/null 2>&1") == "allow"
    assert bash(ask_mode, "echo hi > out.txt") == "ask"  # a file change, and 'ask' mode asks for those
    assert bash(edits, "echo hi > out.txt") == "allow"
    assert bash(edits, "echo hi >> .git/config") == "ask"
    verdict = edits.check("bash", {"command": f"echo hi > {tmp_path}/out.txt"})
    assert verdict.kind == "ask" and "redirects output outside the workspace" in verdict.why
    assert bash(edits, "cd /etc && echo hi > hosts") == "ask"  # the target is relative to a new directory
    assert bash(policy(root, "ask", allow=(*allow, "edit(logs/**)")), "echo hi > logs/a.log") == "allow"
    denied = policy(root, "yolo", deny=("edit(.env)",))
    assert bash(denied, "echo KEY=1 >> .env") == "deny"


def test_an_unknown_tool_asks_unless_a_rule_names_it(root: Path) -> None:
    p = policy(root, "accept-edits")
    verdict = p.check("mcp_deploy", {"target": "prod"})
    assert (verdict.kind, verdict.remember) == ("ask", "mcp_deploy")
    assert kind(policy(root, "ask", deny=("mcp_deploy",)), "mcp_deploy") == "deny"


def test_the_workspace_itself_behind_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    p = policy(alias, "accept-edits")
    assert kind(p, "write", path="src/a.py", content="") == "allow"
    assert os.path.realpath(alias) == str(real)


def test_a_path_that_cannot_be_resolved_asks_instead_of_breaking_the_run(root: Path) -> None:
    p = policy(root, "accept-edits", allow=("bash(echo *)",))
    for tool, args in (("write", {"path": "a\x00b", "content": ""}), ("bash", {"command": "echo > a\x00b"})):
        verdict = p.check(tool, args)
        assert verdict.kind == "ask" and "could not check" in verdict.why
    assert kind(policy(root, "yolo"), "write", path="a\x00b", content="") == "allow"  # the tool will fail
