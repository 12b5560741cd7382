"""The rule an "always" answer to a command stores: one a person reads as what they meant.

Answering "always" to ``npm test -- --watch`` means "npm test, however it is run", not that exact line:
the rule is ``bash(npm test *)`` (which also matches ``npm test``). The question shows the rule before
the answer (docs/permissions.md, "Always"), and the remembered file holds it as written.

A prefix is kept only where it cannot widen much further than the command the user saw:

- a tool with subcommands (``git``, ``npm``, ``cargo``, ...) keeps its subcommand words (``git commit *``,
  ``npm run test:unit *``, ``docker compose up *``); after ``run``/``exec`` the program it runs too;
- a command that only reads, or a test, lint or type-check runner, keeps its name (``ls *``, ``pytest *``);
- everything else is stored exactly: commands that run code or commands given to them (shells,
  interpreters, wrappers, a script by path), that delete, move or change permissions, that reach the
  network, a subcommand that publishes, pushes or discards work (``git push``, ``git reset``), and any line
  of more than one command, with redirections, assignments, or anything bash expands.
"""

from __future__ import annotations

import re

from ink.permissions.rules import escape
from ink.permissions.shell import SHELLS, WRAPPERS, CommandShape

SUBCOMMAND_TOOLS = frozenset(
    {"git", "npm", "pnpm", "yarn", "bun", "npx", "pnpx", "bunx", "cargo", "go", "docker", "podman", "kubectl",
     "helm", "uv", "uvx", "pip", "pip3", "poetry", "pipenv", "pdm", "hatch", "conda", "mamba", "brew", "gh",
     "glab", "terraform", "dotnet", "mvn", "gradle", "make", "just", "rake", "bundle", "mix", "flutter",
     "dart", "swift", "composer", "deno", "rustup", "tox", "nox", "pre-commit", "cmake", "ctest", "bazel"}
)  # fmt: skip
NAME_ONLY = frozenset(
    {"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "tree", "pwd", "which",
     "whereis", "file", "stat", "du", "df", "echo", "printf", "date", "diff", "cmp", "sort", "uniq", "cut",
     "tr", "basename", "dirname", "realpath", "readlink", "whoami", "uname", "ps", "true", "false", "jq",
     "nproc", "pytest", "py.test", "jest", "vitest", "mocha", "eslint", "ruff", "mypy", "pyright", "black",
     "isort", "flake8", "pylint", "prettier", "tsc", "shellcheck", "cloc", "tokei", "hadolint"}
)  # fmt: skip
RUNS_CODE = frozenset(
    {"python", "python3", "python2", "node", "perl", "ruby", "php", "lua", "Rscript", "java", "osascript",
     "awk", "gawk", "sed", "eval", "source", ".", "exec", "ssh", "scp", "rsync", "curl", "wget", "nc"}
)  # fmt: skip
RISKY = frozenset(
    {("git", "push"), ("git", "reset"), ("git", "clean"), ("git", "checkout"), ("git", "restore"),
     ("git", "filter-branch"), ("npm", "publish"), ("pnpm", "publish"), ("yarn", "publish"),
     ("cargo", "publish"), ("docker", "run"), ("docker", "exec"), ("podman", "run"), ("podman", "exec"),
     ("kubectl", "delete"), ("kubectl", "exec"), ("kubectl", "apply"), ("terraform", "apply"),
     ("terraform", "destroy"), ("gh", "api"), ("helm", "uninstall")}
)  # fmt: skip
RUNNERS = frozenset({"run", "exec", "x", "dlx"})  # their next word names the program they start
SUBCOMMAND = re.compile(r"[a-z][a-z0-9]*(?:[-_:.][a-z0-9]+)*")
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
MAX_SUBCOMMANDS = 2


def command_rule(tool: str, command: str, shape: CommandShape) -> str:
    """The allow rule an "always" answer to ``command`` (as ``shape`` reads it) stores."""
    prefix = _prefix(shape)
    if prefix is None:
        return f"{tool}({escape(command.strip())})"
    return f"{tool}({' '.join(prefix)} *)"


def _prefix(shape: CommandShape) -> list[str] | None:
    """The words a rule keeps of the one simple command of ``shape``, or None: store it exactly."""
    if len(shape.commands) != 1 or len(shape.nested) != 1 or shape.writes or shape.unsure or shape.unprovable:
        return None
    [simple] = shape.commands
    words = list(simple.words)
    if simple.assignments or not words or not PLAIN_NAME.fullmatch(words[0]):
        return None
    name = words[0]
    if name in SHELLS or name in WRAPPERS or name in RUNS_CODE:
        return None
    if name in NAME_ONLY:
        return [name]
    if name not in SUBCOMMAND_TOOLS:
        return None
    kept = [name]
    for word in words[1:]:
        if len(kept) > MAX_SUBCOMMANDS or not SUBCOMMAND.fullmatch(word):
            break
        kept.append(word)
        if (name, word) in RISKY or word in SHELLS or word in RUNS_CODE or word in WRAPPERS:
            return None
        if word in RUNNERS and len(kept) > MAX_SUBCOMMANDS:
            return None  # the program it runs would be cut off
    if len(kept) == 1:
        return None  # options before the subcommand (git -C x ...): no prefix tells what runs
    if kept[-1] in RUNNERS:
        return None  # `npm exec` alone in the prefix would allow any program
    return kept
