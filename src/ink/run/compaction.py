"""Keeping the history inside the model's window: compaction.

``Compactor`` is the loop's ``ContextKeeper``. Before each model call it estimates the request's size
(``context.estimate_tokens``); past ``window - reserve`` it compacts: the model summarises the older part
of the history in a separate, tool-less request, and the summary (a ``UserMessage`` of kind ``summary``)
replaces that part, followed by the recent messages kept as they are. ``History.replace`` makes the
session writer record a compaction entry. When the provider answers "context overflow" anyway, the loop
calls ``after_overflow`` and the same happens before its one retry.

If the summary cannot be had (provider error, empty answer, abort), old tool outputs are shortened
instead and the user is told with a warning ``Notice``: the run goes on, with less detail.
``compact`` is also the ``/compact`` command.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import aclosing
from typing import Literal

import msgspec

from ink.agent.abort import AbortSignal, run_unless_aborted
from ink.agent.events import Emit, Notice
from ink.agent.history import History
from ink.ai.errors import BadResponse, ProviderError
from ink.ai.messages import AssistantMessage, Message, UserMessage
from ink.ai.models import ModelInfo
from ink.ai.provider import ModelRequest, Provider
from ink.ai.stream import ReplyDone
from ink.run.context import (
    estimate_tokens,
    find_cut,
    last_replacement_time,
    transcript,
    truncate_tool_outputs,
)
from ink.run.usage import UsageTotals

SUMMARY_SYSTEM = (
    "You write the working memory of a coding agent. The conversation below is being removed from the "
    "agent's context to make room; your summary is all the agent will keep of it. Be factual and dense."
)
SUMMARY_REQUEST = """Summarise this conversation between a user and a coding agent so that the agent can \
continue the work without it. Use these sections:

## Goal
What the user asked for, in their words where short; later changes of direction and constraints.
## Done
What was done and found: files read, created or changed (with paths), commands run and their outcome.
## Decisions
Choices made and why; approaches that failed and must not be retried.
## Current state
Where the work stands right now, errors still open.
## Next steps
What remains to do, in order.
{extra}
<conversation>
{transcript}
</conversation>"""
SUMMARY_HEADER = (
    "[The earlier part of this conversation was compacted to fit the context window. Summary:]\n\n"
)

Notify = Callable[[Notice], None]
MIN_WINDOW = 4_096


class CompactionSettings(msgspec.Struct, frozen=True):
    """When the context is compacted and how much of it is kept."""

    reserve_tokens: int = 16_384  # room left for the reply and for the estimate's error
    keep_recent_tokens: int = 20_000  # recent messages kept word for word
    summary_max_tokens: int = 8_192
    tool_output_chars: int = 2_000  # what a truncated tool output keeps


class CompactionOutcome(msgspec.Struct, frozen=True):
    """``changed``: the history was replaced. ``summarised``: messages folded into the summary (0 when
    it fell back to truncation). ``error``: why summarising failed, when it did."""

    changed: bool
    summarised: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    error: str | None = None


class _SummaryFailed(Exception):
    pass


class Compactor:
    def __init__(
        self,
        provider: Provider,
        model: str,
        info: ModelInfo,
        *,
        notify: Notify | None = None,
        overhead_tokens: int = 0,
        settings: CompactionSettings | None = None,
        usage: UsageTotals | None = None,
    ) -> None:
        """``info``: the model's window (from ``ink.ai.models.lookup`` or the user's settings).
        ``overhead_tokens``: the system prompt and tool specs, counted when no usage is known yet.
        ``notify`` may be set later (the frontend connects it to its event stream)."""
        self.provider = provider
        self.model = model
        self.info = info
        self.notify = notify
        self.overhead_tokens = overhead_tokens
        self.settings = settings or CompactionSettings()
        self.usage = usage
        self._replaced_at = 0.0
        self._learned_window = self.info.context_window
        self._futile_at: int | None = None  # history length when compacting last achieved nothing
        self._emit: Emit | None = None

    @property
    def limit(self) -> int:
        """Requests estimated above this many tokens are compacted first."""
        window = self.window
        return window - min(self.settings.reserve_tokens, window // 4)

    @property
    def window(self) -> int:
        return min(self.info.context_window, self._learned_window)

    def estimate(self, history: History) -> int:
        messages = history.messages
        valid_after = max(self._replaced_at, last_replacement_time(messages))
        return estimate_tokens(messages, self.overhead_tokens, valid_after)

    async def before_model_call(
        self, history: History, signal: AbortSignal, emit: Emit | None = None
    ) -> None:
        """``emit``: where notices go for this call (else ``notify``), for a loop that passes its own."""
        if self.estimate(history) <= self.limit or len(history) == self._futile_at:
            return
        outcome = await self.compact(history, signal, emit=emit)
        # Nothing could be done: do not ask again (and warn again) before the history has changed.
        self._futile_at = None if outcome.changed else len(history)

    async def after_overflow(self, history: History, signal: AbortSignal, emit: Emit | None = None) -> bool:
        """The provider is the authority on the window: a request it refused bounds the window from above
        (this is how an unknown model's smaller window is learnt), then compact."""
        sent = self.estimate(history)
        self._learned_window = max(min(self._learned_window, sent * 9 // 10), MIN_WINDOW)
        outcome = await self.compact(history, signal, emit=emit)
        return outcome.changed

    async def compact(
        self, history: History, signal: AbortSignal, *, instructions: str = "", emit: Emit | None = None
    ) -> CompactionOutcome:
        """Summarise the older part of ``history`` (``instructions``: the user's focus for ``/compact``).

        Falls back to truncating tool outputs when summarising fails; an abort leaves the history as it
        was. Never raises
        a ``ProviderError``; cancellation of the caller propagates (the history is then unchanged).
        """
        self._emit = emit
        try:
            return await self._compact(history, signal, instructions)
        finally:
            self._emit = None

    async def _compact(self, history: History, signal: AbortSignal, instructions: str) -> CompactionOutcome:
        before = self.estimate(history)
        messages = history.messages
        keep = min(self.settings.keep_recent_tokens, self.limit // 4)
        cut = find_cut(messages, keep)
        if cut is None:
            return self._truncate(history, len(messages), before, "there is nothing older to summarise")
        self._notify(f"Compacting the conversation (~{before:,} tokens, window {self.window:,})…")
        try:
            summary = await self._summarise(messages[:cut], signal, instructions)
        except _SummaryFailed as exc:
            if signal.aborted:  # the user stopped it: stopping must not cost the history any detail
                self._notify("Compaction interrupted; the conversation is unchanged.", "warning")
                return CompactionOutcome(False, tokens_before=before, tokens_after=before, error=str(exc))
            return self._truncate(history, cut, before, str(exc))
        current = history.messages
        if len(current) < cut or any(a is not b for a, b in zip(current[:cut], messages[:cut], strict=True)):
            return CompactionOutcome(False, tokens_before=before, tokens_after=before)  # replaced meanwhile
        history.replace(
            [UserMessage(SUMMARY_HEADER + summary, kind="summary"), *history.messages[cut:]], "compaction"
        )
        self._replaced_at = time.time()
        after = self.estimate(history)
        self._notify(f"Compacted {cut} messages into a summary: ~{before:,} -> ~{after:,} tokens.")
        if after > self.limit:
            self._shrink_outputs(history, len(history.messages), quiet=True)
            after = self.estimate(history)
        return CompactionOutcome(True, cut, before, after)

    async def _summarise(self, older: Sequence[Message], signal: AbortSignal, instructions: str) -> str:
        """The model's summary of ``older``. Raises ``_SummaryFailed`` with the reason."""
        budget_tokens = self.window - self.settings.summary_max_tokens - 2_000
        text = transcript(older, max_chars=max(budget_tokens, 1_000) * 3)  # 3, not 4: code is dense
        extra = (
            f"\nThe user asks the summary to focus on: {instructions.strip()}\n"
            if instructions.strip()
            else ""
        )
        request = ModelRequest(
            model=self.model,
            system=SUMMARY_SYSTEM,
            messages=[UserMessage(SUMMARY_REQUEST.format(extra=extra, transcript=text))],
            max_tokens=min(self.settings.summary_max_tokens, self.info.max_output),
        )
        try:
            outcome = await run_unless_aborted(self._collect(request), signal)
        except ProviderError as exc:
            raise _SummaryFailed(f"the summary request failed: {exc}") from exc
        if outcome.aborted or outcome.value is None:
            raise _SummaryFailed("the summary was interrupted")
        reply = outcome.value
        if self.usage is not None:
            self.usage.add(reply.usage, reply.model or self.model)
        summary = reply.text.strip()
        if reply.stop_reason in ("error", "aborted") or not summary:
            raise _SummaryFailed("the model returned no usable summary")
        return summary

    async def _collect(self, request: ModelRequest) -> AssistantMessage:
        async with aclosing(self.provider.stream(request)) as events:  # closes the response on return
            async for event in events:
                if isinstance(event, ReplyDone):
                    return event.message
        raise BadResponse("the stream ended without a complete reply", provider=self.provider.name)

    def _truncate(self, history: History, end: int, before: int, why: str) -> CompactionOutcome:
        """Shorten tool outputs before ``end``, and the recent ones too if that was not enough."""
        removed = self._shrink_outputs(history, end, quiet=False)
        if self.estimate(history) > self.limit:
            removed += self._shrink_outputs(history, len(history), quiet=False)
        after = self.estimate(history)
        if removed:
            self._notify(
                f"Could not summarise the conversation ({why}); shortened old tool outputs instead "
                f"(~{before:,} -> ~{after:,} tokens). Earlier details may be missing.",
                "warning",
            )
        else:
            self._notify(
                f"Could not summarise the conversation ({why}) and found nothing to shorten.", "warning"
            )
        return CompactionOutcome(bool(removed), 0, before, after, error=why)

    def _shrink_outputs(self, history: History, end: int, *, quiet: bool) -> int:
        shortened, removed = truncate_tool_outputs(history.messages, end, self.settings.tool_output_chars)
        if removed:
            history.replace(shortened, "truncation")
            self._replaced_at = time.time()
            if quiet:
                self._notify(f"Also shortened large tool outputs ({removed:,} characters removed).")
        return removed

    def _notify(self, text: str, level: Literal["info", "warning"] = "info") -> None:
        target = self._emit or self.notify
        if target is not None:
            target(Notice(text, level))
