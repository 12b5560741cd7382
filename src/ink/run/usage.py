"""Usage and cost totals per run and per session, fed by run events.

Cost comes from the model catalogue, per reply and its own model. A reply of a model without known
prices makes the total's cost unknown (None), never a silent zero.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from msgspec.structs import replace

from ink.agent.events import MessageEnd
from ink.ai.messages import Usage
from ink.ai.models import priced
from ink.run.events import RunStart


class UsageTotals:
    """Subscribe ``on_event`` to the controller; read ``run``/``session`` and their costs. The costs are
    the sums of each reply's ``Usage.cost_usd`` (priced once, by ``ink.ai.models.priced``)."""

    def __init__(self, session: Usage | None = None, session_cost: float | None = 0.0) -> None:
        """``session``/``session_cost``: what a resumed session had used before (``LoadedSession``)."""
        self.session = replace(session or Usage(), cost_usd=session_cost)
        self.run = Usage()
        # What the priced calls of the session cost, when some call's price is unknown (the session's
        # cost is then None): a switch from an unpriced model to a priced one still counts.
        self.known_cost = session_cost or 0.0
        # The calls this process made for the session (/cost): per model, and the sub-agents' share.
        self.models: dict[str, ModelUsage] = {}
        self.sub_agents = ModelUsage()
        self.counters: list[Callable[[Usage, str], None]] = []  # told each call, priced (the budget)

    @property
    def session_cost(self) -> float | None:
        return self.session.cost_usd

    @property
    def run_cost(self) -> float | None:
        return self.run.cost_usd

    def on_event(self, event: object) -> None:
        if isinstance(event, RunStart):
            self.run = Usage()
        elif isinstance(event, MessageEnd):
            self.add(event.usage, event.message.model, sub_agent=event.source is not None)

    def add(self, usage: Usage, model: str, *, sub_agent: bool = False) -> None:
        """Count one model call (also the ones that are not conversation messages, like a summary);
        ``sub_agent``: a sub-agent's call (R7), counted in its run's too."""
        usage = priced(usage, model)
        self.run += usage
        self.session += usage
        self.known_cost += usage.cost_usd or 0.0
        self.models[model] = self.models.get(model, ModelUsage()).plus(usage)
        if sub_agent:
            self.sub_agents = self.sub_agents.plus(usage)
        for counter in self.counters:
            counter(usage, model)

    def new_session(self) -> None:
        self.session = Usage()
        self.known_cost = 0.0
        self.models = {}
        self.sub_agents = ModelUsage()


class ModelUsage(msgspec.Struct, frozen=True):
    """The sum of some model calls and how many there were."""

    usage: Usage = Usage()
    calls: int = 0

    def plus(self, usage: Usage) -> ModelUsage:
        return ModelUsage(self.usage + usage, self.calls + 1)
