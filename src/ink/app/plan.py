"""The session's plan as it stands (docs/plans.md): the last ``plan_update`` of the top-level run, or,
before any, the one the session file recorded (a resumed session shows its plan again). A part of the
app, so every frontend asks the same keeper: the terminal UI draws it on start, RPC's ``get_state``
returns it, ACP's ``session/load`` replays it. Another session opened (``/new``, ``/resume``) brings its
own plan, or none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from ink.agent.events import PLAN_STATUSES, PlanEntry, PlanUpdate
from ink.app.service import AppPart
from ink.run.hub import EventHub
from ink.store.current import CurrentSession

if TYPE_CHECKING:  # only named: importing it brings the session store a run without a session never uses
    from ink.store.session import SessionHandle


class PlanKeeper(AppPart):
    name = "the plan"

    def __init__(self, events: EventHub, session: CurrentSession) -> None:
        self.plan: PlanUpdate | None = None
        self._opened(session.handle)
        session.on_switch(self._opened)
        events.subscribe(self._on_event)

    def _on_event(self, event: object) -> None:
        if isinstance(event, PlanUpdate) and event.source is None:
            self.plan = event

    def _opened(self, handle: SessionHandle | None) -> None:
        loaded = handle.loaded if handle is not None else None
        self.plan = recorded_plan(loaded.plan) if loaded is not None and loaded.plan else None

    async def aclose(self) -> None:
        return None


def recorded_plan(fields: Mapping[str, Any]) -> PlanUpdate | None:
    """A plan as a session file recorded it; None when it is not one (a file edited by hand)."""
    try:
        entries = tuple(
            PlanEntry(str(item["content"]), item["status"])
            for item in fields.get("entries", ())
            if isinstance(item, dict) and item.get("status") in PLAN_STATUSES
        )
    except (KeyError, TypeError):
        return None
    explanation = fields.get("explanation")
    if not entries:
        return None
    return PlanUpdate(entries, explanation if isinstance(explanation, str) else None)


def plan_json(plan: PlanUpdate | None) -> dict[str, Any] | None:
    """``{entries, explanation?}`` of ``plan``, for a protocol's answer (RPC ``get_state.plan``)."""
    if plan is None:
        return None
    fields = msgspec.to_builtins(plan)
    return {key: fields[key] for key in ("entries", "explanation") if fields.get(key) is not None}
