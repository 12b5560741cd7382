"""The one precedence (R37, docs/permissions.md "Who decides"): deny rules > a hook's deny > a hook's allow
or ask > allow rules > the mode. The matrix crosses every kind of rule with every hook answer and every
mode, through the real permission hook, the real policy and the real bash tool's description of a call;
the expected outcome of each cell is written out, not computed."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from ink.agent.abort import AbortSignal
from ink.agent.tool import Refusal, Ruling, ToolCallContext
from ink.ai.messages import ToolCall
from ink.config.keys import PermissionMode
from ink.permissions import PermissionHook
from ink.permissions.precedence import Assessment, HookRuling, decide
from ink.vocabulary import Decision
from tests.permissions.helpers import call_context, policy

COMMAND = "touch made"
RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # (allow, deny) for each kind of rule
    "none": ((), ()),
    "allow": (("bash(touch *)",), ()),
    "deny": ((), ("bash(touch *)",)),
    "allow+deny": (("bash(touch *)",), ("bash(touch *)",)),
}
HOOKS = ("silent", "allow", "ask", "deny")
MODES: tuple[PermissionMode, ...] = ("ask", "accept-edits", "yolo")

# rule -> hook -> mode -> outcome: "run", "asked", "refused by rule", "refused by hook"
EXPECTED: dict[str, dict[str, tuple[str, str, str]]] = {
    "none": {
        "silent": ("asked", "asked", "run"),
        "allow": ("run", "run", "run"),
        "ask": ("asked", "asked", "asked"),
        "deny": ("refused by hook", "refused by hook", "refused by hook"),
    },
    "allow": {
        "silent": ("run", "run", "run"),
        "allow": ("run", "run", "run"),
        "ask": ("asked", "asked", "asked"),
        "deny": ("refused by hook", "refused by hook", "refused by hook"),
    },
    "deny": {hook: ("refused by rule",) * 3 for hook in HOOKS},  # type: ignore[misc]
    "allow+deny": {hook: ("refused by rule",) * 3 for hook in HOOKS},  # type: ignore[misc]
}


def said(decision: str | None, updated_input: dict[str, object] | None = None) -> Ruling:
    """What the pre_tool hooks said, as the step before the permission step hands it on."""
    return Ruling(decision, "the hook's reason", updated_input)  # type: ignore[arg-type]


class Recorder:
    """An asker that records each question and answers ``deny``."""

    timeout_seconds = None

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(
        self,
        call: ToolCall,
        signal: AbortSignal,
        reason: str = "",
        source: object = None,
        remember: str | None = None,
    ) -> Decision:
        self.asked.append(reason)
        return "deny"


async def outcome(root: Path, rule: str, hook: str, mode: PermissionMode, command: str = COMMAND) -> str:
    allow, deny = RULES[rule]
    asker = Recorder()
    permission = PermissionHook(policy(root, mode, allow, deny), asker)
    call = ToolCall("c1", "bash", {"command": command})
    refusal = await permission(call_context(root, call, said(None if hook == "silent" else hook)))
    if asker.asked:
        return "asked"
    if refusal is None:
        return "run"
    assert isinstance(refusal, Refusal)
    return "refused by hook" if "pre_tool hook" in refusal.reason else "refused by rule"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("rule", RULES)
async def test_the_precedence_matrix(tmp_path: Path, rule: str, hook: str, mode: PermissionMode) -> None:
    # R37: a deny rule wins over a hook's allow in every mode, yolo included; a hook's answer wins over
    # allow rules and the mode
    assert await outcome(tmp_path, rule, hook, mode) == EXPECTED[rule][hook][MODES.index(mode)]


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("mode", MODES)
async def test_a_deny_rule_ink_cannot_rule_out_outranks_every_hook(
    tmp_path: Path, hook: str, mode: PermissionMode
) -> None:
    # R37: `$(echo touch) x` might be `touch x`: it stands with the deny rules, refused in yolo and asked
    # otherwise; a hook's allow does not let it run without the user's answer
    expected = "refused by rule" if mode == "yolo" else ("refused by hook" if hook == "deny" else "asked")
    assert await outcome(tmp_path, "deny", hook, mode, "$(echo touch) made") == expected


def test_decide_is_a_pure_table() -> None:
    # R37: one function applies the order; the deny layer is read before any hook's answer
    found = Assessment(
        "the bash command `x`", "yolo", denied_by="bash(x)", rule_allows=True, mode_allows=True
    )
    for said in (None, "allow", "ask", "deny"):
        verdict = decide(found, HookRuling(said))  # type: ignore[arg-type]
        assert (verdict.kind, verdict.by, verdict.why) == ("deny", "deny rule", "bash(x)")
    open_call = Assessment("the bash command `x`", "ask")
    assert decide(open_call, HookRuling("allow")).by == "hook"
    assert decide(open_call).kind == "ask"
    assert decide(msgspec.structs.replace(open_call, rule_allows=True), HookRuling("ask")).kind == "ask"


async def test_a_hooks_changed_input_is_judged_again_from_the_start(tmp_path: Path) -> None:
    # R37: updatedInput is a new call: a deny rule on the new command refuses it, even in yolo and with
    # the hook's allow; a harmless change runs as changed, and the model is told
    async def to(command: str, decision: str = "allow") -> Refusal | ToolCallContext | None:
        permission = PermissionHook(policy(tmp_path, "yolo", deny=("bash(rm *)",)), None)
        call = ToolCall("c1", "bash", {"command": "ls"})
        return await permission(call_context(tmp_path, call, said(decision, {"command": command})))

    refused = await to("rm -rf made")
    assert isinstance(refused, Refusal) and "forbidden by the permission rule bash(rm *)" in refused.reason
    changed = await to("echo safe")
    assert isinstance(changed, ToolCallContext) and changed.call.arguments == {"command": "echo safe"}
    assert "echo safe" in changed.note


async def test_a_changed_input_the_tool_cannot_take_is_refused_with_a_warning(tmp_path: Path) -> None:
    # R37: never run unchanged, never run with arguments the schema refuses
    notes: list[str] = []

    permission = PermissionHook(policy(tmp_path, "yolo"), None, notify=notes.append)
    call = ToolCall("c1", "bash", {"command": "touch made"})
    refused = await permission(call_context(tmp_path, call, said("allow", {"cmd": "ls"})))
    assert isinstance(refused, Refusal) and "the tool cannot take" in refused.reason
    assert notes and "a pre_tool hook changed its arguments" in notes[0]
