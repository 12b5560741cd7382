"""Permission rules as written in config files and flags: ``tool`` or ``tool(pattern)``.

Only the form is checked here, so a bad rule is reported with its ``path:line`` like any other config
error; what a pattern matches is decided by ``ink.permissions`` (docs/permissions.md).

    [permissions]
    allow = ["bash(git status)", "bash(npm run test *)", "edit(src/**)"]
    deny  = ["bash(git push *)", "read(~/.ssh/**)"]
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple, TypeAlias

from ink.config.errors import ConfigError

Effect: TypeAlias = Literal["allow", "deny"]

# Tools whose rules may carry a pattern: bash matches commands, the others match paths.
PATTERN_TOOLS = ("bash", "edit", "write", "read", "grep", "glob", "ls")
_RULE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\((.*)\))?", re.DOTALL)


class RuleText(NamedTuple):
    """One rule as the user wrote it. ``where``: ``path:line``, ``--allow``, ``--deny``."""

    effect: Effect
    tool: str  # lower case
    pattern: str | None  # None: every call of the tool
    where: str

    @property
    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


def parse_rule(effect: Effect, text: object, where: str) -> RuleText:
    """Check the form of one rule. Raises ``ConfigError`` naming ``where`` and the accepted forms."""
    if not isinstance(text, str):
        example = '"bash(npm test)"'
        raise ConfigError(f"{where}: a permission rule must be a string like {example} (got {text!r})")
    found = _RULE.fullmatch(text.strip())
    if found is None:
        raise ConfigError(
            f"{where}: permission rule {text!r} is not of the form tool or tool(pattern), "
            'for example "bash(git status)" or "edit(src/**)"'
        )
    tool, pattern = found.group(1).lower(), found.group(2)
    if pattern is not None:
        if not pattern.strip():
            raise ConfigError(f"{where}: permission rule {text!r} has an empty pattern; write {tool!r} alone")
        if tool not in PATTERN_TOOLS:
            raise ConfigError(
                f"{where}: permission rule {text!r}: patterns are understood for "
                f"{', '.join(PATTERN_TOOLS)}; for another tool write its bare name ({tool!r})"
            )
        pattern = pattern.strip()
    return RuleText(effect, tool, pattern, where)
