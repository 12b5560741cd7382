"""Permission rules as written in config files and flags: ``tool`` or ``tool(pattern)``.

Only the form is checked here, so a bad rule is reported with its ``path:line`` like any other config
error; which tools a rule covers (a tool's name, or a word for a kind of tool such as ``read`` or
``edit``) and what a pattern matches (the command a call runs, or the paths it touches) is decided by
``ink.permissions`` against each call's own description (docs/permissions.md).

    [permissions]
    allow = ["bash(git status)", "bash(npm run test *)", "edit(src/**)"]
    deny  = ["bash(git push *)", "read(~/.ssh/**)"]
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple, TypeAlias

from ink.config.errors import ConfigError

Effect: TypeAlias = Literal["allow", "deny"]

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
        pattern = pattern.strip()
    return RuleText(effect, tool, pattern, where)
