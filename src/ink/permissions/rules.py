"""What a permission rule matches (docs/permissions.md is the user's description).

    bash(npm test)          exactly that simple command (or exactly that whole command line)
    bash(git log *)         ``git log`` with any arguments, or none; ``git log:*`` means the same
    bash(git status*)       any simple command starting with ``git status``
    edit(src/**)            any file under src/ of the workspace (every tool that changes files)
    edit(*.md)              a pattern without a slash matches the file name at any depth
    edit(./notes.md)        ``./`` anchors it at the workspace root
    read(~/.ssh/**)         absolute and ``~`` patterns match outside the workspace too
    bash                    a bare tool name matches every call of that tool
    bash-unsandboxed(npm publish *)   the same, for a call that asks to run outside the sandbox (R41)

A rule's word is a tool's name, or a word for a kind of tool (``KIND_WORDS``): ``read`` covers every tool
that reads or searches, ``edit`` (or ``write``) every tool that changes files, ``execute`` every tool that
runs commands. Its pattern is matched against what the call says it touches (``Tool.describe``): the
command, for a call that runs one, else its paths. A call that names neither cannot be matched against a
pattern: a deny rule with a pattern that names its tool (``mcp__db__query(drop *)``) can then not be ruled
out (``unjudged_deny``), so the call asks (refused in yolo) rather than slipping past the rule.

In command patterns ``*`` matches any text, spaces included; in path patterns ``*`` and ``?`` stay inside
one path segment and ``**`` crosses segments. A backslash makes the next character literal (``\\*``).
Relative path patterns only ever match files inside the workspace.

A call that asks to leave the sandbox (``sandbox: false``) is covered by a rule whose word ends in
``-unsandboxed`` as by the plain word, and by deny rules of either word: ``bash(rm *)`` denies ``rm``
inside and outside, ``bash-unsandboxed`` alone denies leaving at all. An allow rule covers it only with
the suffix: ``bash(npm publish)`` never lets a call out of the sandbox; ``bash-unsandboxed(npm publish)``
lets ``npm publish`` run outside it, and inside too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import msgspec

from ink.agent.tool import ToolKind
from ink.config.rules import RuleText
from ink.permissions.words import WILD

# Rule words that name a kind of tool rather than one tool. ``write`` is ``edit``'s synonym: both always
# covered every tool that changes files.
KIND_WORDS: Mapping[str, frozenset[ToolKind]] = {
    "read": frozenset({"read", "search"}),
    "search": frozenset({"search"}),
    "edit": frozenset({"edit"}),
    "write": frozenset({"edit"}),
    "execute": frozenset({"execute"}),
    "fetch": frozenset({"fetch"}),
}
MAX_TEMPLATE = 20_000  # characters of a command template checked against a pattern; longer: may match
UNSANDBOXED = "-unsandboxed"  # the rule word's suffix for calls that leave the sandbox


def covering_no_tool(rules: Iterable[RuleText], tool_names: Iterable[str]) -> list[RuleText]:
    """The rules whose word is neither a tool's name nor a kind word (``Remove(x)``, a typo): such a rule
    covers nothing, and a deny rule that covers nothing fails open without a word. An MCP tool's name
    (``mcp__server__tool``) is left alone: its server may list it only later."""
    known = {name.lower() for name in tool_names} | set(KIND_WORDS)
    return [
        rule
        for rule in rules
        if rule.tool.removesuffix(UNSANDBOXED) not in known and not rule.tool.startswith("mcp__")
    ]


class Subject(msgspec.Struct, frozen=True):
    """What a rule is checked against: the tool's name and kind. A file a command redirects into is
    checked as ``FILE_CHANGE``: covered by the rules for every tool that changes files."""

    name: str
    kind: ToolKind
    outside: bool = False  # the call asks to run outside the sandbox


FILE_CHANGE = Subject("", "edit")


def escape(text: str) -> str:
    """``text`` as a pattern that matches only itself (for the rules an "always" answer writes)."""
    return re.sub(r"([\\*?])", r"\\\1", text)


class Rule(msgspec.Struct, frozen=True):
    """One allow or deny rule, read as a command pattern and as a path pattern."""

    text: RuleText
    command: CommandPattern | None = None
    path: PathPattern | None = None

    @classmethod
    def compile(cls, text: RuleText) -> Rule:
        """A pattern is read both ways: which one applies depends on the call it meets."""
        if text.pattern is None:
            return cls(text)
        return cls(text, command=CommandPattern(text.pattern), path=PathPattern(text.pattern))

    @property
    def label(self) -> str:
        """``bash(rm *)`` (from ~/.ink/config.toml:4), for messages."""
        return f"{self.text.text} ({self.text.where})"

    def covers(self, subject: Subject) -> bool:
        word = self.text.tool
        outside = word.endswith(UNSANDBOXED)
        word = word.removesuffix(UNSANDBOXED)
        if subject.name != word and subject.kind not in KIND_WORDS.get(word, ()):
            return False
        if self.text.effect == "allow":  # only a rule meant for it lets a call out of the sandbox
            return outside or not subject.outside
        return subject.outside or not outside  # a plain deny holds outside too

    @property
    def is_bare(self) -> bool:
        return self.text.pattern is None


class CommandPattern:
    """A pattern for simple commands; ``*`` is the only wildcard."""

    def __init__(self, pattern: str) -> None:
        self.literal = _unescape(pattern) if not _has_wildcard(pattern) else None
        collapsed = re.sub(r"\s+", " ", pattern.strip())
        if collapsed.endswith(":*") and not collapsed.endswith("\\:*"):
            collapsed = collapsed[:-2].rstrip() + " *"
        self._regex = re.compile(_command_regex(collapsed), re.DOTALL)
        self._globs = _command_globs(collapsed)

    def matches(self, text: str) -> bool:
        return self._regex.fullmatch(re.sub(r"\s+", " ", text.strip())) is not None

    def may_match(self, template: str) -> bool:
        """Could ``template`` match, whatever its computed parts (``WILD``, any text) turn out to be?
        True also for a template too long to check."""
        text = re.sub(r"\s+", " ", template.strip())
        if len(text) > MAX_TEMPLATE:
            return True
        pieces = [None if char == WILD else char for char in re.sub(f"{WILD}+", WILD, text)]
        return any(_globs_meet(glob, pieces) for glob in self._globs)

    def matches_whole(self, command: str) -> bool:
        """A pattern without wildcards may name a whole command line, operators and all (this is how an
        "always" answer is remembered)."""
        return self.literal is not None and self.literal == command.strip()


class PathPattern:
    def __init__(self, pattern: str) -> None:
        text = pattern.strip()
        if text.startswith("~"):
            text = os.path.expanduser(text)
        self.absolute = text.startswith("/")
        if text.endswith("/"):
            text += "**"
        anchored = self.absolute or text.startswith("./") or "/" in text.rstrip("/")
        body = text[2:] if text.startswith("./") else text
        prefix = "" if anchored else "(?:.*/)?"
        self._regex = re.compile(prefix + _path_regex(body), re.DOTALL)

    def matches(self, path: Path, root: Path) -> bool:
        """Does ``path`` (absolute) match? Relative patterns look only inside ``root``."""
        if self.absolute:
            return self._regex.fullmatch(path.as_posix()) is not None
        if path == root or not path.is_relative_to(root):
            return False
        return self._regex.fullmatch(path.relative_to(root).as_posix()) is not None


class RuleSet:
    """Allow and deny rules. ``remember`` adds allow rules while ink runs (the "always" answers)."""

    def __init__(self, rules: Iterable[RuleText] = ()) -> None:
        compiled = [Rule.compile(r) for r in rules]
        self.deny = [r for r in compiled if r.text.effect == "deny"]
        self.allow = [r for r in compiled if r.text.effect == "allow"]

    def remember(self, rules: Iterable[RuleText]) -> None:
        self.allow += [Rule.compile(r) for r in rules if r.effect == "allow"]

    def forget(self, rule: Rule) -> None:
        """Stop applying an allow rule (``/permissions remove``); a deny rule is never forgotten here."""
        self.allow = [r for r in self.allow if r is not rule]

    # -- commands --------------------------------------------------------------------------------

    def command_denied(self, subject: Subject, texts: Iterable[str], whole: str) -> Rule | None:
        texts = list(texts)

        def match(rule: Rule) -> bool:
            pattern = rule.command
            return pattern is not None and (pattern.matches_whole(whole) or any(map(pattern.matches, texts)))

        return self._first(self.deny, subject, match)

    def command_may_be_denied(
        self, subject: Subject, templates: Iterable[str], unprovable: bool
    ) -> Rule | None:
        """The first deny rule for commands that ``templates`` may match, or (``unprovable``: some command
        could not be read at all) the first deny rule for commands there is."""
        templates = list(templates)

        def match(rule: Rule) -> bool:
            pattern = rule.command
            return pattern is not None and (unprovable or any(map(pattern.may_match, templates)))

        return self._first([r for r in self.deny if not r.is_bare], subject, match)

    def command_allowed(self, subject: Subject, text: str) -> Rule | None:
        return self._first(self.allow, subject, lambda r: r.command is not None and r.command.matches(text))

    def whole_command_allowed(self, subject: Subject, command: str) -> Rule | None:
        return self._first(
            self.allow, subject, lambda r: r.command is not None and r.command.matches_whole(command)
        )

    # -- paths -----------------------------------------------------------------------------------

    def path_denied(self, subject: Subject, paths: Iterable[Path], root: Path) -> Rule | None:
        paths = list(paths)
        return self._first(
            self.deny, subject, lambda r: r.path is not None and any(r.path.matches(p, root) for p in paths)
        )

    def path_allowed(self, subject: Subject, path: Path, root: Path) -> Rule | None:
        return self._first(self.allow, subject, lambda r: r.path is not None and r.path.matches(path, root))

    # -- any tool --------------------------------------------------------------------------------

    def unjudged_deny(self, subject: Subject) -> Rule | None:
        """The first deny rule with a pattern that names ``subject``'s tool itself, for a call that names
        neither a command nor paths to match the pattern against. Kind words (``read(secret/*)``) are
        left out: they speak of paths and commands, and every such tool would otherwise always ask."""
        return next((r for r in self.deny if not r.is_bare and r.text.tool == subject.name), None)

    def tool_denied(self, subject: Subject) -> Rule | None:
        return self._first(self.deny, subject, lambda _rule: False)

    def tool_allowed(self, subject: Subject) -> Rule | None:
        return self._first(self.allow, subject, lambda _rule: False)

    @staticmethod
    def _first(rules: list[Rule], subject: Subject, match: Callable[[Rule], bool]) -> Rule | None:
        """The first rule covering ``subject`` that is bare (every call) or whose pattern ``match``es."""
        return next((r for r in rules if r.covers(subject) and (r.is_bare or match(r))), None)


def _has_wildcard(pattern: str) -> bool:
    return re.search(r"(?<!\\)(?:\\\\)*\*", pattern) is not None


def _unescape(pattern: str) -> str:
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)


def _tokens(pattern: str) -> list[tuple[str, bool]]:
    """(text, is_wildcard) pieces: ``\\x`` is a literal x."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append((pattern[i + 1], False))
            i += 2
            continue
        if char == "*" and pattern[i : i + 2] == "**":
            out.append(("**", True))
            i += 2
            continue
        out.append((char, char in "*?"))
        i += 1
    return out


def _command_regex(pattern: str) -> str:
    optional_tail = pattern.endswith(" *") and not pattern.endswith("\\ *")
    body = pattern[:-2] if optional_tail else pattern
    regex = "".join(
        ".*" if wild and text.startswith("*") else re.escape(text) for text, wild in _tokens(body)
    )
    return regex + ("(?: .*)?" if optional_tail else "")


def _path_regex(pattern: str) -> str:
    parts: list[str] = []
    tokens = _tokens(pattern)
    for index, (text, wild) in enumerate(tokens):
        following = tokens[index + 1][0] if index + 1 < len(tokens) else None
        if not wild:
            parts.append(re.escape(text))
        elif text == "**" and following == "/":
            parts.append("(?:.*/)?")
            tokens[index + 1] = ("", False)
        elif text == "**":
            parts.append(".*")
        elif text == "*":
            parts.append("[^/]*")
        else:
            parts.append("[^/]")
    return "".join(parts)


def _command_globs(pattern: str) -> list[list[str | None]]:
    """The pattern as globs of characters and ``None`` (any text): two when the tail is optional."""
    optional_tail = pattern.endswith(" *") and not pattern.endswith("\\ *")
    body = pattern[:-2] if optional_tail else pattern
    glob: list[str | None] = [None if wild and text.startswith("*") else text for text, wild in _tokens(body)]
    glob = [piece for text in glob for piece in ([None] if text is None else list(text))]
    return [glob, [*glob, " ", None]] if optional_tail else [glob]


def _globs_meet(first: list[str | None], second: list[str | None]) -> bool:
    """Is there a text both globs match? (``None`` matches any text.) A search over pairs of positions."""
    seen = {(0, 0)}
    todo = [(0, 0)]
    goal = (len(first), len(second))
    while todo:
        i, j = todo.pop()
        if (i, j) == goal or _rest_is_any(first, i) or _rest_is_any(second, j):
            return True  # a final wildcard matches whatever the other glob still needs
        a = first[i] if i < len(first) else ""
        b = second[j] if j < len(second) else ""
        steps = []
        if a is None:  # first's wildcard: matches nothing more, or swallows what second has next
            steps += [(i + 1, j)] + ([(i, j + 1)] if j < len(second) else [])
        if b is None:
            steps += [(i, j + 1)] + ([(i + 1, j)] if i < len(first) else [])
        if a and b and a == b:
            steps.append((i + 1, j + 1))
        for step in steps:
            if step not in seen:
                seen.add(step)
                todo.append(step)
    return False


def _rest_is_any(glob: list[str | None], position: int) -> bool:
    return position == len(glob) - 1 and glob[position] is None
