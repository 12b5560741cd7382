"""Leaving the sandbox for one call (R41): bash's ``sandbox: false`` with a ``reason`` is a permission
question, judged by the one precedence (R37): deny rules of either word hold, only an allow rule meant for
it (``bash-unsandboxed(...)``) or the user's answer lets it out; no mode (yolo included) and no hook's
allow does. The matrix runs through the real permission step, the real policy and the real bash tool's
description of a call in a real sandbox; the expected outcome of each cell is written out."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import Refusal, Ruling, ToolCallContext
from ink.ai.details import SandboxReport
from ink.ai.messages import ToolCall
from ink.config.keys import PermissionMode
from ink.config.rules import parse_rule
from ink.permissions import PermissionHook, PermissionPolicy, RuleSet
from ink.sandbox import Sandbox, build_policy, open_sandbox
from ink.tools import BashTool, ProcessRegistry, Workspace, default_tools
from ink.vocabulary import Decision
from ink.wiring.sandboxing import LEAVE_WITHOUT_REASON, leave_check
from tests.permissions.helpers import Run
from tests.sandbox.conftest import require_sandbox

LEAVE = {"command": "touch made", "sandbox": False, "reason": "it writes outside the workspace"}
RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # (allow, deny)
    "none": ((), ()),
    "allow": (("bash(touch *)",), ()),
    "allow outside": (("bash-unsandboxed(touch *)",), ()),
    "deny": ((), ("bash(touch *)",)),
    "deny outside": ((), ("bash-unsandboxed",)),
    "allow outside+deny": (("bash-unsandboxed(touch *)",), ("bash(touch *)",)),
}
HOOKS = ("silent", "allow", "ask", "deny")
MODES: tuple[PermissionMode, ...] = ("ask", "accept-edits", "yolo")
ASKED = {"silent": "asked", "allow": "asked", "ask": "asked", "deny": "refused by hook"}
# rule -> hook -> outcome, the same in every mode: no mode lets a call out of the sandbox
EXPECTED: dict[str, dict[str, str]] = {
    "none": ASKED,
    "allow": ASKED,  # a plain allow never lets a call out
    "allow outside": {"silent": "let out", "allow": "let out", "ask": "asked", "deny": "refused by hook"},
    "deny": dict.fromkeys(HOOKS, "refused by rule"),
    "deny outside": dict.fromkeys(HOOKS, "refused by rule"),
    "allow outside+deny": dict.fromkeys(HOOKS, "refused by rule"),
}


class Asker:
    """Records each question (its reason and the rule "always" would store) and gives ``answer``."""

    timeout_seconds: float | None = None

    def __init__(self, answer: Decision = "deny") -> None:
        self.answer = answer
        self.asked: list[tuple[str, str | None]] = []

    async def ask(
        self,
        call: ToolCall,
        signal: AbortSignal,
        reason: str = "",
        source: object = None,
        remember: str | None = None,
    ) -> Decision:
        self.asked.append((reason, remember))
        return self.answer


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    require_sandbox()
    opened = open_sandbox("workspace-write", tmp_path)
    yield opened
    opened.close()


def setup(
    root: Path,
    sandbox: Sandbox,
    mode: PermissionMode,
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
) -> tuple[PermissionPolicy, Run]:
    tools = default_tools(root, ProcessRegistry(), sandbox=sandbox)
    rules = [parse_rule("allow", t, "test") for t in allow] + [parse_rule("deny", t, "test") for t in deny]
    lookup = {tool.spec.name: tool for tool in tools}
    return PermissionPolicy(mode, RuleSet(rules), root, lookup.get), Run(tools)


async def judge(
    root: Path, sandbox: Sandbox, rule: str, hook: str, mode: PermissionMode, args: dict[str, object] = LEAVE
) -> tuple[str, Asker]:
    allow, deny = RULES[rule]
    policy, run = setup(root, sandbox, mode, allow, deny)
    asker = Asker()
    ruling = None if hook == "silent" else Ruling(hook, "the hook's reason", None)  # type: ignore[arg-type]
    ctx = ToolCallContext(ToolCall("c1", "bash", args), AbortSignal(), run, ruling=ruling)
    answer = await PermissionHook(policy, asker)(ctx)
    if asker.asked:
        return "asked", asker
    if isinstance(answer, Refusal):
        return ("refused by hook" if "pre_tool hook" in answer.reason else "refused by rule"), asker
    return ("let out" if isinstance(answer, ToolCallContext) and answer.unsandboxed else "run"), asker


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("rule", RULES)
async def test_R41_leaving_the_sandbox_through_the_one_precedence(
    tmp_path: Path, sandbox: Sandbox, rule: str, hook: str, mode: PermissionMode
) -> None:
    # R37/R41: deny rules of either word win; only bash-unsandboxed(...) or an answer lets it out: not
    # yolo, not a plain allow rule, not a hook's allow (hooks run inside the sandbox themselves)
    found, _ = await judge(tmp_path, sandbox, rule, hook, mode)
    assert found == EXPECTED[rule][hook]


async def test_R41_the_question_says_the_call_leaves_and_why(tmp_path: Path, sandbox: Sandbox) -> None:
    _, asker = await judge(tmp_path, sandbox, "none", "silent", "yolo")
    [(reason, remember)] = asker.asked
    assert reason == "it asks to run OUTSIDE the sandbox: it writes outside the workspace"
    assert remember == "bash-unsandboxed(touch made)"  # an "always" stores leaving, for exactly this


async def test_R41_an_always_answer_stores_the_unsandboxed_rule(tmp_path: Path, sandbox: Sandbox) -> None:
    policy, run = setup(tmp_path, sandbox, "ask")
    asker = Asker("always")
    permission = PermissionHook(policy, asker)
    ctx = ToolCallContext(ToolCall("c1", "bash", LEAVE), AbortSignal(), run)
    first = await permission(ctx)
    assert isinstance(first, ToolCallContext) and first.unsandboxed
    assert [r.text.text for r in policy.rules.allow] == ["bash-unsandboxed(touch made)"]
    again = await permission(ctx)  # the rule answers now: no second question
    assert isinstance(again, ToolCallContext) and again.unsandboxed and len(asker.asked) == 1


async def test_R41_rules_for_leaving_and_calls_that_stay_inside(tmp_path: Path, sandbox: Sandbox) -> None:
    inside: dict[str, object] = {"command": "touch made"}
    # bash-unsandboxed(...) allows the same command inside too; denying only leaving keeps it running inside
    assert (await judge(tmp_path, sandbox, "allow outside", "silent", "ask", inside))[0] == "run"
    assert (await judge(tmp_path, sandbox, "deny outside", "silent", "yolo", inside))[0] == "run"
    # with the sandbox off, sandbox: false asks for nothing more than the command itself
    policy, run = setup(tmp_path, Sandbox(build_policy("off", tmp_path)), "yolo")
    ctx = ToolCallContext(ToolCall("c1", "bash", LEAVE), AbortSignal(), run)
    assert await PermissionHook(policy, Asker())(ctx) is None


async def test_R41_a_leave_without_a_reason_is_refused_before_anyone_is_asked(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    _, run = setup(tmp_path, sandbox, "ask")
    blank = {"command": "touch made", "sandbox": False, "reason": "  "}
    for args in (blank, {"command": "touch made", "sandbox": False}):
        refusal = await leave_check(ToolCallContext(ToolCall("c1", "bash", args), AbortSignal(), run))
        assert refusal == Refusal(LEAVE_WITHOUT_REASON)
    assert await leave_check(ToolCallContext(ToolCall("c1", "bash", LEAVE), AbortSignal(), run)) is None


async def test_R41_the_tool_leaves_only_when_the_permission_step_let_it(
    tmp_path: Path, sandbox: Sandbox, outside: Path
) -> None:
    registry = ProcessRegistry()
    tool = BashTool(Workspace(tmp_path), registry, sandbox=sandbox)
    target = outside / "escaped"
    args = {"command": f"echo x > {shlex.quote(str(target))}", "sandbox": False, "reason": "test"}
    refused = await tool.run(args, ToolCallContext(ToolCall("c1", "bash", args), AbortSignal()))
    assert refused.is_error and refused.output.startswith("Not run:") and not target.exists()
    let_out = ToolCallContext(ToolCall("c1", "bash", args), AbortSignal(), unsandboxed=True)
    ran = await tool.run(args, let_out)
    assert not ran.is_error and target.read_text() == "x\n", ran.output
    assert ran.details[-1] == SandboxReport("off") and "ran outside the sandbox" in ran.output
    inside = await tool.run({"command": args["command"]}, let_out)  # the leave is for a call asking it
    assert inside.is_error and inside.details[-1].sandbox == "denied"  # type: ignore[union-attr]
    await registry.terminate_all(0.1)


def test_R41_the_way_out_is_offered_only_where_there_is_a_sandbox(tmp_path: Path, sandbox: Sandbox) -> None:
    registry = ProcessRegistry()
    confined = BashTool(Workspace(tmp_path), registry, sandbox=sandbox)
    assert {"sandbox", "reason"} <= set(confined.spec.parameters["properties"])
    assert "sandbox: false" in confined.spec.description
    plain = BashTool(Workspace(tmp_path), registry)
    assert set(plain.spec.parameters["properties"]) == {"command", "timeout"}
    assert "sandbox" not in plain.spec.description
