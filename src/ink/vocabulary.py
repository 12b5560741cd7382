"""The words ink's runs are spoken in, each defined once: input modes, take modes, stop reasons and
permission decisions. Every module that names one imports it from here (a ``Literal`` for the type
checker, a tuple of its values for code that checks input), so a value cannot be added in one place
and forgotten in another.

The wire spellings are fixed by docs/design/CONTRACT.md. This module imports nothing of ink: the
configuration, the core and every frontend may depend on it.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

InputMode: TypeAlias = Literal["steer", "follow_up"]
"""How a queued input enters a run (R9-R13)."""
INPUT_MODES: tuple[InputMode, ...] = get_args(InputMode)

TakeMode: TypeAlias = Literal["all", "one-at-a-time"]
"""How many queued inputs of one mode a take removes (R13)."""
TAKE_MODES: tuple[TakeMode, ...] = get_args(TakeMode)

ErrorStop: TypeAlias = Literal["refused", "error"]
"""How a failed run ended: the service itself stopped the reply (a refusal, a content filter), or
something failed (the provider, or ink itself). Both carry the run's one error (``RunError``)."""

Failure: TypeAlias = Literal[ErrorStop, "aborted"]
"""How a run that did not finish its work ended: failed, or aborted (by the user, a redirect, shutdown):
an abort is an outcome, not an error (R18)."""
FAILURES: tuple[Failure, ...] = get_args(Failure)

LoopStop: TypeAlias = Literal["completed", "max_iterations", "budget", Failure]
"""Why the loop returned: its work is done, it reached the batch limit (R28), a budget's limit (R45), or
one of the failures."""

RunStop: TypeAlias = Literal["completed", "aborted", "max_iterations", "budget", "error"]
"""``run_end.stopReason`` on the wire (CONTRACT): a refusal is reported as ``error``, with its text."""
RUN_STOPS: tuple[RunStop, ...] = get_args(RunStop)

Answer: TypeAlias = Literal["allow", "deny", "always"]  # in the order CONTRACT lists them
"""What the user may answer to a permission question."""
ANSWERS: tuple[Answer, ...] = get_args(Answer)
ALLOWING: tuple[Answer, ...] = ("allow", "always")

Decision: TypeAlias = Literal[Answer, "timeout", "cancelled"]
"""How a permission question was closed: the user's answer, no answer in time, or an abort."""
DECISIONS: tuple[Decision, ...] = get_args(Decision)

Verdict: TypeAlias = Literal["allow", "deny", "ask"]
"""What the permission policy, or a pre-tool hook, says of a tool call before it runs."""


def wire_stop(stop: LoopStop) -> RunStop:
    """The ``run_end.stopReason`` of a loop's stop: the wire has no ``refused`` (CONTRACT)."""
    return "error" if stop == "refused" else stop
