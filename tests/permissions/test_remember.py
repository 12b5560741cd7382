"""The rule an "always" answer stores (R38): a readable prefix where one is meant, the exact command
where a prefix would allow much more than what was shown; and always a rule that allows the command
that was answered, as the real policy judges it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink.config.rules import parse_rule
from ink.permissions import PermissionPolicy, RuleSet
from ink.permissions.remember import command_rule
from ink.permissions.shell import analyse
from tests.permissions.helpers import builtin_tools


def stored(command: str) -> str:
    return command_rule("bash", command, analyse(command))


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("npm test", "bash(npm test *)"),
        ("npm test -- --watch", "bash(npm test *)"),
        ("npm run test:unit --silent", "bash(npm run test:unit *)"),
        ("git commit -m 'wip: x'", "bash(git commit *)"),
        ("git stash list", "bash(git stash list *)"),
        ("docker compose up -d", "bash(docker compose up *)"),
        ("uv run pytest -q tests", "bash(uv run pytest *)"),
        ("cargo test --release", "bash(cargo test *)"),
        ("go test ./...", "bash(go test *)"),
        ("make test", "bash(make test *)"),
        ("ls -la src", "bash(ls *)"),
        ("pytest tests/test_x.py -k name", "bash(pytest *)"),
    ],
)
def test_a_readable_prefix_where_one_is_meant(command: str, rule: str) -> None:
    assert stored(command) == rule


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",  # deletes
        "git push origin main",  # publishes
        "git reset --hard HEAD~1",  # discards work
        "python tools/gen.py",  # runs code of any kind
        "uv run python x.py",
        "npm exec -- something",
        "docker compose run web bash",  # runs a program past the prefix
        "sudo make install",  # a wrapper
        "bash -c 'ls'",
        "./scripts/build.sh",  # a script by path
        "curl -fsSL https://example.invalid/x",  # the network
        "make",  # no subcommand to keep
        "git -C sub status",  # options before the subcommand
        "cd src && npm test",  # more than one command
        "echo hi > out.txt",  # a redirection
        "FOO=1 npm test",  # an assignment
        "ls $(pwd)",  # a substitution
    ],
)
def test_the_exact_command_where_a_prefix_would_allow_more(command: str) -> None:
    assert stored(command) == f"bash({command})"


WORD = st.text(alphabet="abcdegiklmnoprstuvx-:._/=*'\" ", min_size=1, max_size=8)
NAMES = st.sampled_from(
    ["npm", "git", "ls", "pytest", "rm", "python", "make", "docker", "uv", "cargo", "weird"]
)


@settings(max_examples=200, deadline=None)
@given(name=NAMES, words=st.lists(WORD, max_size=5))
def test_the_stored_rule_allows_the_command_it_answered_and_only_that_program(
    tmp_path_factory: pytest.TempPathFactory, name: str, words: list[str]
) -> None:
    root = tmp_path_factory.getbasetemp() / "remember"
    root.mkdir(exist_ok=True)
    command = " ".join([name, *words])
    tools = builtin_tools(root)
    asked = PermissionPolicy("ask", RuleSet(), root, tools).check("bash", {"command": command})
    if asked.kind != "ask" or asked.remember is None:
        return  # nothing an "always" answer could store
    rule = parse_rule("allow", asked.remember, "an 'always' answer")
    policy = PermissionPolicy("ask", RuleSet([rule]), root, tools)
    assert policy.check("bash", {"command": command}).kind == "allow", asked.remember
    other = f"other{name} {' '.join(words)}"
    assert policy.check("bash", {"command": other}).kind != "allow"
