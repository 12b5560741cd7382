"""Budgets (R45): what a run and the session may spend in cost, tokens and time, counted as ink goes,
checked by the loop at every safe point (``ink.agent.budget``).

Counted: every model call the usage totals count (``UsageTotals.add``: replies, sub-agents' included,
and compaction's summaries), priced per reply by its own model; tokens are input (cached or not) plus
output; time is the time runs took, a pause excepted (from ``run_start`` to ``run_end``, less the
spans between ``run_paused`` and ``run_resumed``). The session is this ink process: /clear does not
reset it. A run's counts start at its ``run_start``.

Unknown is never zero: under a cost limit, a reply whose price cannot be known (a model without known
prices, a service that reported no token counts) uses the limit up, and the run ends at its next safe
point saying why. A cost limit with an unpriced model is refused before that: at start (``ink.cli``) and
at a switch of model (``App.switch_model``).

At 80 % of a limit a ``budget_warning`` is emitted, once per limit (a run's: once per run); at 100 % the
loop ends the run with stop reason ``budget``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from ink.agent.budget import BudgetKind, BudgetScope, BudgetStop, amount
from ink.agent.events import RunPaused, RunResumed
from ink.ai.messages import Usage
from ink.ai.models import lookup
from ink.config.limits import Limits, LimitSettings
from ink.run.events import BudgetWarning, RunEnd, RunEvent, RunStart

WARN_AT = 0.8
KINDS: tuple[BudgetKind, ...] = ("cost", "tokens", "time")


class Span:
    """What one scope used so far: cost (of the priced calls), tokens, seconds (a clock that runs only
    while a run goes on unpaused), and why a count is unknown, if it is."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.cost = 0.0
        self.tokens = 0
        self.unknown_cost: str | None = None  # why the cost is unknown (a model without prices)
        self.unknown_tokens: str | None = None  # the service reported no counts
        self._seconds = 0.0
        self._since: float | None = None

    def add(self, usage: Usage, model: str) -> None:
        self.tokens += usage.context_tokens
        if usage.accuracy == "missing":
            self.unknown_tokens = self.unknown_tokens or "the service did not report its token counts"
        if usage.cost_usd is None:
            self.unknown_cost = self.unknown_cost or f"{model} has no known prices"
        else:
            self.cost += usage.cost_usd

    @property
    def seconds(self) -> float:
        running = self._clock() - self._since if self._since is not None else 0.0
        return self._seconds + running

    def clock(self, running: bool) -> None:
        if running and self._since is None:
            self._since = self._clock()
        elif not running and self._since is not None:
            self._seconds += self._clock() - self._since
            self._since = None

    def used(self, kind: BudgetKind) -> tuple[float | None, str | None]:
        """How much of ``kind`` was used (None: unknown), and why unknown."""
        if kind == "cost":
            return (None, self.unknown_cost) if self.unknown_cost else (self.cost, None)
        if kind == "tokens":
            return (None, self.unknown_tokens) if self.unknown_tokens else (float(self.tokens), None)
        return self.seconds, None


class Budget:
    """Subscribe ``on_event`` to the app's events and ``count`` to its usage totals; the loop asks
    ``reached`` (``LoopSetup.budget``). ``emit``: where ``budget_warning`` goes."""

    def __init__(
        self,
        limits: LimitSettings,
        emit: Callable[[RunEvent], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self._emit = emit
        self._clock = clock
        self.session = Span(clock)
        self.run = Span(clock)
        self._running = self._paused = False
        self._warned: set[tuple[BudgetScope, BudgetKind]] = set()

    # -- counting ----------------------------------------------------------------------------------

    def count(self, usage: Usage, model: str) -> None:
        """One model call, priced (``UsageTotals.add`` calls this)."""
        self.run.add(usage, model)
        self.session.add(usage, model)
        self._warn()

    def on_event(self, event: RunEvent) -> None:
        if event.source is not None:
            return  # a sub-agent's pause holds it alone: the run's clock goes on
        match event:
            case RunStart():
                self.run = Span(self._clock)
                self._warned = {w for w in self._warned if w[0] == "session"}
                self._running = True
            case RunEnd():
                self._running = False
            case RunPaused():
                self._paused = True
            case RunResumed():
                self._paused = False
            case _:
                return
        ticking = self._running and not self._paused
        self.run.clock(ticking)
        self.session.clock(ticking)

    # -- checking ----------------------------------------------------------------------------------

    def reached(self) -> BudgetStop | None:
        """The first limit used up (the session's before the run's), else None; warns at 80 % of time
        limits too (time has no event of its own)."""
        self._warn()
        for scope, kind, span, limit in self._limits():
            used, why = span.used(kind)
            if used is None or used >= limit:
                return BudgetStop(kind, scope, used, limit, why)
        return None

    def model_problem(self, model: str) -> str | None:
        """Why ``model`` cannot run under these limits: a cost limit needs a model with known prices."""
        return unpriced_problem(self.limits, model)

    def state(self) -> list[dict[str, object]]:
        """Each limit set, with what was used (None: unknown): RPC ``get_state.budget``."""
        return [
            {"scope": scope, "kind": kind, "used": span.used(kind)[0], "limit": limit}
            for scope, kind, span, limit in self._limits()
        ]

    def report(self) -> list[tuple[str, str]]:
        """Each scope and kind with what it used and its limit: ``("run cost", "$0.42 of $1.00 (42 %)")``
        (``/budget``)."""
        rows = []
        for scope, span, limits in self._scopes():
            for kind in KINDS:
                limit = _limit(limits, kind)
                used, why = span.used(kind)
                shown = f"unknown ({why})" if used is None else amount(kind, used)
                if limit is not None:
                    share = f" ({used / limit:.0%})" if used is not None and limit else ""
                    shown = f"{shown} of {amount(kind, limit)}{share}"
                rows.append((f"{scope} {kind}", shown if limit is not None else f"{shown} · no limit"))
        return rows

    def _warn(self) -> None:
        for scope, kind, span, limit in self._limits():
            used, _ = span.used(kind)
            if used is None or used < WARN_AT * limit or (scope, kind) in self._warned:
                continue
            self._warned.add((scope, kind))
            self._emit(BudgetWarning(kind, scope, round(used, 6), limit))

    def _scopes(self) -> tuple[tuple[BudgetScope, Span, Limits], ...]:
        return (("session", self.session, self.limits.session), ("run", self.run, self.limits.run))

    def _limits(self) -> Iterator[tuple[BudgetScope, BudgetKind, Span, float]]:
        """Each limit set, the session's first: its scope, what it limits, the span counting it."""
        for scope, span, limits in self._scopes():
            for kind in KINDS:
                limit = _limit(limits, kind)
                if limit is not None:
                    yield scope, kind, span, limit


def unpriced_problem(limits: LimitSettings, model: str) -> str | None:
    """The refusal of a cost limit with a model whose prices ink does not know (R45), or None."""
    if not limits.cost_limited or lookup(model).input_price is not None:
        return None
    return (
        f"a cost limit ({limits.cost_origin()}) needs a model with known prices, and ink does not know "
        f"the prices of {model}: its cost would be unknown, never zero. Remove the cost limit, limit "
        "tokens or time instead (--max-tokens, --max-time), or choose a priced model ('ink models')"
    )


def warning_text(event: BudgetWarning) -> str:
    """``the session used $4.02 of its cost limit of $5.00 (80 %): ...``, for every frontend."""
    share = f"{event.used / event.limit:.0%}" if event.limit else ""
    return (
        f"the {event.scope} used {amount(event.kind, event.used)} of its {event.kind} limit of "
        f"{amount(event.kind, event.limit)} ({share}); at the limit the run stops at its next safe point"
    )


def _limit(limits: Limits, kind: BudgetKind) -> float | None:
    value = {"cost": limits.max_cost_usd, "tokens": limits.max_tokens, "time": limits.max_seconds}[kind]
    return float(value) if value is not None else None
