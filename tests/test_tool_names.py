"""No module outside ink.tools names a built-in tool (issue 16): the permission policy, config rules, the
TUI and ACP judge and show a tool by what it says of itself (``Tool.kind``, ``Tool.describe``, result
details), so a new tool, built in or offered by an MCP server, is one file.

The import-linter contract "Only the wiring knows the built-in tools" forbids importing the tools'
modules; this test covers what a contract cannot see: a tool's name written as a string, and its class
imported through the ``ink.tools`` package.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from ink.agent.tool import ToolKind
from ink.extend.subagents import SubAgents
from ink.extend.task import TaskTool
from ink.tools import ProcessRegistry, default_tools
from ink.tools.jobs import JobRegistry

SRC = Path(__file__).resolve().parents[1] / "src" / "ink"
# Where a built-in tool's name may be written, and why it is not a list of tools there.
ALLOWED = {
    ("extend/task.py", "task"): "the task tool's own module",
    (
        "permissions/rules.py",
        "write",
    ): "a rule word: write(GLOB) has always meant edit(GLOB), every file change",
    ("permissions/shell.py", "bash"): "the bash program, which the shell parser follows into `bash -c`",
    ("batch/execute.py", "bash"): "the bash program a batch step runs",
    ("sandbox/denials.py", "write"): "what the sandbox refused (a write, a read), not the write tool",
    **{
        ("permissions/remember.py", name): "a shell program an 'always' rule may name alone, not the tool"
        for name in ("ls", "grep")
    },
    ("batch/results.py", "task"): "a batch's task, a column of its results table",
    ("extend/hook_process.py", "bash"): "the bash program a hook command runs",
    **{
        (
            "extend/hook_events.py",
            name,
        ): "Claude Code's spelling of the tools, for hook scripts written for it"
        for name in ("bash", "write", "grep", "glob", "ls", "task")
    },
    ("frontends/acp/updates.py", "plan"): "ACP's session update kind for a plan",
    ("frontends/rpc/handlers.py", "plan"): "get_state's field holding the session's plan",
    ("store/loader.py", "plan"): "the session file's entry recording the plan",
    ("store/writer.py", "plan"): "the session file's entry recording the plan",
    **{
        ("config/claude.py", name): "Claude Code's tool names mapped to ink's, for .claude/ files"
        for name in ("bash", "write", "grep", "glob", "ls", "task", "job_output", "job_kill", "plan")
    },
}


def builtin_tools(tmp_path: Path) -> dict[str, str]:
    """Each built-in tool's name and class name (the task tool is built elsewhere, but built in)."""
    task = TaskTool({}, SubAgents(), lambda: None)
    tools = [*default_tools(tmp_path, ProcessRegistry(), jobs=JobRegistry()), task]
    return {tool.spec.name: type(tool).__name__ for tool in tools}


def outside_the_tools() -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if p.relative_to(SRC).parts[0] != "tools"]


def test_no_module_outside_the_tools_writes_a_tools_name(tmp_path: Path) -> None:
    kind_words = set(get_args(ToolKind))  # read, edit...: a kind, not a tool, wherever they are written
    names = set(builtin_tools(tmp_path)) - kind_words
    scanned = {"bash", "write", "grep", "glob", "ls", "task", "job_output", "job_kill"}
    assert scanned <= names  # the scan below looks for something
    found = []
    for path in outside_the_tools():
        where = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and node.value in names and (where, node.value) not in ALLOWED:
                found.append(f"{where}:{node.lineno}: {node.value!r}")
    assert found == [], "modules that name a built-in tool (read its kind or description instead)"


def test_only_the_wiring_imports_a_built_in_tool(tmp_path: Path) -> None:
    classes = {*builtin_tools(tmp_path).values(), "default_tools"}
    found = []
    for path in [p for p in outside_the_tools() if p.relative_to(SRC).as_posix() != "wiring/pieces.py"]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ink.tools"):
                found += [f"{path.relative_to(SRC)}: {a.name}" for a in node.names if a.name in classes]
    assert found == []


def test_the_scan_finds_a_name_where_there_is_one(tmp_path: Path) -> None:
    """The scans above would see a tool named in a policy: they are not vacuous."""
    planted = ast.parse('READERS = {"grep", "glob"}\nfrom ink.tools import BashTool\n')
    constants = [n.value for n in ast.walk(planted) if isinstance(n, ast.Constant)]
    imported = [a.name for n in ast.walk(planted) if isinstance(n, ast.ImportFrom) for a in n.names]
    assert {"grep", "glob"} <= set(constants) & set(builtin_tools(tmp_path))
    assert "BashTool" in set(imported) & set(builtin_tools(tmp_path).values())
