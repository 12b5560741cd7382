"""A project's hooks are code from whoever wrote the repository: they run only after the user approved
them once (docs/hooks.md, docs/security.md).

The question goes through the same permission round trip as a tool call (every frontend can answer
it): *allow* runs them for this session, *always* also remembers the approval, *deny* (or no answer, or
nobody to ask: print mode) leaves them off for this session. An approval is kept like the remembered
permissions (``ink.store.trust``): by the digest of the hooks, so a changed hook is asked about again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from ink.agent.abort import AbortSignal
from ink.ai.messages import ToolCall
from ink.config.hooks import HookSpec
from ink.store.trust import TrustRecord
from ink.vocabulary import ALLOWING

TRUST_FILE = "trusted-hooks.json"
APPROVAL_CALL_ID = "project-hooks"
APPROVAL_NAME = "project_hooks"


class Asker(Protocol):
    """Puts a question to the user (``ink.run.permissions.PermissionBroker``)."""

    async def ask(self, call: ToolCall, signal: AbortSignal, reason: str = "") -> str: ...


class ProjectHookApproval:
    def __init__(
        self,
        hooks: Sequence[HookSpec],
        ink_home: Path,
        asker: Asker | None,
        notify: Callable[[str], None],
    ) -> None:
        self._hooks = [h for h in hooks if h.scope == "project"]
        self._record = TrustRecord(ink_home / TRUST_FILE)
        self._asker = asker
        self._notify = notify
        self._decided: bool | None = None if self._hooks else True
        self._lock = asyncio.Lock()
        self._file = self._hooks[0].where.rsplit(":", 1)[0] if self._hooks else ""
        self._data = json.dumps([[h.event, h.command, h.matcher, h.timeout] for h in self._hooks]).encode()

    async def approved(self, signal: AbortSignal) -> bool:
        """Whether the project's hooks may run; asks once per session when nothing was remembered."""
        if self._decided is not None:
            return self._decided
        async with self._lock:  # concurrent tool calls: one question
            if self._decided is None:
                self._decided = await self._decide(signal)
        return bool(self._decided)

    async def _decide(self, signal: AbortSignal) -> bool | None:
        """None: an abort ended the question; it is asked again next time, and nothing runs now."""
        if self._record.trusts(self._file, self._data):
            return True
        if self._asker is None:
            self._notify(
                f"not running the {len(self._hooks)} hook(s) of {self._file}: project hooks run only "
                "once you approved them (answer 'always' when ink asks in the terminal UI or over RPC)"
            )
            return False
        commands = [f"{h.event}: {h.command}" for h in self._hooks]
        call = ToolCall(APPROVAL_CALL_ID, APPROVAL_NAME, {"file": self._file, "hooks": commands})
        why = f"{self._file} defines hooks: shell commands that would run on your machine"
        decision = await self._asker.ask(call, signal, why)
        if decision == "always":
            try:
                self._record.trust(self._file, self._data)
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
