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

from ink.config.commands import scoped_dirs
from ink.config.frontmatter import FrontMatterError, read_markdown
from ink.config.project import untrusted_file

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


def load_agent_types(cwd: Path, ink_home: Path) -> tuple[dict[str, AgentType], list[str]]:
    """The types by name (built-in, then the user's, then the project's) and warnings for skipped files."""
    types = {t.name: t for t in BUILT_IN}
    warnings: list[str] = []
    for directory, scope in scoped_dirs(cwd, ink_home, "agents"):
        for path in sorted(directory.glob("*.md")) if directory.is_dir() else []:
            try:
                doc = read_markdown(path)
            except (OSError, FrontMatterError) as exc:
                warnings.append(f"skipped the agent type in {path}: {exc}")
                continue
            if scope == "project" and (problem := untrusted_file(doc.status, path, "agent type")) is not None:
                warnings.append(problem)
                continue
            name = doc.text("name") or path.stem
            tools = doc.items("tools")
            found = AgentType(
                name,
                doc.text("description") or f"({scope} agent type)",
                doc.body or GENERAL_PROMPT,
                frozenset(t.lower() for t in tools) if tools else None,
                doc.text("model"),
                scope,
            )
            replaced = types.get(name)
            if scope == "project" and replaced is not None:
                found = _within(found, replaced, warnings)
            types[name] = found
    return types, warnings


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
