"""A sub-agent as the editor sees it (R7): the ``task`` call it works for, updated with its
progress. Its tool calls are listed in the call's content as they start and end (``✓``/``✗``/``⏹``, the
running ones with ``…``), newest last and bounded, so the editor shows what it does, not one line that
keeps changing. The call's result, when the sub-agent is done, replaces the list (``updates.tool_result``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ink.agent.events import ToolEnd, ToolStart
from ink.frontends.acp import updates
from ink.frontends.acp.updates import Update
from ink.run.events import PermissionRequest, RunEvent

SHOWN_CALLS = 20  # the newest calls listed; older ones are counted


class SubAgentProgress:
    def __init__(self, title: Callable[[str, Mapping[str, Any]], str]) -> None:
        """``title``: a call's title as its tool describes it."""
        self._title = title
        self._calls: dict[str, dict[str, str]] = {}  # sub-agent id -> its calls, in order: id -> line
        self._kinds: dict[str, str] = {}

    def on_event(self, event: RunEvent) -> Update | None:
        """The ``tool_call_update`` of the task call this sub-agent event changes, or None."""
        source = event.source
        if source is None:
            return None
        calls = self._calls.setdefault(source.id, {})
        self._kinds[source.id] = source.agent
        match event:
            case ToolStart(tool_call_id=call_id, name=name, args=args):
                calls[call_id] = f"… {self._title(name, args)}"
            case ToolEnd(tool_call_id=call_id, result=result):
                mark = "⏹" if result.interrupted else "✗" if result.is_error else "✓"
                line = calls.get(call_id, f"… {result.name}")
                calls[call_id] = f"{mark} {line[2:]}"
            case PermissionRequest(name=name):
                return self._update(source.id, f"waiting for your answer: allow {name}?")
            case _:
                return None
        return self._update(source.id)

    def finished(self, call_id: str) -> None:
        """The task call ended: its result replaces the progress; forget it."""
        self._calls.pop(call_id, None)
        self._kinds.pop(call_id, None)

    def _update(self, agent_id: str, note: str = "") -> Update:
        calls = list(self._calls.get(agent_id, {}).values())
        earlier = len(calls) - SHOWN_CALLS
        head = f"{self._kinds.get(agent_id, 'sub')} sub-agent · {len(calls)} tool call" + (
            "s" if len(calls) != 1 else ""
        )
        lines = [head, *([f"({earlier} earlier)"] if earlier > 0 else []), *calls[-SHOWN_CALLS:]]
        if note:
            lines.append(note)
        content = [{"type": "content", "content": {"type": "text", "text": "\n".join(lines)}}]
        return updates.status_update(agent_id, "in_progress", content=content)
