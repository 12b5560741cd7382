"""Claude Code's set-up files, read like their ``.ink/`` counterparts (docs/claude-code.md), with
``[compat] claude = true`` (the default):

    .claude/settings.json, .claude/settings.local.json   hooks, permissions.deny (a project's)
    ~/.claude/settings.json                               hooks, permissions.allow and .deny (the user's)
    .mcp.json                                             mcpServers (a project's)
    .claude/commands/, .claude/agents/ (and ~/.claude/)   read by ``ink.config.commands`` and ``agents``

A project's files are read as ``.ink/config.toml`` is: found from the working directory up to the
repository root, regular files only and size-capped (``ink.regular_file``: a FIFO never blocks ink),
ignored when another user may have written them (``untrusted_file``). Their hooks and MCP servers are
the project's: nothing of them runs before the user approved it (R40). A project's allow rules are
ignored, as they are in ``.ink/config.toml``. Claude Code's files are not ink's to police: a file ink
cannot use, or a part of one it does not support, is a warning, never a reason to stop.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from ink.config.errors import ConfigError
from ink.config.files import MAX_CONFIG_BYTES
from ink.config.hooks import MAX_TIMEOUT, HookEvent, HookSpec
from ink.config.matchers import MatcherError, check_matcher
from ink.config.project import find_in_project, untrusted_file
from ink.config.rules import RuleText, parse_rule
from ink.regular_file import read_regular

if TYPE_CHECKING:
    # Only a project with a .mcp.json pays for the MCP settings module (start-up imports nothing of MCP).
    from ink.config.mcp import McpServerSpec

HOOK_EVENTS: dict[str, HookEvent] = {
    "PreToolUse": "pre_tool",
    "PostToolUse": "post_tool",
    "UserPromptSubmit": "user_prompt",
    "Stop": "stop",
    "SessionStart": "session_start",
}
# Claude Code's tool names (lower case) -> ink's; a name in neither is unknown (a warning, never a widening).
CLAUDE_TOOLS = {
    "bash": "bash",
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "grep": "grep",
    "glob": "glob",
    "ls": "ls",
    "task": "task",
    "todowrite": "plan",
    "bashoutput": "job_output",
    "killbash": "job_kill",
    "killshell": "job_kill",
}
INK_TOOLS = frozenset({"read", "write", "edit", "bash", "grep", "glob", "ls", "task", "plan"}) | {
    "job_output",
    "job_kill",
}


class ClaudeSetup(msgspec.Struct, frozen=True):
    """What Claude Code's files add: hooks (the user's, the project's), permission rules (the project's
    denies, the user's rules), the project's MCP servers, and warnings about what was left out."""

    user_hooks: tuple[HookSpec, ...] = ()
    project_hooks: tuple[HookSpec, ...] = ()
    project_rules: tuple[RuleText, ...] = ()
    user_rules: tuple[RuleText, ...] = ()
    servers: tuple[McpServerSpec, ...] = ()


def ink_tool(name: str) -> str | None:
    """ink's name for a tool named in a Claude Code file (``Bash``, ``MultiEdit``, ``mcp__s__t``), or None
    for one ink has no counterpart of (``WebFetch``)."""
    clean = name.strip()
    if clean.startswith("mcp__"):
        return clean
    lower = clean.lower()
    return CLAUDE_TOOLS.get(lower) or (lower if lower in INK_TOOLS else None)


def tool_names(items: list[str] | None, where: str, warnings: list[str]) -> frozenset[str] | None:
    """A command's ``allowed-tools`` or an agent's ``tools`` in ink's names. ``Bash(git add:*)`` names the
    tool ``bash`` (ink limits commands by tool). A name ink does not know is left out with a warning: the
    set only ever narrows."""
    if items is None:
        return None
    found: set[str] = set()
    for item in items:
        name = item.partition("(")[0].strip()
        if not name:
            continue
        ink = ink_tool(name)
        if ink is None:
            warnings.append(f"{where}: tool {name!r} has no counterpart in ink; left out of its tools")
        else:
            found.add(ink)
    return frozenset(found)


def load_claude_setup(
    cwd: Path, ink_home: Path, home: Path | None, warnings: list[str], *, project: bool = True
) -> ClaudeSetup:
    """Every Claude Code file that applies to ``cwd``: the user's ``~/.claude/settings.json``, then
    (with ``project``) the project's ``.claude/settings.json``, ``.claude/settings.local.json`` and
    ``.mcp.json``."""
    user_hooks: tuple[HookSpec, ...] = ()
    user_rules: tuple[RuleText, ...] = ()
    if home is not None:
        mine = home / ".claude" / "settings.json"
        data = _read_json(mine, "user", warnings)
        if data is not None:
            user_hooks, user_rules = (
                _hooks(mine, data, "user", warnings),
                _rules(mine, data, "user", warnings),
            )
    if not project:  # the project turned Claude Code's files off: its own, never the user's
        return ClaudeSetup(user_hooks, user_rules=user_rules)
    env = {"HOME": str(home)} if home is not None else {}
    hooks: tuple[HookSpec, ...] = ()
    rules: tuple[RuleText, ...] = ()
    folder = find_in_project(cwd, ink_home, env, "", Path.is_dir, folder=".claude")
    for path in (folder / "settings.json", folder / "settings.local.json") if folder is not None else ():
        data = _read_json(path, "project", warnings)
        if data is not None:
            hooks, rules = (
                hooks + _hooks(path, data, "project", warnings),
                rules + _rules(path, data, "project", warnings),
            )
    servers: tuple[McpServerSpec, ...] = ()
    mcp = find_in_project(cwd, ink_home, env, ".mcp.json", Path.is_file, folder="")
    data = _read_json(mcp, "project", warnings) if mcp is not None else None
    if mcp is not None and data is not None:
        servers = _servers(mcp, data, warnings)
    return ClaudeSetup(user_hooks, hooks, rules, user_rules, servers)


def _read_json(path: Path | None, scope: str, warnings: list[str]) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        read = read_regular(path, MAX_CONFIG_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        warnings.append(f"{path}: not read ({exc.strerror or exc}); its settings do not apply")
        return None
    if scope == "project" and (problem := untrusted_file(read.status, path, "Claude Code file")) is not None:
        warnings.append(problem)
        return None
    try:
        data = json.loads(read.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        warnings.append(f"{path}: not valid JSON ({exc}); its settings do not apply")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path}: not a JSON object; its settings do not apply")
        return None
    return data


def _hooks(path: Path, data: Mapping[str, Any], scope: str, warnings: list[str]) -> tuple[HookSpec, ...]:
    """``hooks.EVENT[].matcher`` and ``.hooks[].command/timeout``, Claude Code's shape."""
    table = data.get("hooks")
    if table is None:
        return ()
    if not isinstance(table, dict):
        warnings.append(f"{path}: hooks is not an object; no hook of it runs")
        return ()
    found: list[HookSpec] = []
    for name, groups in table.items():
        event = HOOK_EVENTS.get(name)
        if event is None:
            warnings.append(f"{path}: ink has no {name!r} hook event; those hooks do not run (docs/hooks.md)")
            continue
        for index, group in enumerate(groups if isinstance(groups, list) else [groups]):
            found += _group(path, event, f"{path}: hooks.{name}[{index}]", group, scope, warnings)
    return tuple(found)


def _group(
    path: Path, event: HookEvent, where: str, group: Any, scope: str, warnings: list[str]
) -> list[HookSpec]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        warnings.append(f"{where}: not of the form {{matcher, hooks: [...]}}; it does not run")
        return []
    matcher = group.get("matcher")
    try:
        if matcher is not None and not isinstance(matcher, str):
            raise MatcherError("a matcher is a string")
        check_matcher(matcher or "")
    except MatcherError as exc:
        warnings.append(f"{where}: matcher {matcher!r} cannot be used ({exc}); its hooks do not run")
        return []
    specs: list[HookSpec] = []
    for number, hook in enumerate(group["hooks"]):
        at = f"{where}.hooks[{number}]"
        command = hook.get("command") if isinstance(hook, dict) else None
        kind = hook.get("type", "command") if isinstance(hook, dict) else None
        if kind != "command" or not isinstance(command, str) or not command.strip():
            warnings.append(f"{at}: only hooks of type command with a command run in ink; it does not run")
            continue
        timeout = hook.get("timeout", 60)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
            timeout = 60  # JSON's NaN (Python reads it) passed "<= 0" and timed every call out at once
        specs.append(HookSpec(event, command, at, matcher or None, min(float(timeout), MAX_TIMEOUT), scope))
    return specs


def _rules(path: Path, data: Mapping[str, Any], scope: str, warnings: list[str]) -> tuple[RuleText, ...]:
    """``permissions.deny`` (and, for the user's own file, ``allow``) in ink's rule words: ``Bash(npm
    test:*)`` is ``bash(npm test *)``, ``Read(./src/**)`` is ``read(src/**)``. A project's allow rules are
    ignored, as in ``.ink/config.toml``; a rule ink cannot express is left out with a warning."""
    table = data.get("permissions")
    if not isinstance(table, dict):
        if table is not None:  # its deny rules would be lost without a word
            warnings.append(f"{path}: permissions is not an object; none of its rules apply")
        return ()
    rules: list[RuleText] = []
    for effect in ("deny", "allow"):
        items = table.get(effect) or []
        if effect == "allow" and scope == "project" and items:
            warnings.append(
                f"{path}: ignoring its permissions.allow: a project file may only add deny rules; "
                "put the rules you trust in [permissions] allow of $INK_HOME/config.toml"
            )
            continue
        if not isinstance(items, list):
            warnings.append(f"{path}: permissions.{effect} is not a list; none of its rules apply")
            continue
        for item in items:
            rule = claude_rule(effect, item, f"{path}: permissions.{effect}", base=path.parent.parent)
            if rule is None:
                warnings.append(f"{path}: permission rule {item!r} has no counterpart in ink; not applied")
            else:
                rules.append(rule)
    if table.get("ask"):
        warnings.append(f"{path}: permissions.ask is not read by ink (its calls ask as the mode says)")
    return tuple(rules)


def claude_rule(effect: str, text: object, where: str, *, base: Path | None = None) -> RuleText | None:
    """One Claude Code rule in ink's words, or None when ink has no counterpart. A path pattern with one
    leading slash (``Read(/secrets/**)``) is relative to ``base``, the folder holding the settings file's
    ``.claude/`` (without one: left out): read as an absolute path it matched nothing, and a project's
    deny rule failed open."""
    if not isinstance(text, str) or effect not in ("allow", "deny"):
        return None
    name, paren, rest = text.strip().partition("(")
    tool = ink_tool(name)
    if tool is None or (paren and not rest.endswith(")")):
        return None
    pattern = rest[:-1].strip() if paren else None
    if pattern is not None and tool == "bash":
        pattern = pattern[:-2].rstrip() + " *" if pattern.endswith(":*") else pattern
    elif pattern is not None and pattern.startswith("/") and not pattern.startswith("//"):
        if base is None:
            return None
        pattern = re.sub(r"([\\*?])", r"\\\1", base.as_posix().rstrip("/")) + pattern  # base matches itself
    elif pattern is not None:
        pattern = "/" + pattern[2:] if pattern.startswith("//") else pattern.removeprefix("./")
    try:
        return parse_rule(
            "deny" if effect == "deny" else "allow", tool + (f"({pattern})" if pattern else ""), where
        )
    except ConfigError:
        return None


def _servers(path: Path, data: Mapping[str, Any], warnings: list[str]) -> tuple[McpServerSpec, ...]:
    """``mcpServers``: ``{command, args, env}`` or ``{type: "http", url, headers}``, as ``[mcp.servers]``
    servers of the project (started only once approved, R40)."""
    from ink.config.mcp import check_mcp

    table = data.get("mcpServers")
    if not isinstance(table, dict):
        if table is not None:
            warnings.append(f"{path}: mcpServers is not an object; no server of it starts")
        return ()
    servers: list[McpServerSpec] = []
    for name, entry in table.items():
        converted = _server_table(entry)
        if isinstance(converted, str):
            warnings.append(f"{path}: MCP server {name!r} is not started: {converted}")
            continue
        where: Callable[[tuple[str, ...], str | None], str] = lambda _table, _key: f"{path}"  # noqa: E731
        try:
            [spec] = check_mcp({"servers": {name: converted}}, where)
        except ConfigError as exc:
            warnings.append(f"MCP server {name!r} of {exc}; it is not started")
            continue
        servers.append(replace(spec, where=f"{path}: mcpServers.{name}", origin="project"))
    return tuple(servers)


def _server_table(entry: Any) -> dict[str, Any] | str:
    """A ``.mcp.json`` server as an ``[mcp.servers.NAME]`` table, or why it cannot be one."""
    if not isinstance(entry, dict):
        return "its entry is not an object"
    kind = entry.get("type", "http" if "url" in entry else "stdio")
    if kind == "sse":
        return "ink speaks Streamable HTTP, not the older SSE transport (give its /mcp URL, type http)"
    if kind not in ("stdio", "http"):
        return f"unknown type {kind!r} (ink starts stdio and http servers)"
    keys = ("command", "args", "env", "cwd") if kind == "stdio" else ("url", "headers")
    return {key: entry[key] for key in keys if key in entry}
