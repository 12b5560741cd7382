"""``/agents``: run control of one sub-agent from the TUI.

``/agents`` lists the running sub-agents; ``/agents N`` picks one (its nested line opens, as Ctrl+T
does); ``/agents stop [N]`` stops it alone, and the parent run goes on with its honest, interrupted
result; ``/agents steer [N] TEXT`` gives it a message, taken before its next model call; ``/agents pause
[N]`` holds it alone at its next safe point (R44), ``/agents resume [N]`` lets it go on. Without ``N``
the picked one is meant. The work is done by the app's ``SubAgents``, the same calls RPC's ``steer`` and
``abort``/``pause``/``resume`` with a ``source`` make.
"""

from __future__ import annotations

from typing import Protocol

from ink.frontends.tui.blocks import Block, sanitize
from ink.frontends.tui.subagents import SubAgentLine, SubAgentLines


class SubAgents(Protocol):
    """The app's running sub-agents (``App.agents``), as this command uses them; named by shape, as
    only the wiring knows the ``task`` tool."""

    def abort(self, agent_id: str) -> bool: ...

    def steer(self, agent_id: str, text: str) -> bool: ...

    def pause(self, agent_id: str) -> bool | None: ...

    def resume(self, agent_id: str) -> bool | None: ...


USAGE = "/agents [N] · /agents stop|pause|resume [N] · /agents steer [N] TEXT"
VERBS = ("stop", "steer", "pause", "resume")


def agents_command(lines: SubAgentLines, control: SubAgents, args: str) -> Block:
    """Run ``/agents ARGS``; the one block it prints."""
    verb, _, rest = args.strip().partition(" ")
    if not verb:
        return _listing(lines)
    if verb.isdecimal():
        line = lines.by_number(int(verb))
        if line is None:
            return _none(verb)
        lines.selected = line.agent_id
        return Block("info", f"{line.label()} picked: /agents steer TEXT or /agents stop")
    if verb not in VERBS:
        return Block("error", f"usage: {USAGE}")
    number, _, text = rest.strip().partition(" ")
    if number.isdecimal():  # a number names that sub-agent: one that does not run is never another
        line = lines.by_number(int(number))
        if line is None:
            return _none(number)
    else:
        line, text = lines.running.get(lines.selected or ""), rest.strip()
    if line is None:
        return Block("error", "no sub-agent picked: name one by number (/agents lists them) or ctrl+t")
    if verb in ("pause", "resume"):
        return _hold(line, control, verb)
    return _stop(line, control) if verb == "stop" else _steer(line, control, text)


def _listing(lines: SubAgentLines) -> Block:
    if not lines.running:
        return Block("info", "no sub-agent is running")
    rows = [
        f"{'▸' if line.agent_id == lines.selected else ' '} {line.label()} · {sanitize(line.activity)}"
        for line in sorted(lines.running.values(), key=lambda line: line.number)
    ]
    return Block("output", "\n".join([*rows, f"({USAGE})"]))


def _stop(line: SubAgentLine, control: SubAgents) -> Block:
    if not control.abort(line.agent_id):
        return Block("error", f"{line.label()} is no longer running")
    line.stopping = True
    line.activity = "stopping"
    return Block("interrupted", f"⏹ stopping {line.label()}: the run goes on with what it did so far")


def _steer(line: SubAgentLine, control: SubAgents, text: str) -> Block:
    if not text:
        return Block("error", f"usage: /agents steer {line.number} TEXT")
    if not control.steer(line.agent_id, text):
        return Block("error", f"{line.label()} is no longer running")
    return Block("user", f"→ {line.label()}: {sanitize(text)}")


def _hold(line: SubAgentLine, control: SubAgents, verb: str) -> Block:
    """Pause one sub-agent alone (its parent and siblings go on), or lift its pause."""
    changed = control.pause(line.agent_id) if verb == "pause" else control.resume(line.agent_id)
    if changed is None:
        return Block("error", f"{line.label()} is no longer running")
    if not changed:
        return Block("info", f"{line.label()} is {'already' if verb == 'pause' else 'not'} paused")
    if verb == "pause":
        return Block("info", f"⏸ pausing {line.label()}: it holds at its next safe point; /agents resume")
    return Block("info", f"▶ {line.label()} resumed")


def _none(number: str) -> Block:
    return Block("error", f"no running sub-agent [{number}] (/agents lists them)")
