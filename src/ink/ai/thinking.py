"""Thinking levels as each protocol's request fields, mapped here in ``ai`` as pi-ai maps its reasoning
levels in its own ai package: the composition root passes the level, not the protocol's fields.

- OpenAI Chat Completions: ``reasoning_effort`` (``low``, ``medium``, ``high``);
- OpenAI Responses: ``reasoning: {effort, summary: "auto"}`` (the summary is the reasoning shown dimmed);
- Anthropic Messages: ``thinking: {type: "enabled", budget_tokens}``, a budget per level kept below the
  request's ``max_tokens`` and at least 1024 (the API's minimum): with ``max_tokens`` too small for that,
  thinking stays off and a warning says why.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, TypeAlias

ThinkingLevel: TypeAlias = Literal["off", "low", "medium", "high"]
THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 24576}  # Anthropic budget_tokens per level
MIN_THINKING_BUDGET = 1024

log = logging.getLogger(__name__)


def thinking_options(protocol: str, level: str, max_tokens: int) -> dict[str, Any]:
    """The request fields that ask ``protocol`` (``openai``, ``openai-responses``, ``anthropic``) for
    ``level`` of thinking in a reply of at most ``max_tokens``; ``{}`` for ``off``."""
    if level == "off":
        return {}
    if protocol == "openai":
        return {"reasoning_effort": level}
    if protocol == "openai-responses":
        return {"reasoning": {"effort": level, "summary": "auto"}}
    budget = min(THINKING_BUDGETS[level], max_tokens - 1)  # Anthropic: 1024 <= budget_tokens < max_tokens
    if budget < MIN_THINKING_BUDGET:
        log.warning("thinking needs max_tokens above 1024 (it is %d): thinking stays off", max_tokens)
        return {}
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}
