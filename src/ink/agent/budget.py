"""What the loop asks of a budget (R45): at each safe point (before a model call, before a tool call
starts), whether a limit is used up. ``ink.run.budget.Budget`` keeps the counts; the loop only asks.

A budget ends a run at its next safe point, never mid-reply or mid-tool: the reply streaming and the
calls already running finish, a call that has not started is answered "not executed" and the run ends
with stop reason ``budget``, its queue handed back (R22).
"""

from __future__ import annotations

from typing import Literal, Protocol, TypeAlias

import msgspec

BudgetKind: TypeAlias = Literal["cost", "tokens", "time"]
BudgetScope: TypeAlias = Literal["run", "session"]
NOT_EXECUTED = "Not executed: the run stopped at its budget ({stop})."


class BudgetStop(msgspec.Struct, frozen=True):
    """A limit that is used up: what it limits, over which span, how much was used (None: unknown, a
    count that cannot be known) and the limit. ``why``: why the count is unknown."""

    kind: BudgetKind
    scope: BudgetScope
    used: float | None
    limit: float
    why: str | None = None

    def __str__(self) -> str:
        limit = amount(self.kind, self.limit)
        if self.used is None:
            why = f" ({self.why})" if self.why else ""
            return f"the {self.scope}'s {self.kind} is unknown{why}, so its limit of {limit} cannot be kept"
        return f"the {self.scope} used {amount(self.kind, self.used)} of its {self.kind} limit of {limit}"


class RunBudget(Protocol):
    def reached(self) -> BudgetStop | None:
        """The limit used up now, if any (the first of them). Cheap: asked at every safe point."""
        ...


def amount(kind: BudgetKind, value: float) -> str:
    """``$1.25``, ``12,345 tokens``, ``90 s``."""
    if kind == "cost":
        return f"${value:.2f}"
    if kind == "tokens":
        return f"{value:,.0f} tokens"
    return f"{value:.0f} s"
