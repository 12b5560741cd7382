"""The one precedence that decides a tool call (R37, docs/permissions.md "Who decides"):

    deny rules  >  a hook's deny  >  a hook's allow (or ask)  >  allow rules  >  the mode

``decide`` is the only place it is applied: the policy (``policy``) says what each layer finds for a call
(``Assessment``), a pre_tool hook's answer comes as a ``HookRuling``, and ``decide`` combines them, a pure
function tested as a table (tests/permissions/test_precedence.py). Nothing above a layer can be undone
by a layer below it: a hook's allow never runs a call a deny rule forbids, whatever the mode (yolo
included), an "always" answer (an allow rule) or a sub-agent's type says.

A call that asks to leave the sandbox (R41) runs only by an allow rule meant for that
(``bash-unsandboxed(...)``) or the user's answer: no mode lets it out (yolo included), nor a hook's allow
(a hook runs inside the sandbox itself, and must not be able to open it); deny rules and a hook's deny
or ask hold as for any call.

A deny rule that cannot be ruled out (a computed command name, a shell reading code from its input:
``shell``) stands with the deny rules: it refuses the call in yolo, where nobody is asked, and asks in the
other modes; neither a hook nor an allow rule can let such a call run without the user's answer.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from ink.config.keys import PermissionMode
from ink.vocabulary import Verdict as VerdictKind

DecidedBy: TypeAlias = Literal["deny rule", "hook", "allow rule", "mode", "user"]
"""Which layer decided: ``deny rule`` (a deny rule, or one ink cannot rule out), ``hook`` (a pre_tool
hook's answer), ``allow rule``, ``mode`` (the mode and the tool's kind), ``user`` (nobody decided: ask)."""


class Verdict(msgspec.Struct, frozen=True):
    """``why``: for ``deny`` the rule or the hook's reason, for ``ask`` what needs the user. ``what``: the
    call in words ("the bash command `make`"). ``remember``: the rule an "always" answer adds. ``mode``:
    the least permissive mode that would have allowed it, when a mode would (for print mode's advice).
    ``by``: the layer that decided (``DecidedBy``)."""

    kind: VerdictKind
    what: str = ""
    why: str = ""
    remember: str | None = None
    mode: PermissionMode | None = None
    by: DecidedBy = "mode"


ALLOW = Verdict("allow")


class Assessment(msgspec.Struct, frozen=True):
    """What the rules and the mode find for one call, layer by layer, before any hook is heard.

    ``denied_by``: the label of a deny rule that matches. ``doubted_by``: a deny rule ink cannot rule out,
    with why. ``rule_allows``: allow rules cover the whole call. ``mode_allows``: the mode and the tool's
    kind let it run without a rule. ``why``/``remember``/``least_mode``: for the question when it asks.
    ``leaves_sandbox``: the call asks to run outside the sandbox, so only an allow rule or the user lets
    it (the policy then says no mode allows it)."""

    what: str
    mode: PermissionMode
    denied_by: str | None = None
    doubted_by: str | None = None
    rule_allows: bool = False
    mode_allows: bool = False
    why: str = ""
    remember: str | None = None
    least_mode: PermissionMode | None = None
    leaves_sandbox: bool = False


class HookRuling(msgspec.Struct, frozen=True):
    """What the pre_tool hooks said of a call: ``decision`` None when they said nothing."""

    decision: VerdictKind | None = None
    reason: str = ""


def decide(found: Assessment, hook: HookRuling | None = None) -> Verdict:
    """The verdict on a call: the first layer of the precedence that has something to say decides."""
    said = hook.decision if hook is not None else None
    reason = hook.reason if hook is not None else ""
    if found.denied_by is not None:
        return Verdict("deny", found.what, found.denied_by, by="deny rule")
    doubt = f"the rule {found.doubted_by}" if found.doubted_by is not None else None
    if doubt is not None and found.mode == "yolo":
        return Verdict("deny", found.what, found.doubted_by or "", by="deny rule")
    if said == "deny":
        return Verdict("deny", found.what, reason or "a pre_tool hook refused it", by="hook")
    if doubt is not None:  # only the user's answer may run it: neither a hook nor an allow rule
        return Verdict("ask", found.what, doubt, by="deny rule")
    if said == "allow" and not found.leaves_sandbox:
        return Verdict("allow", found.what, by="hook")
    if said == "ask":
        why = f"a pre_tool hook asks you: {reason}" if reason else "a pre_tool hook asks for your approval"
        return Verdict("ask", found.what, why, found.remember, by="hook")
    if found.rule_allows:
        return Verdict("allow", found.what, by="allow rule")
    if found.mode_allows and not found.leaves_sandbox:
        return Verdict("allow", found.what, by="mode")
    return Verdict("ask", found.what, found.why, found.remember, found.least_mode, by="user")
