"""Permissions and safety: what a tool call may do without asking, asking when it must, and keeping
secrets out of what ink writes.

    hook = build_permission_hook(settings, controller.permissions, notify=...)   # TUI, RPC
    hook = build_permission_hook(settings, None, notify=...)    # print mode: nobody asks
    setup = msgspec.structs.replace(setup, before_tool=(..., hook))   # the last step of the chain

``policy`` says what the mode and the rules find for a call (from the workspace and what each tool says
of itself: its kind, the paths or command of a call; the call's context names its tool); ``precedence``
combines that with the pre_tool hooks' answer (``ToolCallContext.ruling``), the one place the order is
applied (R37); ``shell`` reads
commands with a real parser; ``rules`` matches patterns; ``memory`` keeps "always" answers per project;
``hook`` asks through the run controller's broker. docs/permissions.md and docs/security.md describe it
for users.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ink.config import Settings
from ink.permissions.hook import Asker, PermissionHook
from ink.permissions.memory import PermissionMemory
from ink.permissions.policy import PermissionPolicy, Verdict
from ink.permissions.rules import RuleSet
from ink.redaction import Redactor

log = logging.getLogger(__name__)

__all__ = [
    "Asker",
    "PermissionHook",
    "PermissionMemory",
    "PermissionPolicy",
    "RuleSet",
    "Verdict",
    "build_permission_hook",
]


def build_permission_hook(
    settings: Settings,
    asker: Asker | None,
    *,
    notify: Callable[[str], None] | None = None,
) -> PermissionHook:
    """The hook for ``settings``: its mode, its rules (flags, the project's denies, the user's), and this
    project's remembered answers. ``asker`` None means nobody can answer (print mode). A remembered-answers
    file ink will not use is reported through the log (a warning), never an error. The pre_tool hooks'
    answer reaches it with each call (``ToolCallContext.ruling``), weighed with the rules and the mode
    (R37)."""
    memory = PermissionMemory(settings.cwd, settings.ink_home)
    remembered, warning = memory.load()
    if warning is not None:
        log.warning("%s", warning)
    rules = RuleSet([*settings.permission_rules, *remembered])
    policy = PermissionPolicy(settings.permission_mode, rules, settings.cwd)
    redact = Redactor(settings.secrets)
    return PermissionHook(policy, asker, memory=memory, notify=notify, redact=redact)
