"""Sub-agent types for the ``task`` tool (docs/subagents.md): markdown files in ``.ink/agents/`` of the
project and ``$INK_HOME/agents/``, plus the built-in ``explore`` (read-only) and ``general`` types.

    ---
    name: reviewer
    description: Reviews a change for bugs; give it the files to read
    tools: read, grep, glob
    model: gpt-4.1-mini
    ---
    You review code. Report bugs with path:line, most serious first.

The body is the sub-agent's system prompt. ``tools`` limits its tools (default: every tool of the parent
but ``task``); ``model`` picks another model of the same provider. A project's type replaces a user's of
the same name, within that type's limits (a repository's ``explore`` stays read-only); a project's file
another user may have written (owner, group- or world-writable) is ignored, as its config file would be;
a file that cannot be read is skipped with a warning.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ink.config.commands import (
    SetupDir,
    markdown_files,
    project_file_within,
    scoped_dirs,
    within_project,
)
from ink.config.frontmatter import FrontMatterError, read_markdown
from ink.config.project import untrusted_file

CLAUDE_MODEL_ALIASES = ("inherit", "sonnet", "opus", "haiku")  # a .claude agent's model: use the parent's
READ_ONLY_KINDS = frozenset({"read", "search"})  # tool kinds (ink.agent.tool.ToolKind) that change nothing
EXPLORE_PROMPT = """You are a read-only explorer working for another agent. Find what it asked for in the \
project with the read, grep, glob and ls tools; you cannot change anything. Answer with the facts found, \
each with its path:line, briefly. Your answer is all the other agent will see of your work."""
GENERAL_PROMPT = """You are a sub-agent doing one self-contained task for another agent, with the same \
tools. Do the task, check it, and answer with what you did and found, briefly. Your answer is all the \
other agent will see of your work."""


class AgentType(msgspec.Struct, frozen=True):
    """A kind of sub-agent: its prompt, the tools it may use and its model."""

    name: str
    description: str
    prompt: str
    tools: frozenset[str] | None = None  # None: every tool of the parent but the sub-agent one
    model: str | None = None
    scope: str = "built-in"
    kinds: frozenset[str] | None = None  # only tools of these kinds; None: of any kind


BUILT_IN = (
    AgentType("general", "Any self-contained task, with the same tools as you", GENERAL_PROMPT),
    AgentType(
        "explore",
        "Read-only search of the project: finds code and facts, changes nothing",
        EXPLORE_PROMPT,
        kinds=READ_ONLY_KINDS,
    ),
)


def load_agent_types(
    cwd: Path, ink_home: Path, *, claude: bool = False, home: Path | None = None
) -> tuple[dict[str, AgentType], list[str]]:
    """The types by name (built-in, then the user's, then the project's) and warnings for skipped files.
    With ``claude``, Claude Code's ``~/.claude/agents`` and ``.claude/agents`` too (``.ink``'s win)."""
    types = {t.name: t for t in BUILT_IN}
    under_claude: dict[str, AgentType | None] = {}  # a .claude type's name -> the type it replaced
    warnings: list[str] = []
    for folder in scoped_dirs(cwd, ink_home, "agents", claude=claude, home=home):
        readable = folder.path.is_dir() and within_project(folder, warnings)
        found_files = markdown_files(folder.path, warnings, "agent types", 0) if readable else []
        for path in found_files:
            found = _read_type(path, folder, warnings)
            if found is None:
                continue
            name, replaced = found.name, types.get(found.name)
            if replaced is not None and name in under_claude and replaced.scope == folder.scope:
                warnings.append(f"agent type {name!r}: {path} is used, not Claude Code's (.ink wins)")
                replaced = under_claude[name]  # .ink's type replaces what .claude's replaced
            if folder.scope == "project" and replaced is not None:
                found = _within(found, replaced, warnings)
            if folder.claude:
                under_claude[name] = replaced
            else:
                under_claude.pop(name, None)
            types[name] = found
    return types, warnings


def _read_type(path: Path, folder: SetupDir, warnings: list[str]) -> AgentType | None:
    scope = folder.scope
    if not project_file_within(folder, path, warnings):
        return None
    try:
        doc = read_markdown(path)
    except (OSError, FrontMatterError) as exc:
        warnings.append(f"skipped the agent type in {path}: {exc}")
        return None
    if scope == "project" and (problem := untrusted_file(doc.status, path, "agent type")) is not None:
        warnings.append(problem)
        return None
    name = doc.text("name") or path.stem
    tools = doc.items("tools")
    model = doc.text("model")
    if folder.claude:
        from ink.config.claude import tool_names

        names = tool_names(tools, f"agent type {name!r} ({path})", warnings) if tools else None
        if model in CLAUDE_MODEL_ALIASES:  # Claude Code's words for its own models: the parent's model
            model = None
    else:
        names = frozenset(t.lower() for t in tools) if tools else None
    description = doc.text("description") or f"({scope} agent type)"
    return AgentType(name, description, doc.body or GENERAL_PROMPT, names, model, scope)


def _within(found: AgentType, replaced: AgentType, warnings: list[str]) -> AgentType:
    """A project's type that replaces a built-in or user type of the same name gets no tool the replaced
    one lacks: a repository's ``explore`` stays read-only, whatever its ``tools`` line says."""
    tools = found.tools
    if replaced.tools is not None:
        tools = replaced.tools if tools is None else tools & replaced.tools
    if tools != found.tools or replaced.kinds is not None:
        kept = "read-only tools" if replaced.kinds == READ_ONLY_KINDS else "the tools it had"
        warnings.append(
            f"the project's agent type {found.name!r} replaces the {replaced.scope} one and keeps its limits "
            f"({kept}): a repository's agent type may narrow a type's tools, never widen them"
        )
    return msgspec.structs.replace(found, tools=tools, kinds=replaced.kinds)
