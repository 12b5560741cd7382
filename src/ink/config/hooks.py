"""The ``[[hooks.EVENT]]`` tables of a config file (docs/hooks.md):

    [[hooks.pre_tool]]
    command = "~/.config/ink/hooks/no-push-to-main.sh"
    matcher = "bash"          # a tool name, names a|b, or a regular expression (RE2: ink.config.matchers)
    timeout = 10              # seconds, default 60

Events: ``pre_tool``, ``post_tool``, ``user_prompt``, ``stop``, ``session_start``. ``matcher`` means
something only for the tool events. Every entry is checked here, so a typo is a ``ConfigError`` naming
``path:line``, never a hook that silently does not run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, TypeAlias

import msgspec

from ink.config.errors import ConfigError
from ink.config.matchers import MatcherError, check_matcher, matches

HookEvent: TypeAlias = Literal["pre_tool", "post_tool", "user_prompt", "stop", "session_start"]
HOOK_EVENTS: tuple[HookEvent, ...] = ("pre_tool", "post_tool", "user_prompt", "stop", "session_start")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
FIX = "fix the file or remove it"


class HookSpec(msgspec.Struct, frozen=True):
    """One configured hook. ``scope``: ``user`` ($INK_HOME/config.toml) or ``project`` (.ink/config.toml,
    which runs only once the user approved it); ``where``: ``path:line`` for messages."""

    event: HookEvent
    command: str
    where: str
    matcher: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    scope: str = "user"

    def matches(self, tool_name: str | None) -> bool:
        """Whether this hook applies to ``tool_name`` (None: an event of no tool). Linear time whatever the
        matcher (``ink.config.matchers``); still, a project's matcher is evaluated only once the user
        approved its hooks (``ink.extend.hooks``)."""
        return tool_name is None or matches(self.matcher, tool_name)

    @property
    def label(self) -> str:
        return f"{self.event} hook `{self.command}` ({self.where})"


def parse_hooks(path: Path, text: str, value: Any) -> list[HookSpec]:
    """Check the ``hooks`` table of the file ``path``. Raises ``ConfigError`` (one line)."""
    if not isinstance(value, dict):
        raise _error(path, _line(text, "hooks", 0), "hooks must be tables like [[hooks.pre_tool]]")
    hooks: list[HookSpec] = []
    for event, entries in value.items():
        if event not in HOOK_EVENTS:
            known = ", ".join(HOOK_EVENTS)
            raise _error(path, _line(text, event, 0), f"unknown hook event {event!r} (known: {known})")
        if not isinstance(entries, list):
            raise _error(path, _line(text, event, 0), f"write each hook as a [[hooks.{event}]] table")
        for index, entry in enumerate(entries):
            hooks.append(_hook(path, event, entry, f"{path}:{_line(text, event, index)}"))
    return hooks


def _hook(path: Path, event: HookEvent, entry: Any, where: str) -> HookSpec:
    def bad(problem: str) -> ConfigError:
        return ConfigError(f"config error: {where}: {problem} — {FIX}")

    if not isinstance(entry, dict):
        raise bad('a hook is a table with command = "..."')
    unknown = sorted(set(entry) - {"command", "matcher", "timeout"})
    if unknown:
        raise bad(f"unknown key {unknown[0]!r} in a hook (known: command, matcher, timeout)")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise bad('a hook needs command = "a shell command"')
    matcher = entry.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        raise bad("matcher must be a string (a tool-name pattern)")
    try:
        check_matcher(matcher or "")
    except MatcherError as exc:
        raise bad(f"matcher {matcher!r} is not a valid pattern ({exc})") from None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT:
        raise bad(f"timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
    return HookSpec(event, command, where, matcher, float(timeout))


def _line(text: str, event: str, index: int) -> int:
    """The line of the ``index``-th ``[[hooks.EVENT]]`` header; line 1 for other layouts."""
    pattern = re.compile(rf"^\s*\[\[\s*hooks\s*\.\s*[\"']?{re.escape(event)}[\"']?\s*\]\]", re.MULTILINE)
    found = list(pattern.finditer(text))
    if index < len(found):
        return text.count("\n", 0, found[index].start()) + 1
    return 1


def _error(path: Path, line: int, problem: str) -> ConfigError:
    return ConfigError(f"config error: {path}:{line}: {problem} — {FIX}")
