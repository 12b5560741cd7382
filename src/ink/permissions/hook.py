"""The pre-execution hook: the policy's verdict, the question to the user when it says "ask", and the
result the model sees when the answer is no (R4: a refused call gets an error result; the run goes on).

Answers: ``allow`` runs the call; ``always`` also remembers a rule (in memory at once, and in the
project's ``.ink/permissions.toml``); ``deny`` and ``timeout`` refuse it; ``cancelled`` (an abort while
the question was open) refuses it as not executed, and the run is ending anyway. Without anyone to ask
(print mode), a call that needs an answer is refused with a message naming the flag or rule that would
allow it, shown to the user as a warning and to the model as the call's result.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from ink.agent.abort import AbortSignal
from ink.agent.tool import Refusal
from ink.ai.messages import ToolCall
from ink.config.rules import parse_rule
from ink.permissions.memory import PermissionMemory
from ink.permissions.policy import PermissionPolicy, Verdict
from ink.redaction import Redactor
from ink.vocabulary import Decision

log = logging.getLogger(__name__)

CANCELLED = "Not executed: cancelled by the user while waiting for permission."
GIVE_UP = "Do not retry it or try to get around this; tell the user what you could not do."


class Asker(Protocol):
    """Puts a question to the user (``ink.run.permissions.PermissionBroker``)."""

    timeout_seconds: float | None

    async def ask(self, call: ToolCall, signal: AbortSignal, reason: str = "") -> Decision: ...


class PermissionHook:
    """A ``BeforeToolHook``. ``asker`` None: nobody can answer (print mode). ``notify`` shows the user a
    warning (a refusal in print mode, an "always" that could not be saved); what it shows passes through
    ``redact`` first, and an "always" rule that would hold a secret is kept for this process only."""

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

    async def __call__(self, call: ToolCall, signal: AbortSignal) -> Refusal | None:
        """Never raises for a refusal: it is returned. Cancel-safe: the broker answers an abort itself."""
        verdict = self.policy.check(call.name, call.arguments)
        if verdict.kind == "allow":
            return None
        if verdict.kind == "deny":
            rule = f"the permission rule {verdict.why}"
            return Refusal(f"Not executed: {verdict.what} is forbidden by {rule}. {GIVE_UP}")
        if self.asker is None:
            return self._nobody_to_ask(verdict)
        decision = await self.asker.ask(call, signal, verdict.why)
        return self._answered(decision, verdict)

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
