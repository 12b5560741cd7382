"""Deciding, before a tool call runs, whether it may run, must not run, or needs the user's answer.

The decision is a pure function of the permission mode, the rules and the workspace; nothing is asked
or executed here (``hook`` does the asking). The order, for every tool:

1. A deny rule that matches wins, in every mode: the call is refused without a question.
2. ``yolo``: everything else runs.
3. An allow rule that matches lets it run.
4. The mode decides: reads always run; file changes run in ``accept-edits`` unless they land outside the
   workspace or in ``.git/`` or ``.ink/``; bash commands and unknown tools ask.

A bash command is allowed by rules only when every one of its simple commands is, and nothing in it is
beyond checking (substitutions, subshells, redirections out of the workspace: see ``shell``). A command
that cannot be proven not to match a deny rule (a computed command name, nesting too deep: ``shell``)
counts as matching it in ``yolo`` and asks in the other modes (docs/permissions.md, "Deny rules").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ink.config.keys import PermissionMode
from ink.permissions.rules import RuleSet, escape
from ink.permissions.shell import DIRECTORY_CHANGERS, analyse
from ink.tools.access import describe_access
from ink.tools.workspace import real_target, resolve_path

PROTECTED_DIRS = (".git", ".ink")  # history and ink's own settings: changing them asks in every mode
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
MAX_SHOWN = 200  # characters of a command quoted in a message


@dataclass(frozen=True, slots=True)
class Verdict:
    """``why``: for ``deny`` the rule, for ``ask`` what needs the user. ``what``: the call in words
    ("the bash command `make`"). ``remember``: the rule an "always" answer adds. ``mode``: the least
    permissive mode that would have allowed it, when a mode would (for print mode's advice)."""

    kind: Literal["allow", "deny", "ask"]
    what: str = ""
    why: str = ""
    remember: str | None = None
    mode: PermissionMode | None = None


ALLOW = Verdict("allow")


class PermissionPolicy:
    def __init__(self, mode: PermissionMode, rules: RuleSet, root: str | os.PathLike[str]) -> None:
        self.mode = mode
        self.rules = rules
        self.root = Path(os.path.realpath(root))

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        """The verdict on calling ``tool`` with ``args`` (already validated against its schema). Never
        raises: a path the system cannot even resolve (a NUL byte in it) makes the call ask (but yolo)."""
        try:
            return self._check(tool, args)
        except (ValueError, OSError) as exc:
            if self.mode == "yolo":
                return ALLOW  # the system cannot use such a path either: the tool reports it
            why = f"ink could not check it ({type(exc).__name__}: {exc})"
            return Verdict("ask", f"the {tool} call", why, None, mode="yolo")

    def _check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        access = describe_access(tool, args, self.root)
        if access.kind == "read":
            return self._read(tool, access.paths)
        if access.kind == "write":
            given = args.get("path")
            return self._write(tool, given if isinstance(given, str) else "")
        if access.kind == "execute":
            return self._bash(access.command or "")
        if access.kind == "delegate":  # the sub-agent's own calls are each checked; only a deny rule stops it
            denied = self.rules.tool_denied(tool)
            return Verdict("deny", f"the {tool} call", denied.label) if denied is not None else ALLOW
        return self._other(tool)

    # -- the kinds of access -----------------------------------------------------------------------

    def _read(self, tool: str, paths: tuple[Path, ...]) -> Verdict:
        candidates = [*paths, *(Path(os.path.realpath(p)) for p in paths)]
        denied = self.rules.path_denied(tool, candidates, self.root)
        if denied is not None:
            shown = self._show(paths[0]) if paths else "this path"
            return Verdict("deny", f"the {tool} of {shown}", denied.label)
        return ALLOW

    def _write(self, tool: str, given: str) -> Verdict:
        target = real_target(self.root, given)
        what = f"the {tool} of {self._show(target)}"
        denied = self.rules.path_denied(tool, [target, resolve_path(self.root, given)], self.root)
        if denied is not None:
            return Verdict("deny", what, denied.label)
        if self.mode == "yolo" or self.rules.path_allowed(tool, target, self.root) is not None:
            return ALLOW
        remember = f"edit({escape(self._rule_path(target))})"
        protected = self._protected(target)
        if protected is not None:
            return Verdict("ask", what, f"it writes {protected}", remember, mode="yolo")
        if self.mode == "accept-edits":
            return ALLOW
        return Verdict("ask", what, "file changes need permission in 'ask' mode", remember, "accept-edits")

    def _bash(self, command: str) -> Verdict:
        shape = analyse(command)
        what = f"the bash command `{_shorten(command.strip())}`"
        targets = [t for t in (self._redirect_target(w) for w in shape.writes) if t is not None]
        denied = self.rules.command_denied(shape.deny_texts(), command) or self.rules.path_denied(
            "edit", targets, self.root
        )
        if denied is not None:
            return Verdict("deny", what, denied.label)
        doubtful = self.rules.command_may_be_denied(shape.possible_texts(), bool(shape.unprovable))
        if doubtful is not None:  # not proven harmless: refused in yolo, asked (never allowed) otherwise
            doubt = f"{doubtful.label}, which ink cannot rule out: {shape.doubt()}"
            return (
                Verdict("deny", what, doubt)
                if self.mode == "yolo"
                else Verdict("ask", what, f"the rule {doubt}")
            )
        if self.mode == "yolo" or self.rules.whole_command_allowed(command) is not None:
            return ALLOW
        remember = f"bash({escape(command.strip())})"
        why = self._bash_doubt(shape.unsure, targets, [c.words[0] for c in shape.commands if c.words])
        if why is None:
            missing = [c.text for c in shape.commands if self.rules.command_allowed(c.text) is None]
            if not missing:
                return ALLOW
            why = f"no allow rule covers `{_shorten(missing[0])}`"
        return Verdict("ask", what, why, remember, mode="yolo")

    def _bash_doubt(self, unsure: list[str], targets: list[Path], names: list[str]) -> str | None:
        """Why the command cannot be allowed by rules for its commands alone, or None."""
        if unsure:
            return unsure[0]
        if targets and DIRECTORY_CHANGERS.intersection(os.path.basename(n) for n in names):
            return "it changes directory before redirecting output to a file"
        for target in targets:
            if self.rules.path_allowed("edit", target, self.root) is not None:
                continue
            protected = self._protected(target)
            if protected is not None:
                return f"it redirects output {protected}"
            if self.mode == "ask":
                return f"it redirects output into {self._show(target)}, and file changes need permission"
        return None

    def _other(self, tool: str) -> Verdict:
        what = f"the {tool} call"
        denied = self.rules.tool_denied(tool)
        if denied is not None:
            return Verdict("deny", what, denied.label)
        if self.mode == "yolo" or self.rules.tool_allowed(tool) is not None:
            return ALLOW
        return Verdict("ask", what, f"ink has no permission rules for the tool {tool!r}", tool, mode="yolo")

    # -- paths -------------------------------------------------------------------------------------

    def _protected(self, path: Path) -> str | None:
        """Where ``path`` is, when a write there asks in every mode but yolo: "outside the workspace (..)"."""
        if not path.is_relative_to(self.root):
            return f"outside the workspace ({path})"
        parts = path.relative_to(self.root).parts
        for name in PROTECTED_DIRS:
            if name in parts:
                return f"inside {name}/"
        return None

    def _redirect_target(self, word: str) -> Path | None:
        if word in HARMLESS_TARGETS or word.startswith("/dev/fd/"):
            return None
        return real_target(self.root, word)

    def _show(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)

    def _rule_path(self, path: Path) -> str:
        """A path pattern naming exactly ``path``: ``./name`` or ``dir/name`` inside, absolute outside."""
        if not path.is_relative_to(self.root):
            return str(path)
        relative = path.relative_to(self.root).as_posix()
        return relative if "/" in relative else f"./{relative}"


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
