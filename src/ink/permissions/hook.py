"""The permission step: the pre_tool hooks' answer, the policy's layers, the one precedence that
combines them (``precedence.decide``, R37), the question to the user when it says "ask", and the result
the model sees when the answer is no (R4: a refused call gets an error result; the run goes on).

A pre_tool hook's ``updatedInput`` makes a new call: its arguments are checked against the tool's schema
(arguments it cannot take refuse the call with a warning: it never runs unchanged) and judged from the
start, deny rules included; the call then runs with them (the context of the new call goes on) and the
model is told.

Answers: ``allow`` runs the call; ``always`` also remembers a rule (in memory at once, and in the
project's ``.ink/permissions.toml``); ``deny`` and ``timeout`` refuse it; ``cancelled`` (an abort while
the question was open) refuses it as not executed, and the run is ending anyway. Without anyone to ask
(print mode), a call that needs an answer is refused with a message naming the flag or rule that would
allow it, shown to the user as a warning and to the model as the call's result.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from msgspec.structs import replace

from ink.agent.abort import AbortSignal
from ink.agent.events import Source
from ink.agent.tool import Refusal, Tool, ToolCallContext
from ink.agent.validation import validate_arguments
from ink.ai.messages import ToolCall
from ink.config.rules import parse_rule
from ink.permissions.memory import PermissionMemory
from ink.permissions.policy import PermissionPolicy
from ink.permissions.precedence import HookRuling, Verdict, decide
from ink.redaction import Redactor
from ink.vocabulary import Decision

log = logging.getLogger(__name__)

CANCELLED = "Not executed: cancelled by the user while waiting for permission."
GIVE_UP = "Do not retry it or try to get around this; tell the user what you could not do."
SHOWN_ARGUMENTS = 2000  # characters of a hook's changed arguments quoted to the model and the user


class Asker(Protocol):
    """Puts a question to the user (``ink.run.permissions.PermissionBroker``)."""

    timeout_seconds: float | None

    async def ask(
        self,
        call: ToolCall,
        signal: AbortSignal,
        reason: str = "",
        source: Source | None = None,
        remember: str | None = None,
    ) -> Decision: ...


class PermissionHook:
    """The permission step, last of the before-tool chain: it weighs the pre_tool hooks' answer
    (``ctx.ruling``) with the rules and the mode. ``asker`` None: nobody can answer (print mode).
    ``notify`` shows the user a warning (a refusal in print mode, an "always" that could not be saved, a
    hook's change to a call); what it shows passes through ``redact`` first, and an "always" rule that
    would hold a secret is kept for this process only."""

    def __init__(
        self,
        policy: PermissionPolicy,
        asker: Asker | None,
        *,
        memory: PermissionMemory | None = None,
        notify: Callable[[str], None] | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.policy = policy
        self.asker = asker
        self.memory = memory
        self.redact = redact or Redactor()
        self._show = notify or (lambda text: log.warning("%s", text))

    async def __call__(self, ctx: ToolCallContext) -> Refusal | ToolCallContext | None:
        """Never raises for a refusal: it is returned. Cancel-safe: the broker answers an abort itself.
        The call is judged by what its tool, among its run's, says of itself; a hook's changed arguments
        come back as the context of the new call, with a note for the model."""
        call, hooks = ctx.call, ctx.ruling
        ruling = HookRuling(hooks.decision, hooks.reason) if hooks is not None else None
        changed = hooks.updated_input if hooks is not None else None
        if changed is None or changed == dict(call.arguments):
            return await self._judge(ctx, ruling)
        problem = _unusable(ctx.tool, call.name, changed)
        if problem is not None:
            self.notify(
                f"refused the {call.name} call: a pre_tool hook changed its arguments to ones {problem}"
            )
            return Refusal(f"Not executed: a pre_tool hook changed this call's arguments to ones {problem}.")
        ctx = replace(ctx, call=replace(call, arguments=changed))  # a new call, judged from the start (R37)
        shown = _bounded(json.dumps(changed, ensure_ascii=False))
        judged = await self._judge(ctx, ruling)
        if isinstance(judged, Refusal):
            return judged
        self.notify(f"a pre_tool hook changed the {call.name} call; it runs as {shown}")
        note = f"a pre_tool hook changed this call's arguments; it ran as {shown}"
        return replace(judged or ctx, note=note)

    async def _judge(self, ctx: ToolCallContext, hook: HookRuling | None) -> Refusal | ToolCallContext | None:
        """None: it runs as it is; a context: it runs outside the sandbox, as it asked and was let."""
        call = ctx.call
        found = self.policy.assess(ctx.tool, call.name, call.arguments)
        verdict = decide(found, hook)
        let_out = replace(ctx, unsandboxed=True) if found.leaves_sandbox else None
        if verdict.kind == "allow":
            return let_out
        if verdict.kind == "deny" and verdict.by == "hook":
            return Refusal(f"Not executed: blocked by a pre_tool hook: {verdict.why}")
        if verdict.kind == "deny":
            rule = f"the permission rule {verdict.why}"
            return Refusal(f"Not executed: {verdict.what} is forbidden by {rule}. {GIVE_UP}")
        if self.asker is None:
            return self._nobody_to_ask(verdict)
        decision = await self.asker.ask(call, ctx.signal, verdict.why, ctx.source, remember=verdict.remember)
        refusal = self._answered(decision, verdict)
        return refusal if refusal is not None else let_out

    def _answered(self, decision: Decision, verdict: Verdict) -> Refusal | None:
        if decision == "allow":
            return None
        if decision == "always":
            self._remember(verdict)
            return None
        if decision == "cancelled":
            return Refusal(CANCELLED)
        if decision == "timeout":
            waited = self.asker.timeout_seconds if self.asker is not None else None
            after = f" within {waited:g} s" if waited else ""
            return Refusal(
                f"Not executed: the user did not answer the permission request for {verdict.what}{after}, "
                "so it was denied. " + GIVE_UP
            )
        return Refusal(
            f"Not executed: the user denied permission for {verdict.what}. Do not retry it unchanged; "
            "ask the user how to proceed, or find another way that does not need it."
        )

    def _remember(self, verdict: Verdict) -> None:
        if verdict.remember is None:
            return
        rule = parse_rule("allow", verdict.remember, "an 'always' answer")
        self.policy.rules.remember([rule])
        if self.memory is None:
            return
        if self.redact(verdict.remember) != verdict.remember:
            self.notify(
                f"did not save the permission {verdict.remember} to {self.memory.path}: it holds a secret, "
                "and that file is not the place for one; it holds for this session only"
            )
            return
        try:
            self.memory.add([verdict.remember])
        except OSError as exc:
            self.notify(
                f"could not save the permission {verdict.remember} to {self.memory.path} "
                f"({exc.strerror or exc}); it holds for this session only"
            )

    def notify(self, text: str) -> None:
        self._show(self.redact(text))

    def _nobody_to_ask(self, verdict: Verdict) -> Refusal:
        import shlex  # here: only a refusal that suggests a rule needs it

        if verdict.by == "hook":  # no rule or mode outranks a hook's ask: only an answer would do
            self.notify(f"refused {verdict.what}: {verdict.why}, and print mode cannot ask")
            return Refusal(
                f"Not executed: {verdict.what} needs the user's answer ({verdict.why}), and nobody can "
                "answer in this non-interactive run. " + GIVE_UP
            )

        ways = [f"--allow {shlex.quote(verdict.remember)}"] if verdict.remember else []
        if verdict.mode is not None:
            ways.append(f"--permission-mode {verdict.mode}")
        how = " or ".join(ways) if ways else "an allow rule"
        self.notify(
            f"refused {verdict.what}: it needs permission ({verdict.why}) and print mode cannot ask; "
            f"allow it with {how}, or with a rule in [permissions] allow of $INK_HOME/config.toml"
        )
        return Refusal(
            f"Not executed: {verdict.what} needs the user's permission ({verdict.why}), and nobody can "
            f"answer in this non-interactive run. The user can allow it by running ink with {how}. " + GIVE_UP
        )


def _unusable(tool: Tool | None, name: str, arguments: Mapping[str, Any]) -> str | None:
    """Why ``arguments`` cannot be given to ``tool`` (its schema refuses them), or None."""
    if tool is None:
        return f"no tool {name!r} can take"
    problem = validate_arguments(tool.spec.parameters, arguments)
    return None if problem is None else f"the tool cannot take ({problem})"


def _bounded(text: str) -> str:
    return text if len(text) <= SHOWN_ARGUMENTS else text[: SHOWN_ARGUMENTS - 1] + "…"
