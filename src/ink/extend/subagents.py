"""The sub-agents running now (``SubAgents``), by id: what per-sub-agent run control addresses (stop one,
steer one, pause one; RPC ``abort``/``steer``/``pause``/``resume`` with ``source``, the TUI's agent
panel). The ``task`` tool (``ink.extend.task``) adds each while it runs.
"""

from __future__ import annotations

import msgspec

from ink.agent.abort import AbortSignal
from ink.agent.events import AgentEvent, Emit, RunPaused, RunResumed, Source
from ink.agent.pause import PauseGate


def _drop(_event: AgentEvent) -> None:
    return None


class RunningAgent(msgspec.Struct):
    """A sub-agent running now: its source tag, its abort signal, what was sent to it, its pause gate (a
    child of its parent run's, R44) and the emit its events go out through (tagged with ``source``)."""

    source: Source
    signal: AbortSignal
    inbox: list[str] = msgspec.field(default_factory=list)
    pause: PauseGate = msgspec.field(default_factory=PauseGate)
    emit: Emit = _drop


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

    def pause(self, agent_id: str) -> bool | None:
        """Hold one sub-agent at its next safe point (R44); its parent and siblings go on. None when no
        such sub-agent runs; False when it was paused already."""
        agent = self._live(agent_id)
        if agent is None:
            return None
        if not agent.pause.pause():
            return False
        agent.emit(RunPaused())
        return True

    def resume(self, agent_id: str) -> bool | None:
        """Lift one sub-agent's own pause (a pause of its parent run still holds it). None when no such
        sub-agent runs; False when it was not paused."""
        agent = self._live(agent_id)
        if agent is None:
            return None
        if not agent.pause.resume():
            return False
        agent.emit(RunResumed("resume"))
        return True

    def paused(self) -> list[str]:
        """The ids of the running sub-agents paused on their own."""
        return [agent_id for agent_id, agent in self.running.items() if agent.pause.paused]

    def _live(self, agent_id: str) -> RunningAgent | None:
        agent = self.running.get(agent_id)
        return None if agent is None or agent.signal.aborted else agent
