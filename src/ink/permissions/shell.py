"""Reading a bash command the way bash will run it, before it runs: which simple commands, which files
its redirections write, and what makes it impossible to judge from its parts.

``git status && rm -rf x`` is two simple commands, and a rule must allow both. Anything whose effect
cannot be read off the text (command or process substitution, subshells, loops, functions, a computed
command name, redirections to computed file names, text bashlex cannot parse) is reported in ``unsure``:
the policy then asks instead of trusting a rule. Deny rules still see every command found anywhere,
including inside substitutions, subshells, ``bash -c '...'``, ``eval`` and wrappers such as ``sudo``,
``env``, ``xargs`` or ``timeout``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 3  # bash -c 'bash -c "..."': nesting followed for deny rules
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# Commands that run their arguments as another command (the argument list after options).
WRAPPERS = frozenset(
    {"env", "command", "builtin", "exec", "nohup", "nice", "time", "timeout", "sudo", "doas", "xargs",
     "stdbuf", "setsid", "ionice", "chronic", "watch", "flock", "unbuffer", "caffeinate", "find"}
)  # fmt: skip
DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
SUBSTITUTION_TEXT = re.compile(r"\$\(|`|<\(|>\(")
COMPUTED = re.compile(r"[$`{}*?\[]")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command: its words after quote removal, and the ``NAME=value`` words before them."""

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """How allow rules see it: assignments included (``PATH=/tmp npm test`` is not ``npm test``)."""
        return " ".join((*self.assignments, *self.words))

    def deny_texts(self) -> list[str]:
        """How deny rules see it: as written, without assignments, and every tail a wrapper would run
        (``sudo rm -rf x`` is also ``rm -rf x``)."""
        texts = [self.text, " ".join(self.words)]
        if self.words and os.path.basename(self.words[0]) in WRAPPERS:
            texts += [" ".join(self.words[i:]) for i in range(1, len(self.words))]
        return texts


@dataclass
class CommandShape:
    """``commands``: the top-level simple commands, each of which an allow rule must cover. ``nested``:
    every simple command found anywhere, for deny rules. ``writes``: files redirections write, as written.
    ``unsure``: why the command cannot be judged from its parts (empty when it can)."""

    commands: list[SimpleCommand] = field(default_factory=list)
    nested: list[SimpleCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    unsure: list[str] = field(default_factory=list)
    rough: list[str] = field(default_factory=list)  # pieces of an unparsable command, for deny rules

    def deny_texts(self) -> list[str]:
        texts = [t for c in self.nested for t in c.deny_texts()] + self.rough
        return list(dict.fromkeys(t for t in texts if t))


def analyse(command: str) -> CommandShape:
    """Split ``command`` into what it runs. Never raises: what cannot be parsed is ``unsure``."""
    shape = CommandShape()
    _analyse_into(command, shape, depth=0, top=True)
    if SUBSTITUTION_TEXT.search(command) and not any("substitution" in u for u in shape.unsure):
        shape.unsure.append("it contains a command or process substitution")
    return shape


def _analyse_into(command: str, shape: CommandShape, *, depth: int, top: bool) -> None:
    import bashlex

    try:
        trees = bashlex.parse(command) if command.strip() else []
    except Exception as exc:  # bashlex raises ParsingError, NotImplementedError and worse on odd input
        shape.unsure.append(f"bash syntax ink cannot check ({_first_line(exc)})")
        shape.rough += [piece.strip() for piece in re.split(r"[;&|()\n`]+|\$\(", command) if piece.strip()]
        return
    walker = _Walker(shape, depth)
    for tree in trees:
        walker.visit(tree, top=top)


class _Walker:
    def __init__(self, shape: CommandShape, depth: int) -> None:
        self.shape = shape
        self.depth = depth

    def visit(self, node: Any, *, top: bool) -> None:
        kind = node.kind
        if kind in ("list", "pipeline"):
            for part in node.parts:
                if part.kind not in ("operator", "pipe", "reservedword"):  # reservedword: `! cmd`
                    self.visit(part, top=top)
        elif kind == "command":
            self.simple(node, top=top)
        else:
            if top:
                self.shape.unsure.append(_construct(node))
            self.inner(node)

    def inner(self, node: Any) -> None:
        """Every command below ``node``: these run too, but no allow rule can vouch for the whole."""
        for child in _children(node):
            if child.kind == "command":
                self.simple(child, top=False)
            elif child.kind in ("commandsubstitution", "processsubstitution"):
                self.visit(child.command, top=False)
            else:
                self.inner(child)

    def simple(self, node: Any, *, top: bool) -> None:
        words: list[str] = []
        assignments: list[str] = []
        for part in node.parts:
            if part.kind == "assignment":
                assignments.append(part.word)
            elif part.kind == "word":
                words.append(part.word)
            elif part.kind == "redirect":
                self.redirect(part, top=top)
            self.inner(part)  # substitutions inside words and redirections
        found = SimpleCommand(tuple(words), tuple(assignments))
        self.shape.nested.append(found)
        if top:
            self.shape.commands.append(found)
            if words and COMPUTED.search(words[0]):
                self.shape.unsure.append(f"the command name {words[0]!r} is computed when it runs")
        self.command_strings(found)

    def redirect(self, node: Any, *, top: bool) -> None:
        target: Any = getattr(node, "output", None)
        if node.type not in WRITE_REDIRECTS or not hasattr(target, "word"):
            return  # input, here-documents, fd duplication (2>&1)
        if COMPUTED.search(target.word.replace("~", "")):
            self.shape.unsure.append(f"it redirects to a computed file name ({target.word})")
        elif top:
            self.shape.writes.append(target.word)

    def command_strings(self, command: SimpleCommand) -> None:
        """``bash -c 'text'`` and ``eval text`` run text as a command: parsed too, for deny rules."""
        words = command.words
        if not words or self.depth >= MAX_DEPTH:
            return
        name = os.path.basename(words[0])
        text = None
        if name in SHELLS and "-c" in words[1:-1]:
            text = words[words.index("-c") + 1]
        elif name == "eval":
            text = " ".join(words[1:])
        if text is not None:
            _analyse_into(text, self.shape, depth=self.depth + 1, top=False)


def _children(node: Any) -> list[Any]:
    children = list(getattr(node, "parts", None) or getattr(node, "list", None) or [])
    command = getattr(node, "command", None)
    if command is not None:
        children.append(command)
    output = getattr(node, "output", None)
    if hasattr(output, "kind"):
        children.append(output)
    return [c for c in children if hasattr(c, "kind")]


def _construct(node: Any) -> str:
    """Why a compound construct asks: named the way a user would recognise it."""
    if node.kind == "function":
        return "it defines a shell function"
    first = (getattr(node, "list", None) or [None])[0]
    opener = str(getattr(first, "word", None) or getattr(first, "kind", ""))
    names = {"(": "a subshell ( ... )", "{": "a group { ... }", "for": "a for loop", "while": "a while loop",
             "until": "an until loop", "if": "an if statement", "case": "a case statement"}  # fmt: skip
    return f"it runs {names.get(opener, f'a compound command ({opener})')}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
