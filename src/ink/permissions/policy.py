"""Deciding, before a tool call runs, whether it may run, must not run, or needs the user's answer.

The decision is a pure function of the permission mode, the rules, the workspace and what the tool says
of itself: its ``kind`` and, for the call, ``describe(args)`` (the paths it touches, the command it runs).
No tool is known here by name. Nothing is asked or executed here (``hook`` does the asking).

``assess`` says what each layer of the precedence finds (``precedence.Assessment``): a deny rule that
matches (in every mode), one that cannot be ruled out, allow rules that cover the call, and what the kind
and the mode say: reads and searches always run; file changes (``edit``) run in ``accept-edits`` unless
they land outside the workspace or in ``.git/`` or ``.ink/``; a sub-agent (``delegate``) runs, its own
calls each judged; commands (``execute``), fetches and other tools ask; ``yolo`` runs everything.
``check`` is ``precedence.decide`` of that with no hook: the one place the layers are combined.

A command is allowed by rules only when every one of its simple commands is, and nothing in it is
beyond checking (substitutions, subshells, redirections out of the workspace: see ``shell``). A command
that cannot be proven not to match a deny rule (a computed command name, nesting too deep, a shell
reading code from its input: ``shell``) counts as matching it in ``yolo`` and asks in the other modes
(docs/permissions.md, "Deny rules").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from ink.agent.tool import CallDescription, Tool, kind_of
from ink.config.keys import PermissionMode
from ink.permissions.precedence import ALLOW, Assessment, Verdict, decide
from ink.permissions.remember import command_rule
from ink.permissions.rules import FILE_CHANGE, UNSANDBOXED, RuleSet, Subject, escape
from ink.permissions.shell import DIRECTORY_CHANGERS, analyse

__all__ = ["ALLOW", "PermissionPolicy", "Verdict"]

PROTECTED_DIRS = (".git", ".ink")  # history and ink's own settings: changing them asks in every mode
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
MAX_SHOWN = 200  # characters of a command quoted in a message


def _unknown(_name: str) -> Tool | None:
    return None


class PermissionPolicy:
    """``tools`` finds a tool by the name the model calls it (None: no such tool, judged as ``other``)
    for ``check``; the permission step gives ``judge`` the tool of the call's own run."""

    def __init__(
        self,
        mode: PermissionMode,
        rules: RuleSet,
        root: str | os.PathLike[str],
        tools: Callable[[str], Tool | None] = _unknown,
    ) -> None:
        self.mode = mode
        self.rules = rules
        self.root = Path(os.path.realpath(root))
        self.tools = tools

    def check(self, name: str, args: Mapping[str, Any]) -> Verdict:
        """The verdict on calling the tool named ``name`` (found with ``tools``) with ``args`` when no
        hook has a say (``decide`` alone)."""
        return decide(self.assess(self.tools(name), name, args))

    def assess(self, tool: Tool | None, name: str, args: Mapping[str, Any]) -> Assessment:
        """What each layer finds for calling ``tool`` (None: unknown), named ``name``, with ``args``
        (already validated against its schema). Never raises: a path the system cannot even resolve (a
        NUL byte in it) makes the call ask (but in yolo: the system cannot use such a path either, and
        the tool reports it)."""
        try:
            return self._assess(tool, name, args)
        except (ValueError, OSError) as exc:
            why = f"ink could not check it ({type(exc).__name__}: {exc})"
            return self._found(f"the {name} call", why=why, least_mode="yolo")

    def _assess(self, tool: Tool | None, name: str, args: Mapping[str, Any]) -> Assessment:
        # describe() itself, not describe_call: a path it cannot resolve must reach assess()'s handler
        call = tool.describe(args) if tool is not None else CallDescription(name)
        subject = Subject(name, kind_of(tool))
        match subject.kind:
            case "read" | "search":
                return self._read(subject, call.paths)
            case "edit":
                return self._write(subject, call.paths)
            case "execute" if call.command is not None and call.leaves_sandbox is not None:
                return self._unsandboxed(replace(subject, outside=True), call.command, call.leaves_sandbox)
            case "execute" if call.command is not None:
                return self._command(subject, call.command)
            case "delegate":  # the sub-agent's own calls are each checked; only a deny rule stops it
                denied = self.rules.tool_denied(subject)
                what = f"the {name} call"
                return self._found(what, denied.label if denied is not None else None, mode_allows=True)
        return self._other(subject)

    def _found(self, what: str, denied_by: str | None = None, **layers: Any) -> Assessment:
        """An assessment in this policy's mode; yolo's own layer runs whatever the others leave to it."""
        if self.mode == "yolo":
            layers["mode_allows"] = True
        return Assessment(what, self.mode, denied_by, **layers)

    # -- the kinds of tools ------------------------------------------------------------------------

    def _read(self, subject: Subject, paths: tuple[Path, ...]) -> Assessment:
        shown = self._show(paths[0]) if paths else "this path"
        what = f"the {subject.name} of {shown}" if paths else f"the {subject.name} call"
        if not paths and (doubt := self._unjudged(subject)) is not None:
            return self._found(what, doubted_by=doubt)
        candidates = [*paths, *(Path(os.path.realpath(p)) for p in paths)]
        denied = self.rules.path_denied(subject, candidates, self.root)
        return self._found(what, denied.label if denied is not None else None, mode_allows=True)

    def _write(self, subject: Subject, paths: tuple[Path, ...]) -> Assessment:
        """Deny rules see ``paths`` as named and as the files that really change (symlinks followed);
        allow rules and the mode judge the files that really change, each of them."""
        if not paths:  # it changes files without saying which: only a bare rule or yolo lets it run
            return self._other(subject, "it changes files and ink cannot tell which")
        targets = list(dict.fromkeys(Path(os.path.realpath(p)) for p in paths))
        what = f"the {subject.name} of {self._show(targets[0])}"
        denied = self.rules.path_denied(subject, [*paths, *targets], self.root)
        if denied is not None:
            return self._found(what, denied.label)
        pending = [t for t in targets if self.rules.path_allowed(subject, t, self.root) is None]
        if not pending:
            return self._found(what, rule_allows=True)
        remember = f"edit({escape(self._rule_path(pending[0]))})"
        protected = next((where for where in map(self._protected, pending) if where is not None), None)
        if protected is not None:
            return self._found(what, why=f"it writes {protected}", remember=remember, least_mode="yolo")
        return self._found(
            what,
            mode_allows=self.mode == "accept-edits",
            why="file changes need permission in 'ask' mode",
            remember=remember,
            least_mode="accept-edits",
        )

    def _command(self, subject: Subject, command: str) -> Assessment:
        shape = analyse(command)
        what = f"the {subject.name} command `{_shorten(command.strip())}`"
        targets = [t for t in (self._redirect_target(w) for w in shape.writes) if t is not None]
        denied = self.rules.command_denied(subject, shape.deny_texts(), command) or self.rules.path_denied(
            FILE_CHANGE, targets, self.root
        )
        if denied is not None:
            return self._found(what, denied.label)
        doubtful = self.rules.command_may_be_denied(subject, shape.possible_texts(), bool(shape.unprovable))
        if doubtful is not None:  # not proven harmless: refused in yolo, asked (never allowed) otherwise
            doubt = f"{doubtful.label}, which ink cannot rule out: {shape.doubt()}"
            return self._found(what, doubted_by=doubt)
        remember = command_rule(subject.name, command, shape)
        if shape.unprovable:  # it could run anything: no allow rule vouches for that, only the user
            return self._found(what, why=shape.doubt(), least_mode="yolo")
        if self.rules.whole_command_allowed(subject, command) is not None:
            return self._found(what, rule_allows=True)
        names = [c.words[0] for c in shape.commands if c.words]
        why = self._command_doubt(shape.unsure, targets, names)
        if why is None:
            missing = [c.text for c in shape.commands if self.rules.command_allowed(subject, c.text) is None]
            if not missing:
                return self._found(what, rule_allows=True)
            why = f"no allow rule covers `{_shorten(missing[0])}`"
        return self._found(what, why=why, remember=remember, least_mode="yolo")

    def _unsandboxed(self, subject: Subject, command: str, reason: str) -> Assessment:
        """A command that asks to run outside the sandbox: judged as any command, but only an allow rule
        meant for leaving the sandbox (``bash-unsandboxed(...)``) or the user's answer lets it run, and an
        "always" answer stores exactly that command (R41, docs/permissions.md)."""
        found = self._command(subject, command)
        if found.denied_by is not None or found.doubted_by is not None:
            return found
        given = reason.strip() or "it gives no reason"
        why = f"it asks to run OUTSIDE the sandbox: {_shorten(given)}"
        exact = f"{subject.name}{UNSANDBOXED}({escape(command.strip())})"
        return replace(
            found,
            what=f"{found.what} outside the sandbox",
            mode_allows=False,
            why=why,
            remember=exact if found.remember is not None else None,  # None: no rule could allow it
            least_mode=None,
            leaves_sandbox=True,
        )

    def _command_doubt(self, unsure: list[str], targets: list[Path], names: list[str]) -> str | None:
        """Why the command cannot be allowed by rules for its commands alone, or None."""
        if unsure:
            return unsure[0]
        if targets and DIRECTORY_CHANGERS.intersection(os.path.basename(n) for n in names):
            return "it changes directory before redirecting output to a file"
        for target in targets:
            if self.rules.path_allowed(FILE_CHANGE, target, self.root) is not None:
                continue
            protected = self._protected(target)
            if protected is not None:
                return f"it redirects output {protected}"
            if self.mode == "ask":
                return f"it redirects output into {self._show(target)}, and file changes need permission"
        return None

    def _other(self, subject: Subject, why: str = "") -> Assessment:
        """A call judged by bare rules alone: denied or allowed by one, else it asks (but in yolo)."""
        tool = subject.name
        what = f"the {tool} call"
        denied = self.rules.tool_denied(subject)
        if denied is not None:
            return self._found(what, denied.label)
        doubt = self._unjudged(subject)
        if doubt is not None:
            return self._found(what, doubted_by=doubt)
        why = why or f"ink has no permission rules for the tool {tool!r}"
        allowed = self.rules.tool_allowed(subject) is not None
        return self._found(what, rule_allows=allowed, why=why, remember=tool, least_mode="yolo")

    def _unjudged(self, subject: Subject) -> str | None:
        """A deny rule with a pattern for this tool, and a call that names nothing to match it against:
        not proven harmless, so refused in yolo and asked (never allowed by a rule) otherwise."""
        rule = self.rules.unjudged_deny(subject)
        if rule is None:
            return None
        return f"{rule.label}, which ink cannot rule out: the call names no command or path to match"

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
        return _real_target(self.root, word)

    def _show(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)

    def _rule_path(self, path: Path) -> str:
        """A path pattern naming exactly ``path``: ``./name`` or ``dir/name`` inside, absolute outside."""
        if not path.is_relative_to(self.root):
            return str(path)
        relative = path.relative_to(self.root).as_posix()
        return relative if "/" in relative else f"./{relative}"


def _real_target(root: Path, given: str) -> Path:
    """The file a redirection to ``given`` writes: relative to ``root``, symlinks followed."""
    return Path(os.path.realpath(root / os.path.expanduser(given)))


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
