"""The system prompt: who ink is, its tools, the environment, and the project's own instructions.

Project instructions come from ``AGENTS.md`` (or ``CLAUDE.md`` where a folder has no ``AGENTS.md``) in the
working directory and each parent up to the root of the git repository; outside a repository, up to the
home directory when the working directory is inside it, else up to the filesystem root. They are listed
outermost first, so the most specific file comes last and wins where they disagree. Each is named with its
path. Building the prompt never fails: an unreadable file is mentioned instead of its content.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
from collections.abc import Sequence
from pathlib import Path

import msgspec

from ink.ai.provider import ToolSpec
from ink.ai.unicode import sendable_text
from ink.regular_file import read_regular, stays_within

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 40_000

IDENTITY = """You are ink, a coding agent working in the user's terminal. You help with software work in \
the current project: reading and changing code, running commands, finding and fixing problems.

How to work:
- Understand before you change: read the relevant files and search the code; do not guess at APIs, paths \
or behaviour you can check.
- Make the smallest change that does the job well, in the style of the surrounding code. Do not reformat or \
rewrite what you were not asked to touch.
- Check your work: run the tests, the build or the command that proves it, and fix what fails.
- For a task of several distinct steps, keep a short plan with the plan tool when it is offered: write \
the steps first, then mark each one in_progress as you start it and completed when it is done, so the \
user sees where you are. Skip the plan for a one-step task, a quick question or a one-line answer.
- Use the tools to act; do not tell the user to do what you can do yourself. Prefer the dedicated file \
tools over shell commands for reading, searching and editing files.
- Be careful with destructive or irreversible actions (deleting files, resetting git state, force \
pushing): do them only when asked, and say so first.
- Be concise. Answer in plain text with Markdown where it helps; refer to code as path:line. When you are \
done, say briefly what you changed and what you verified; say what you could not do.
- If the user interrupts or redirects you, follow the new instruction; a result marked as not executed \
or interrupted did not complete."""


class Environment(msgspec.Struct, frozen=True):
    """What the system prompt tells the model about where it works."""

    cwd: Path
    platform: str
    date: dt.date
    git_root: Path | None
    home: Path | None

    @classmethod
    def detect(cls, cwd: Path) -> Environment:
        cwd = cwd.expanduser().resolve()
        system = f"{platform.system()} {platform.release()}".strip() or os.name
        try:
            home: Path | None = Path.home().resolve()
        except (KeyError, RuntimeError):  # no home directory known for this user
            home = None
        return cls(cwd, system, dt.date.today(), find_git_root(cwd), home)


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder, or a file for worktrees)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def instruction_files(env: Environment) -> list[Path]:
    """The instruction files that apply in ``env.cwd``, outermost first."""
    stop = env.git_root
    if stop is None and env.home is not None and env.cwd.is_relative_to(env.home):
        stop = env.home
    found: list[Path] = []
    for folder in (env.cwd, *env.cwd.parents):
        for name in INSTRUCTION_FILES:
            candidate = folder / name
            if candidate.is_file():
                found.append(candidate)
                break
        if folder == stop:
            break
    return found[::-1]


def build_system_prompt(tools: Sequence[ToolSpec], env: Environment, *, extra: Sequence[str] = ()) -> str:
    """The whole system prompt; ``env`` from ``Environment.detect(cwd)``. ``extra``: sections a frontend
    adds (print mode, say), placed before the project instructions."""
    parts = [IDENTITY, _tools_section(tools), _environment_section(env), *extra]
    files = instruction_files(env)
    if files:
        parts.append(_instructions_section(files, env))
    return sendable_text("\n\n".join(p.strip() for p in parts if p.strip()) + "\n")  # a non-UTF-8 cwd


def _tools_section(tools: Sequence[ToolSpec]) -> str:
    if not tools:
        return "# Tools\nNo tools are available in this session: answer from the conversation alone."
    lines = [f"- {t.name}: {_first_line(t.description)}" for t in tools]
    return "# Tools\n" + "\n".join(lines)


def _environment_section(env: Environment) -> str:
    if env.git_root is None:
        repo = "no (not inside a git repository)"
    elif env.git_root == env.cwd:
        repo = "yes"
    else:
        repo = f"yes (repository root: {env.git_root})"
    return (
        "# Environment\n"
        f"- Working directory: {env.cwd}\n"
        f"- Git repository: {repo}\n"
        f"- Platform: {env.platform}\n"
        f"- Date: {env.date.isoformat()}"
    )


def _instructions_section(files: Sequence[Path], env: Environment) -> str:
    blocks = [
        "# Project instructions\nThese files were found from the repository root down to the working "
        "directory; where they disagree, the later (more specific) one wins."
    ]
    for path in files:
        blocks.append(f"## {path}\n{_read_instructions(path, env.git_root)}")
    return "\n\n".join(blocks)


def _leads_out(path: Path, top: Path | None) -> bool:
    """Whether ``path`` is a link to a file outside its repository (outside its own folder where there is
    none): a cloned repository's ``AGENTS.md -> ../../.ssh/id_rsa`` put the user's key in the system
    prompt, sent to the model's service, past the sandbox that keeps ``~/.ssh`` from every command."""
    return not stays_within(path, top or path.parent)


def _read_instructions(path: Path, top: Path | None = None) -> str:
    if _leads_out(path, top):
        return "(not read: a link to a file outside the repository)"
    try:  # a FIFO or a device is never opened; of a huge file, only a head is read
        read = read_regular(path, MAX_INSTRUCTION_CHARS * 4, cut=True)  # 4 bytes a character at most
    except OSError as exc:
        return f"(could not be read: {exc.strerror or exc})"
    text = read.data.decode("utf-8", "replace").strip()
    if read.cut:
        text = text[:MAX_INSTRUCTION_CHARS] + "\n[... the rest is not shown; read the file ...]"
    elif len(text) > MAX_INSTRUCTION_CHARS:
        cut = len(text) - MAX_INSTRUCTION_CHARS
        text = text[:MAX_INSTRUCTION_CHARS] + f"\n[... {cut} more characters not shown; read the file ...]"
    return text or "(empty)"


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""
