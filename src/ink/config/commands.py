"""Custom slash commands: markdown files in ``.ink/commands/`` of the project and ``$INK_HOME/commands/``
(docs/commands.md is the user's description).

    .ink/commands/review.md       ->  /review ARGS
    .ink/commands/git/commit.md   ->  /git:commit ARGS

The body is the prompt; ``$ARGUMENTS`` becomes everything after the name, ``$1`` .. ``$9`` its words.
A body without a placeholder gets the arguments appended as a last paragraph, so they are never lost.
Front matter (``ink.config.frontmatter``): ``description``, ``argument-hint``, ``allowed-tools``.
A project's command replaces a user's command of the same name. A file that cannot be read is skipped
with a warning: one bad file must not take the others (or ink) down.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import NamedTuple

import msgspec

from ink.config.frontmatter import FrontMatterError, read_markdown
from ink.config.project import find_in_project, untrusted_file
from ink.regular_file import stays_within

MAX_DEPTH = 8  # folders below commands/: /a:b:c:d:e:f:g:h is as deep as a command name goes
MAX_FILES = 2_000  # command files read from one folder's tree (each is read at start-up)
MAX_ENTRIES = 10_000  # entries of one folder looked at
MAX_FOLDERS = 1_000  # folders looked at under one commands folder
# Claude Code's tool names, so that its command files work unchanged.
FOREIGN_TOOL_NAMES = {"multiedit": "edit", "notebookedit": "edit", "webfetch": "web_fetch"}


# The patterns are compiled on first use: a run that invokes no custom command needs neither.
@cache
def _placeholder() -> re.Pattern[str]:
    return re.compile(r"\$ARGUMENTS|\$([1-9])")  # one pass: an argument's own "$1" stays as it is


@cache
def _invocation() -> re.Pattern[str]:
    return re.compile(r"/([\w.:-]+)(?:\s+(.*))?", re.DOTALL)


class CustomCommand(msgspec.Struct, frozen=True):
    """A ``/name`` command defined by a Markdown file."""

    name: str
    body: str
    path: Path
    scope: str  # "project" or "user"
    description: str = ""
    argument_hint: str = ""
    allowed_tools: frozenset[str] | None = None  # None: every tool

    def expand(self, arguments: str) -> str:
        """The prompt for ``/name arguments``."""
        arguments = arguments.strip()
        words = _words(arguments)
        has_placeholder = _placeholder().search(self.body) is not None
        text = _placeholder().sub(lambda m: _nth(words, m.group(1)) if m.group(1) else arguments, self.body)
        if arguments and not has_placeholder:
            text = f"{text}\n\nARGUMENTS: {arguments}"
        return text

    @property
    def summary(self) -> str:
        return self.description or f"({self.scope} command)"


class Expansion(msgspec.Struct, frozen=True):
    """A custom command's prompt, expanded from one ``/name args`` line."""

    command: CustomCommand
    text: str


class CommandBook(msgspec.Struct, frozen=True):
    """The custom commands found, by name, and what was wrong with the files skipped."""

    commands: Mapping[str, CustomCommand] = msgspec.field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def expand(self, line: str, reserved: Iterable[str] = ()) -> Expansion | None:
        """``/name args`` of a known custom command as its prompt; None for anything else (plain text,
        ``//``, an unknown name, or a name in ``reserved``: the frontend's own commands win)."""
        stripped = line.strip()
        if not stripped.startswith("/") or not self.commands:  # the usual prompt: no pattern to compile
            return None
        found = _invocation().fullmatch(stripped)
        if found is None:
            return None
        name, arguments = found.group(1), found.group(2)
        command = self.commands.get(name)
        if command is None or name in set(reserved):
            return None
        return Expansion(command, command.expand(arguments or ""))

    def __len__(self) -> int:
        return len(self.commands)


def load_commands(
    cwd: Path, ink_home: Path, *, claude: bool = False, home: Path | None = None
) -> CommandBook:
    """The user's commands, then the project's (which win on a name both define). With ``claude``,
    Claude Code's folders too (``~/.claude/commands``, ``.claude/commands``); ``.ink``'s win over them."""
    found: dict[str, CustomCommand] = {}
    from_claude: set[Path] = set()
    warnings: list[str] = []
    for folder in scoped_dirs(cwd, ink_home, "commands", claude=claude, home=home):
        for command in _read_dir(folder, warnings):
            replaced = found.get(command.name)
            if replaced is not None and replaced.path in from_claude and replaced.scope == command.scope:
                warnings.append(f"/{command.name}: {command.path} is used, not {replaced.path} (.ink wins)")
            found[command.name] = command
            if folder.claude:
                from_claude.add(command.path)
    return CommandBook(dict(sorted(found.items())), tuple(warnings))


class SetupDir(NamedTuple):
    """A folder of custom commands or agent types: whose (``user``, ``project``), and whether it is
    Claude Code's (``.claude/``: its tool names are Claude Code's)."""

    path: Path
    scope: str
    claude: bool = False


def scoped_dirs(
    cwd: Path, ink_home: Path, name: str, *, claude: bool = False, home: Path | None = None
) -> list[SetupDir]:
    """The user's folders NAME, then the project's, later ones winning on a name both define: with
    ``claude``, ``~/.claude/NAME``, ``$INK_HOME/NAME``, the project's ``.claude/NAME``, its ``.ink/NAME``
    (``.ink`` wins over ``.claude``, the project over the user); without, ink's two alone. ``home``: the
    user's home folder, whose ``.claude`` is the user's (None: no ``~/.claude`` is read)."""
    env = {"HOME": str(home if home is not None else Path.home())}
    dirs = [SetupDir(home / ".claude" / name, "user", True)] if claude and home is not None else []
    dirs.append(SetupDir(ink_home / name, "user"))
    for folder in (".claude", ".ink") if claude else (".ink",):
        project = find_in_project(cwd, ink_home, env, name, Path.is_dir, folder=folder)
        if project is not None:
            dirs.append(SetupDir(project, "project", folder == ".claude"))
    return dirs


def _read_dir(folder: SetupDir, warnings: list[str]) -> list[CustomCommand]:
    directory, scope = folder.path, folder.scope
    if not directory.is_dir() or not within_project(folder, warnings):
        return []
    commands = []
    for path in markdown_files(directory, warnings, "commands"):
        relative = path.relative_to(directory).with_suffix("")
        name = ":".join(relative.parts)
        if not re.fullmatch(r"[\w.:-]+", name):
            warnings.append(f"{path}: skipped: a command name may hold letters, digits, '-', '_', '.'")
            continue
        if not project_file_within(folder, path, warnings):
            continue
        try:
            doc = read_markdown(path)
        except (OSError, FrontMatterError) as exc:
            warnings.append(f"skipped the command /{name}: {exc}")
            continue
        if scope == "project" and (problem := untrusted_file(doc.status, path, "command")) is not None:
            warnings.append(problem)
            continue
        commands.append(
            CustomCommand(
                name=name,
                body=doc.body,
                path=path,
                scope=scope,
                description=doc.text("description") or "",
                argument_hint=doc.text("argument-hint") or "",
                allowed_tools=_allowed(folder, doc.items("allowed-tools"), f"/{name} ({path})", warnings),
            )
        )
    return commands


def within_project(folder: SetupDir, warnings: list[str]) -> bool:
    """Whether a folder of commands or agent types is where it says: a project's must lie in the project
    (``.ink/commands -> /`` made ink read every markdown file of the machine, for seconds, as commands);
    a link inside it (``.claude/commands -> ../.ink/commands``) is fine. The user's own are theirs."""
    return folder.scope != "project" or _inside(folder.path, folder.path.parent.parent, warnings)


def _inside(path: Path, project: Path, warnings: list[str]) -> bool:
    inside = stays_within(path, project)
    if not inside:
        warnings.append(f"{path}: leads out of the project; not read")
    return inside


def project_file_within(folder: SetupDir, path: Path, warnings: list[str]) -> bool:
    """Whether a project's command or agent-type file is one of the project's own: a link to a file
    outside it (``helper.md -> ../../../.ssh/id_rsa``) would make the user's secret an agent's prompt,
    sent to the model's service when the model picks that type."""
    return folder.scope != "project" or _inside(path, folder.path.parent.parent, warnings)


def markdown_files(directory: Path, warnings: list[str], kind: str, max_depth: int = MAX_DEPTH) -> list[Path]:
    """The ``*.md`` entries under ``directory`` (``kind``: what they are, for a warning), sorted, found by
    a walk a repository cannot overrun: a stack, not recursion (folders nested thousands deep made
    ``rglob`` die of RecursionError, and ink with it, before its first request), at most ``max_depth``
    folders deep and ``MAX_FILES`` files, each bound said once. Symlinked folders are not entered (no
    loops), as ``rglob`` did not."""
    found: list[Path] = []
    deeper = crowded = False
    folders = [(directory, 0)]
    visited = 0
    while folders and len(found) <= MAX_FILES and visited < MAX_FOLDERS:
        folder, depth = folders.pop()
        visited += 1
        try:
            with os.scandir(folder) as scan:
                entries = list(itertools.islice(scan, MAX_ENTRIES + 1))
        except OSError:
            continue  # unreadable, or gone: as rglob did
        crowded = crowded or len(entries) > MAX_ENTRIES
        for entry in entries[:MAX_ENTRIES]:
            if _real_folder(entry):
                deeper = deeper or depth >= max_depth
                if depth < max_depth:
                    folders.append((Path(entry.path), depth + 1))
            elif entry.name.endswith(".md"):
                found.append(Path(entry.path))
    if deeper and max_depth > 0:  # a folder of agent types has no sub-folders to read
        warnings.append(f"{directory}: folders more than {max_depth} deep are not read for {kind}")
    if len(found) > MAX_FILES or crowded or folders:
        warnings.append(
            f"{directory}: more than {MAX_FILES:,} files of {kind}, {MAX_FOLDERS:,} folders or "
            f"{MAX_ENTRIES:,} entries in a folder; the rest are not read"
        )
    return sorted(found)[:MAX_FILES]


def _real_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _allowed(
    folder: SetupDir, items: list[str] | None, where: str, warnings: list[str]
) -> frozenset[str] | None:
    if not folder.claude:
        return _tool_names(items)
    from ink.config.claude import tool_names  # Claude Code's names, mapped; unknown ones left out

    return tool_names(items, where, warnings)


def _tool_names(items: list[str] | None) -> frozenset[str] | None:
    """``Bash(git add:*)`` names the tool ``bash``: ink limits commands by tool, not by pattern."""
    if items is None:
        return None
    names = (item.partition("(")[0].strip().lower() for item in items)
    return frozenset(FOREIGN_TOOL_NAMES.get(name, name) for name in names if name)


def _words(arguments: str) -> list[str]:
    import shlex  # here: only a custom command given arguments needs it

    try:
        return shlex.split(arguments)
    except ValueError:  # an unbalanced quote: plain words rather than an error
        return arguments.split()


def _nth(words: list[str], digit: str) -> str:
    number = int(digit)
    return words[number - 1] if number <= len(words) else ""
