"""``/budget`` (R45): what the session and the run used of each limit, and the warnings and stops as the
scrollback says them. The counting is ``ink.run.budget.Budget``'s (the app's, None without limits)."""

from __future__ import annotations

from ink.frontends.tui.blocks import Block, sanitize
from ink.run import events as ev
from ink.run.budget import Budget, warning_text

NO_LIMITS = (
    "no limits set: --max-cost USD, --max-tokens N, --max-time SECONDS (this session), or "
    "[limits.session] / [limits.run] in config.toml (docs/run-control.md, Budgets)"
)


def budget_block(budget: Budget | None) -> Block:
    """The ``/budget`` listing: each scope and kind, used of its limit (or ``no limit``)."""
    if budget is None:
        return Block("info", NO_LIMITS)
    rows = [f"{term}\t{what}" for term, what in budget.report()]
    head = "Budget (used of the limit; time: what runs took, a pause excepted):"
    return Block("listing", "\n".join([head, *rows]))


def warning_block(event: ev.BudgetWarning) -> Block:
    return Block("warning", f"budget: {sanitize(warning_text(event))}")


def stopped_block(event: ev.RunEnd) -> Block:
    """A run that ended at a limit: which. What came back to the editor is said once, by the
    ``input_restored`` line that follows (it was said twice, in two wordings)."""
    return Block("warning", f"⏹ stopped at a budget limit: {sanitize(str(event.budget))} · /budget")
