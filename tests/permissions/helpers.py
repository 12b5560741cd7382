"""Building policies from rule texts, the way config files and flags give them."""

from __future__ import annotations

from pathlib import Path

from ink.config.keys import PermissionMode
from ink.config.rules import parse_rule
from ink.permissions import PermissionPolicy, RuleSet


def policy(
    root: Path, mode: PermissionMode = "ask", allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()
) -> PermissionPolicy:
    rules = [parse_rule("allow", text, "test") for text in allow]
    rules += [parse_rule("deny", text, "test") for text in deny]
    return PermissionPolicy(mode, RuleSet(rules), root)


def kind(p: PermissionPolicy, tool: str, **args: object) -> str:
    return p.check(tool, args).kind


def bash(p: PermissionPolicy, command: str) -> str:
    return kind(p, "bash", command=command)
