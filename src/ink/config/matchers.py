"""A hook's ``matcher``: which tool names it applies to, in the syntax Claude Code's matchers use (a
name, ``Edit|Write``, a regular expression such as ``mcp__github__.*``, ``*`` or ``""`` for every tool),
matched whole and case-insensitively.

A matcher comes from a config file, a project's included, so matching one must not be able to hold ink
(R39): Python's backtracking ``re`` takes exponential time on a pattern like ``(.|[a-z_])*Z``, and the
event loop with it. Regular expressions are matched with RE2 (google-re2), whose time is linear in the
name whatever the pattern; the syntax RE2 lacks (backreferences, lookaround) is a config error. A plain
name or list of names (the usual matcher) is matched as a set of names without loading RE2.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

# Plain names: letters, digits, _ and -, separated by |; anything else is a regular expression.
_NAMES = re.compile(r"[\w-]+(?:\|[\w-]+)*", re.ASCII)
EVERY_TOOL = ("", "*")


class MatcherError(ValueError):
    """A matcher that is not a pattern RE2 can match; the text says why."""


def check_matcher(matcher: str) -> None:
    """Raises ``MatcherError`` for a matcher that cannot be used (compiles it: never matches anything)."""
    _compiled(matcher)


def matches(matcher: str | None, name: str) -> bool:
    """Whether the tool ``name`` is one ``matcher`` applies to (None, ``""`` and ``*``: every tool). A
    matcher that cannot be compiled matches nothing (config checks refuse it before it gets here)."""
    if matcher is None or matcher in EVERY_TOOL:
        return True
    try:
        found = _compiled(matcher)
    except MatcherError:
        return False
    if isinstance(found, frozenset):
        return name.casefold() in found
    return found.fullmatch(name) is not None


@cache
def _compiled(matcher: str) -> frozenset[str] | Any:
    if matcher in EVERY_TOOL or _NAMES.fullmatch(matcher):
        return frozenset(part.casefold() for part in matcher.split("|"))
    import re2  # here: most matchers are plain names, and ink's start-up does not need it

    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # RE2 would print its error on stderr, through the terminal UI
    try:
        return re2.compile(f"(?:{matcher})", options)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise MatcherError(f"{why} (matchers use RE2's syntax: no backreferences or lookaround)") from None
