"""A project's hooks are code from whoever wrote the repository: they run only after the user approved
them once (docs/hooks.md, docs/security.md).

The question goes through the same permission round trip as a tool call (every frontend can answer
it): *allow* runs them for this session, *always* also remembers the approval, *deny* (or no answer, or
nobody to ask: print mode) leaves them off for this session. An approval is kept like the remembered
permissions (``ink.store.trust``): by the digest of what it pins (R40, ``ink.config.pinning``): each
hook's event, command, matcher and timeout, the ``${VARS}`` it reads, and the content of the repository
files its command names (``bash .ink/h.sh``). The pins are taken again before the hooks run each time,
so a hook or a script changed since (a ``git pull``, mid-session too) is asked about again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from ink.agent.abort import AbortSignal
from ink.agent.events import Source
from ink.ai.messages import ToolCall
from ink.config.hooks import HookSpec
from ink.config.pinning import pin_command
from ink.store.trust import TrustRecord
from ink.vocabulary import ALLOWING

TRUST_FILE = "trusted-hooks.json"
APPROVAL_CALL_ID = "project-hooks"
APPROVAL_NAME = "project_hooks"


class Asker(Protocol):
    """Puts a question to the user (``ink.run.permissions.PermissionBroker``)."""

    async def ask(
        self, call: ToolCall, signal: AbortSignal, reason: str = "", source: Source | None = None
    ) -> str: ...


class ProjectHookApproval:
    def __init__(
        self,
        hooks: Sequence[HookSpec],
        ink_home: Path,
        asker: Asker | None,
        notify: Callable[[str], None],
        cwd: Path | None = None,
    ) -> None:
        self._hooks = [h for h in hooks if h.scope == "project"]
        self._record = TrustRecord(ink_home / TRUST_FILE)
        self._asker = asker
        self._notify = notify
        self._lock = asyncio.Lock()
        self._file = self._hooks[0].where.rsplit(":", 1)[0] if self._hooks else ""
        self._root = Path(self._file).parent.parent if self._file else Path.cwd()
        self._cwd = cwd or self._root
        self._decided: tuple[bytes, bool] | None = None  # for the pins of that time

    def _pins(self) -> tuple[bytes, list[str]]:
        """What an approval of the hooks covers now: its digest's data, and the lines that show it."""
        entries, shown = [], []
        for hook in self._hooks:
            pin = pin_command(hook.command, self._root, self._cwd)
            entries.append([hook.event, hook.command, hook.matcher, hook.timeout, pin.digest().decode()])
            shown += [f"{hook.event}: {line}" for line in pin.lines()[1:]]
        return json.dumps(entries).encode(), shown

    async def approved(self, signal: AbortSignal, source: Source | None = None) -> bool:
        """Whether the project's hooks may run now; asks once per session, and again when what the answer
        pinned changed (a hook, a script it names). The question carries ``source``: the sub-agent whose
        call needs the hooks (R7)."""
        if not self._hooks:
            return True
        async with self._lock:  # concurrent tool calls: one question
            data, shown = self._pins()
            if self._decided is None or self._decided[0] != data:
                decided = await self._decide(signal, data, shown, source)
                self._decided = None if decided is None else (data, decided)
                return bool(decided)
            return self._decided[1]

    async def _decide(
        self, signal: AbortSignal, data: bytes, pins: list[str], source: Source | None
    ) -> bool | None:
        """None: an abort ended the question; it is asked again next time, and nothing runs now."""
        if self._record.trusts(self._file, data):
            return True
        if self._asker is None:
            self._notify(
                f"not running the {len(self._hooks)} hook(s) of {self._file}: project hooks run only "
                "once you approved them (answer 'always' when ink asks in the terminal UI or over RPC)"
            )
            return False
        commands = [f"{h.event}: {h.command}" for h in self._hooks]
        args = {"file": self._file, "hooks": commands, "pins": pins}
        call = ToolCall(APPROVAL_CALL_ID, APPROVAL_NAME, args)
        why = f"{self._file} defines hooks: shell commands that would run on your machine"
        if pins:
            why += "; approving them also pins: " + "; ".join(pins)
        decision = await self._asker.ask(call, signal, why, source)
        if decision == "always":
            try:
                self._record.trust(self._file, data)
            except OSError as exc:
                self._notify(
                    f"could not remember the approval of {self._file}'s hooks ({exc.strerror or exc})"
                )
        if decision in ALLOWING:
            return True
        if decision == "cancelled":
            return None
        self._notify(f"the hooks of {self._file} stay off for this session ({decision})")
        return False
