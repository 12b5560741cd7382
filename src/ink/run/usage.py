"""Usage and cost totals per run and per session, fed by run events.

Cost comes from the model catalogue, per reply and its own model. A reply of a model without known
prices makes the total's cost unknown (None), never a silent zero.
"""

from __future__ import annotations

from ink.agent.events import MessageEnd
from ink.ai.messages import Usage
from ink.ai.models import cost
from ink.run.events import RunStart


def _add_cost(total: float | None, extra: float | None) -> float | None:
    return None if total is None or extra is None else total + extra


class UsageTotals:
    """Subscribe ``on_event`` to the controller; read ``run``/``session`` and their costs."""

    def __init__(self, session: Usage | None = None, session_cost: float | None = 0.0) -> None:
        """``session``/``session_cost``: what a resumed session had used before (``LoadedSession``)."""
        self.session = session if session is not None else Usage()
        self.session_cost: float | None = session_cost
        self.run = Usage()
        self.run_cost: float | None = 0.0

    def on_event(self, event: object) -> None:
        if isinstance(event, RunStart):
            self.run, self.run_cost = Usage(), 0.0
        elif isinstance(event, MessageEnd):
            self.add(event.usage, event.message.model)

    def add(self, usage: Usage, model: str) -> None:
        """Count one model call (also the ones that are not conversation messages, like a summary)."""
        price = cost(usage, model) if _counts(usage) else 0.0
        self.run += usage
        self.session += usage
        self.run_cost = _add_cost(self.run_cost, price)
        self.session_cost = _add_cost(self.session_cost, price)

    def new_session(self) -> None:
        self.session, self.session_cost = Usage(), 0.0


def _counts(usage: Usage) -> bool:
    """A call that used no tokens (an aborted reply before anything arrived) costs nothing, known or not."""
    return bool(
        usage.input_tokens or usage.output_tokens or usage.cache_read_tokens or usage.cache_write_tokens
    )
