"""The policy judges a tool by what it says of itself (kind, paths, command), never by its name.

The tools here exist only in this file: a tool ink has never heard of is judged like ink's own tool of
the same kind, and the rule words that name kinds (``read``, ``edit``/``write``, ``execute``) cover it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ink.agent.tool import CallDescription, Tool, ToolCallContext, ToolKind, ToolOutput
from ink.ai.provider import ToolSpec
from ink.config.keys import PermissionMode
from ink.config.rules import parse_rule
from ink.permissions import PermissionPolicy, RuleSet


@dataclass
class Described:
    """A tool whose calls touch ``args["file"]`` (in ``root``) or run ``args["cmd"]``."""

    name: str
    kind: ToolKind
    root: Path
    concurrency_safe: bool = False

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, "a tool of this test", {"type": "object"})

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        file, cmd = args.get("file"), args.get("cmd")
        paths = (self.root / file,) if isinstance(file, str) else ()
        return CallDescription(f"{self.name} {file or cmd}", paths, cmd if isinstance(cmd, str) else None)

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        return ToolOutput("done")


def judge(
    root: Path,
    tool: Tool,
    args: Mapping[str, Any],
    mode: PermissionMode = "ask",
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
) -> str:
    rules = [parse_rule("allow", t, "test") for t in allow] + [parse_rule("deny", t, "test") for t in deny]
    tools = {tool.spec.name: tool}
    return PermissionPolicy(mode, RuleSet(rules), root, tools.get).check(tool.spec.name, args).kind


def test_a_new_reader_runs_and_read_rules_cover_it(tmp_path: Path) -> None:
    peek = Described("peek", "search", tmp_path)
    assert judge(tmp_path, peek, {"file": "a.txt"}) == "allow"
    assert judge(tmp_path, peek, {"file": "secret.env"}, deny=("read(*.env)",)) == "deny"
    assert judge(tmp_path, peek, {"file": "a.txt"}, deny=("peek",)) == "deny"


def test_a_new_file_changer_is_judged_like_edit(tmp_path: Path) -> None:
    patch = Described("patch", "edit", tmp_path)
    assert judge(tmp_path, patch, {"file": "a.py"}) == "ask"
    assert judge(tmp_path, patch, {"file": "a.py"}, "accept-edits") == "allow"
    assert judge(tmp_path, patch, {"file": ".git/config"}, "accept-edits") == "ask"
    assert judge(tmp_path, patch, {"file": "src/a.py"}, allow=("edit(src/**)",)) == "allow"
    assert judge(tmp_path, patch, {"file": ".env"}, "yolo", deny=("write(.env)",)) == "deny"
    assert judge(tmp_path, patch, {}, "accept-edits") == "ask"  # it did not say which file: no mode allows
    assert judge(tmp_path, patch, {"file": "a.py"}, deny=("patch(*.py)",)) == "deny"  # its own name


def test_a_new_command_runner_is_judged_like_bash_under_its_own_name(tmp_path: Path) -> None:
    run = Described("run", "execute", tmp_path)
    policy = PermissionPolicy("ask", RuleSet(), tmp_path, {"run": run}.get)
    verdict = policy.check("run", {"cmd": "npm test"})
    assert (verdict.kind, verdict.remember) == ("ask", "run(npm test *)")  # "always" remembers it by name
    assert judge(tmp_path, run, {"cmd": "npm test"}, allow=("run(npm *)",)) == "allow"
    assert judge(tmp_path, run, {"cmd": "npm test"}, allow=("bash(npm *)",)) == "ask"  # bash's rule, not its
    assert judge(tmp_path, run, {"cmd": "sudo rm -rf x"}, "yolo", deny=("execute(rm *)",)) == "deny"


def test_other_and_fetch_ask_and_a_delegate_runs(tmp_path: Path) -> None:
    assert judge(tmp_path, Described("deploy", "other", tmp_path), {}) == "ask"
    assert judge(tmp_path, Described("web", "fetch", tmp_path), {}) == "ask"
    assert judge(tmp_path, Described("web", "fetch", tmp_path), {}, allow=("fetch",)) == "allow"
    assert judge(tmp_path, Described("helper", "delegate", tmp_path), {}) == "allow"
    assert judge(tmp_path, Described("helper", "delegate", tmp_path), {}, deny=("helper",)) == "deny"


def test_a_deny_pattern_on_a_call_that_names_nothing_cannot_be_ruled_out(tmp_path: Path) -> None:
    """A pattern is matched against the command or paths a call names. Many MCP tools name neither: a
    deny rule with a pattern for such a tool must not be silently skipped (yolo would run the call)."""
    query = Described("mcp__db__query", "other", tmp_path)
    lookup = Described("mcp__docs__lookup", "read", tmp_path)
    deny = ("mcp__db__query(drop *)",)
    assert judge(tmp_path, query, {}, "yolo", deny=deny) == "deny"
    assert judge(tmp_path, query, {}, "ask", deny=deny, allow=("mcp__db__query",)) == "ask"
    assert judge(tmp_path, lookup, {}, "ask", deny=("mcp__docs__lookup(private*)",)) == "ask"
    assert judge(tmp_path, lookup, {}, "yolo", deny=("mcp__docs__lookup(private*)",)) == "deny"
    # A call that names a command or paths is matched as before; kind words judge only those.
    assert judge(tmp_path, lookup, {"file": "a.txt"}, "ask", deny=("mcp__docs__lookup(private*)",)) == "allow"
    assert judge(tmp_path, lookup, {}, "ask", deny=("read(secret/*)",)) == "allow"
    assert judge(tmp_path, query, {}, "yolo", deny=("mcp__other__tool(x)",)) == "allow"
