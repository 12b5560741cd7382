"""The sub-agents running now (``SubAgents``), by id: what per-sub-agent run control addresses (stop one,
steer one; RPC ``abort``/``steer`` with ``source``, the TUI's agent panel). The ``task`` tool
(``ink.extend.task``) adds each while it runs.
"""

from __future__ import annotations

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.events import Source


class RunningAgent(msgspec.Struct):
    """A sub-agent running now: its source tag, its abort signal and what was sent to it."""

    source: Source
    signal: AbortSignal
    inbox: list[str] = msgspec.field(default_factory=list)


class SubAgents:
    """The sub-agents running now, by id: what per-sub-agent run control addresses."""

    def __init__(self) -> None:
        self.running: dict[str, RunningAgent] = {}

    def abort(self, agent_id: str) -> bool:
        """Stop one sub-agent; its parent run goes on. False when no such sub-agent runs."""
        agent = self.running.get(agent_id)
        if agent is None:
            return False
        agent.signal.abort("user")
        return True

    def steer(self, agent_id: str, text: str) -> bool:
        """Give one sub-agent a message, taken before its next model call (R9). False when not running."""
        agent = self.running.get(agent_id)
        if agent is None or agent.signal.aborted:
            return False
        agent.inbox.append(text)
        return True
